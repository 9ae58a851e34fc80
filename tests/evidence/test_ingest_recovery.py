"""Runs that fail to parse, or lose their worker, end parsed or rejected: never received for
ever, and never parsed twice."""

import datetime

import pytest
from django.utils import timezone

from evidence import ingest, parsing, results
from evidence.ingest import MAX_INGEST_ATTEMPTS, run_ingest, runs_requeue_received
from evidence.models import Run, RunOutcomes
from tests.evidence.bodies import MIXED, MIXED_BUCKETS
from tests.evidence.test_ingest import _buckets, _received
from tests.evidence.test_ingest import reports_enqueued as reports_enqueued  # a fixture


def _fail_storing(monkeypatch) -> None:
    def store_and_fail(run, rows, **kwargs):
        raise RuntimeError("a fault no retry cures")

    monkeypatch.setattr(results, "results_store", store_and_fail)


def test_a_run_that_keeps_failing_is_rejected_after_the_bounded_attempts(
    db, monkeypatch, reports_enqueued
):
    run = _received(MIXED)
    _fail_storing(monkeypatch)
    for _ in range(MAX_INGEST_ATTEMPTS):
        with pytest.raises(RuntimeError):
            run_ingest(run_id=run.pk)
        assert Run.objects.get(pk=run.pk).status == Run.Status.RECEIVED
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.REJECTED
    assert run.ingest_attempts == MAX_INGEST_ATTEMPTS + 1
    [reason] = run.reasons
    assert reason["message"].startswith("could not be processed")
    assert not RunOutcomes.objects.exists()


def test_any_failure_to_read_rejects_the_run_with_a_reason(db, monkeypatch, reports_enqueued):
    run = _received(MIXED)

    def broken_reader(*args, **kwargs):
        raise ValueError("a reader bug")

    monkeypatch.setattr(parsing, "parse_evidence", broken_reader)
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.REJECTED
    assert run.reasons == [{"path": "$", "message": "could not be read; the error was logged"}]


def test_runs_that_keep_failing_cannot_crowd_lost_runs_out_of_the_sweep(
    db, monkeypatch, reports_enqueued
):
    monkeypatch.setattr(ingest, "REQUEUE_BATCH", 2)
    long_ago = timezone.now() - datetime.timedelta(hours=1)
    failing = [_received(MIXED) for _ in range(3)]
    Run.objects.filter(pk__in=[run.pk for run in failing]).update(
        created_at=long_ago, ingest_attempts=2
    )
    lost = _received(MIXED)
    Run.objects.filter(pk=lost.pk).update(created_at=long_ago + datetime.timedelta(minutes=1))
    monkeypatch.setattr(ingest, "enqueue_ingest", lambda run_id: None)
    assert runs_requeue_received()[0] == lost.pk


# --- a worker killed mid-task: the sweep's copy and the redelivered message -----------------


@pytest.mark.parametrize("first", ["sweep", "redelivery"])
def test_the_sweep_and_a_redelivered_message_parse_a_run_once_in_either_order(
    db, monkeypatch, reports_enqueued, first
):
    """The killed worker's transaction never committed: the run is received, with the
    attempt counted. Whichever copy of the task comes first parses it; the other is a no-op."""
    run = _received(MIXED)
    Run.objects.filter(pk=run.pk).update(
        ingest_attempts=1, created_at=timezone.now() - datetime.timedelta(minutes=5)
    )
    from evidence.tasks import ingest_run

    redelivered = lambda: ingest_run.apply(args=[run.pk], throw=True)  # noqa: E731
    swept = lambda: runs_requeue_received()  # noqa: E731
    steps = [swept, redelivered] if first == "sweep" else [redelivered, swept]
    for step in steps:
        step()
    run.refresh_from_db()
    assert run.status == Run.Status.READY
    assert run.ingest_attempts == 2
    assert _buckets(run) == MIXED_BUCKETS
    assert RunOutcomes.objects.filter(run=run).count() == 1
    assert reports_enqueued == [run.pk]
