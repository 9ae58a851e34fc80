import datetime
import gzip
import hashlib
import threading
import time
from functools import partial

import pytest
from django.db import OperationalError
from django.utils import timezone

from evidence import ingest, parsing, results
from evidence.ingest import run_ingest, runs_requeue_received
from evidence.models import Run, RunOutcomes, TestName, TestResult
from evidence.tasks import ingest_run, sweep_received_runs
from tests.concurrency import at_once, races_need_postgresql
from tests.evidence.bodies import JUNIT, JUNIT_BUCKETS, MIXED, MIXED_BUCKETS, evidence, record
from tests.evidence.stored_runs import stored_outcomes as _buckets
from tests.factories import FreezeFactory, RepositoryFactory, RunFactory


def _received(body: bytes, **fields) -> Run:
    """A run as the upload endpoint stores it, waiting to be parsed."""
    return RunFactory(
        raw=gzip.compress(body),
        raw_size=len(body),
        content_sha256=hashlib.sha256(body).hexdigest(),
        **fields,
    )


def _tracked_buckets(run: Run) -> dict[str, str]:
    """The run's rows of results: those of the tests its repository tracks."""
    rows = TestResult.objects.filter(run=run).values_list("test__nodeid", "bucket")
    return {nodeid: TestResult.Bucket(bucket).label for nodeid, bucket in rows}


def _track(repository, *nodeids: str) -> None:
    """Freeze ``nodeids`` in the repository's ledger: its runs store their results."""
    for nodeid in nodeids:
        FreezeFactory(repository=repository, nodeid=nodeid)


@pytest.fixture
def reports_enqueued(monkeypatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(
        "evidence.reports.enqueue_reports_for_run", lambda run, **_: calls.append(run.pk)
    )
    return calls


def test_ingest_stores_one_result_per_node_id_and_marks_the_run_ready(db, reports_enqueued):
    run = _received(MIXED)
    returned = run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert returned.pk == run.pk
    assert run.status == Run.Status.READY
    assert _buckets(run) == MIXED_BUCKETS
    assert (run.passed, run.failed, run.skipped, run.xfail, run.exit_code) == (2, 1, 1, 1, 1)
    assert run.meta == {"python": "3.11.7", "branch": "main"}
    assert run.reasons == []
    assert run.parsed_at is not None
    assert reports_enqueued == [run.pk]


def test_ingest_reads_junit(db, reports_enqueued):
    repository = RepositoryFactory()
    _track(repository, "tests/test_cart.py::TestTax::test_vat")
    run = _received(JUNIT, content_type="application/xml", repository=repository)
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.READY
    assert _buckets(run) == JUNIT_BUCKETS
    vat = TestResult.objects.get(run=run, test__nodeid="tests/test_cart.py::TestTax::test_vat")
    assert vat.duration == pytest.approx(0.3)


def test_only_the_tests_a_ledger_freezes_or_froze_get_rows_of_results(db, reports_enqueued):
    repository = RepositoryFactory()
    _track(repository, "tests/test_net.py::test_fetch", "tests/test_gone.py::test_old")
    FreezeFactory(repository=repository, nodeid="tests/test_cart.py::test_total", current=False)
    run = _received(MIXED, repository=repository)
    untracked = _received(MIXED)
    for each in (run, untracked):
        run_ingest(run_id=each.pk)

    # Every outcome is in the packed outcomes; rows only for the tracked tests the run ran.
    assert _buckets(run) == _buckets(untracked) == MIXED_BUCKETS
    assert _tracked_buckets(run) == {
        "tests/test_net.py::test_fetch": "skipped",
        "tests/test_cart.py::test_total": "passed",
    }
    assert set(TestName.objects.values_list("nodeid", flat=True)) == set(_tracked_buckets(run))
    assert not TestResult.objects.filter(run=untracked).exists()


def test_tracked_names_are_interned_once_per_repository(db, reports_enqueued):
    repository = RepositoryFactory()
    elsewhere = RepositoryFactory()
    for each in (repository, elsewhere):
        _track(each, "tests/test_cart.py::test_total")
    runs = [_received(MIXED, repository=repository, sha=f"{n:040x}") for n in range(2)]
    runs.append(_received(MIXED, repository=elsewhere))
    for run in runs:
        run_ingest(run_id=run.pk)

    names = TestName.objects.filter(nodeid="tests/test_cart.py::test_total")
    assert sorted(name.repository_id for name in names) == sorted([repository.pk, elsewhere.pk])
    total = names.get(repository=repository)
    assert total.nodeid_sha256 == TestName.digest(total.nodeid)
    assert total.results.count() == 2


def test_unusual_node_ids_round_trip_with_the_models_digest(db, reports_enqueued):
    # The packed outcomes and the rows of tracked tests must keep such names intact.
    nodeids = [
        "tests/test_ümlaut.py::test_naïve[日本語-🙂]",
        "tests/test_paths.py::test_windows[C:\\temp\\x]",
        "tests/test_ws.py::test_tab[a\tb]",
        "tests/test_ws.py::test_newline[a\nb]",
        "tests/test_quote.py::test_q['\"]",
    ]
    repository = RepositoryFactory()
    _track(repository, *nodeids)
    run = _received(evidence([record(nodeid) for nodeid in nodeids]), repository=repository)
    run_ingest(run_id=run.pk)
    assert _buckets(run) == dict.fromkeys(nodeids, "passed")
    stored = {name.nodeid: name.nodeid_sha256 for name in TestName.objects.all()}
    assert stored == {nodeid: TestName.digest(nodeid) for nodeid in nodeids}
    # A later run finds the same names again instead of interning them twice.
    again = _received(
        evidence([record(nodeid, "failed") for nodeid in nodeids]), repository=repository
    )
    run_ingest(run_id=again.pk)
    assert TestName.objects.count() == len(nodeids)
    assert _tracked_buckets(again) == dict.fromkeys(nodeids, "failed")


def test_many_records_and_many_tracked_tests_are_stored_in_batches(db, reports_enqueued):
    nodeids = [f"tests/test_bulk.py::test_case[{n}]" for n in range(1_234)]
    repository = RepositoryFactory()
    _track(repository, *nodeids[::2])
    run = _received(evidence([record(nodeid) for nodeid in nodeids]), repository=repository)
    run_ingest(run_id=run.pk)
    assert _buckets(run) == dict.fromkeys(nodeids, "passed")
    assert _tracked_buckets(run) == dict.fromkeys(nodeids[::2], "passed")


def test_ill_typed_extras_are_dropped_not_stored(db, reports_enqueued):
    body = evidence(
        [
            record("t.py::test_a", duration="slow", signature=12, freeze=["FRZ-1"]),
            record("t.py::test_b", duration=True, signature="s" * 100, freeze="F" * 150),
            record("t.py::test_c", duration=10**400),
            record("t.py::test_d", duration="INF", signature="sig\x00nul"),
        ]
    )
    repository = RepositoryFactory()
    _track(repository, *(f"t.py::test_{name}" for name in "abcd"))
    # 1e999 reads as an infinite float, which no column should hold.
    run = _received(body.replace(b'"INF"', b"1e999"), repository=repository)
    run_ingest(run_id=run.pk)
    assert Run.objects.get().status == Run.Status.READY
    results = {r.test.nodeid: r for r in TestResult.objects.select_related("test")}
    a, b, c, d = (results[f"t.py::test_{name}"] for name in "abcd")
    assert (a.duration, a.signature, a.freeze) == (None, "", "")
    assert b.duration is None
    assert (len(b.signature), len(b.freeze)) == (64, 100)
    assert c.duration is None
    assert (d.duration, d.signature) == (None, "")


def test_rejected_run_keeps_its_reasons_and_stores_no_results(db, reports_enqueued):
    repository = RepositoryFactory()
    _track(repository, "t.py::test_ok")
    body = evidence([record("t.py::test_ok"), record("t.py::test_bad", "exploded")])
    run = _received(body, repository=repository)
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.REJECTED
    assert run.reasons == [
        {
            "path": "$.records[1].outcome",
            "message": "expected passed, failed or skipped, got 'exploded'",
        }
    ]
    assert run.parsed_at is not None
    assert (run.passed, run.exit_code) == (0, None)
    assert not RunOutcomes.objects.exists()
    assert not TestResult.objects.exists()
    assert not TestName.objects.exists()
    assert reports_enqueued == []


def test_reasons_quote_hostile_values_briefly(db, reports_enqueued):
    run = _received(evidence([record("t.py::test_x", "x" * 100_000)]))
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.REJECTED
    assert len(run.reasons[0]["message"]) <= ingest.MAX_REASON_CHARS


def test_oversized_meta_is_rejected(db, reports_enqueued):
    run = _received(evidence([], meta={"notes": "n" * (parsing.MAX_META_BYTES + 1)}))
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.REJECTED
    assert run.reasons[0]["path"] == "$.meta"


def test_upload_over_the_decompressed_limit_is_rejected_at_parse(db, settings, reports_enqueued):
    # The endpoint checks the limit too; this covers a limit lowered after the upload.
    settings.FREEZEDEBT_MAX_DECOMPRESSED_BYTES = 64
    run = _received(MIXED)
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.REJECTED
    assert "limit" in run.reasons[0]["message"]


def test_a_second_delivery_does_nothing(db, reports_enqueued):
    run = _received(MIXED)
    ingest_run.delay(run.pk)
    run.refresh_from_db()
    parsed_at = run.parsed_at

    ingest_run.delay(run.pk)
    assert run_ingest(run_id=run.pk) is None
    run.refresh_from_db()
    assert run.parsed_at == parsed_at
    assert RunOutcomes.objects.filter(run=run).count() == 1
    assert reports_enqueued == [run.pk]


def test_a_rejected_run_is_not_parsed_again(db, reports_enqueued):
    run = _received(b"not json")
    run_ingest(run_id=run.pk)
    assert run_ingest(run_id=run.pk) is None
    assert Run.objects.get().status == Run.Status.REJECTED


def test_a_run_that_is_gone_is_skipped_quietly(db):
    assert run_ingest(run_id=987654) is None
    ingest_run.delay(987654)  # no error


def test_a_failure_midway_leaves_the_run_received_and_a_retry_finishes_it(
    db, monkeypatch, reports_enqueued
):
    repository = RepositoryFactory()
    _track(repository, "tests/test_cart.py::test_total")
    run = _received(MIXED, repository=repository)
    real_store = results.results_store

    def store_then_die(run, parsed):
        real_store(run, parsed)
        raise RuntimeError("worker killed")

    monkeypatch.setattr(results, "results_store", store_then_die)
    with pytest.raises(RuntimeError):
        run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.RECEIVED
    assert not RunOutcomes.objects.exists()
    assert not TestResult.objects.exists()

    monkeypatch.setattr(results, "results_store", real_store)
    run_ingest(run_id=run.pk)
    assert _buckets(run) == MIXED_BUCKETS
    assert _tracked_buckets(run) == {"tests/test_cart.py::test_total": "passed"}


def test_the_task_retries_a_lost_database_connection(db, monkeypatch, reports_enqueued):
    run = _received(MIXED)
    real_ingest = ingest.run_ingest
    calls = []

    def flaky(*, run_id):
        calls.append(run_id)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real_ingest(run_id=run_id)

    monkeypatch.setattr("evidence.tasks.run_ingest", flaky)
    # throw=False: run in-process, an eager retry is carried out instead of raised.
    ingest_run.apply(args=[run.pk], throw=False)
    assert calls == [run.pk, run.pk]
    assert Run.objects.get(pk=run.pk).status == Run.Status.READY


def test_the_task_does_not_retry_other_errors(db, monkeypatch):
    run = _received(MIXED)
    calls = []

    def broken(*, run_id):
        calls.append(run_id)
        raise ValueError("a bug")

    monkeypatch.setattr("evidence.tasks.run_ingest", broken)
    result = ingest_run.apply(args=[run.pk], throw=False)
    assert isinstance(result.result, ValueError)
    assert calls == [run.pk]


def test_the_sweep_enqueues_runs_left_received(db, reports_enqueued):
    now = timezone.now()
    stale = _received(MIXED)
    fresh = _received(MIXED)
    Run.objects.filter(pk=stale.pk).update(created_at=now - datetime.timedelta(minutes=10))
    Run.objects.filter(pk=fresh.pk).update(created_at=now - datetime.timedelta(seconds=30))

    assert sweep_received_runs.delay().get() == 1

    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert stale.status == Run.Status.READY
    assert fresh.status == Run.Status.RECEIVED
    assert runs_requeue_received(now=now) == []


def test_the_sweep_leaves_parsed_runs_alone(db, reports_enqueued):
    run = _received(MIXED)
    run_ingest(run_id=run.pk)
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - datetime.timedelta(hours=1))
    assert runs_requeue_received() == []


@races_need_postgresql("two runs interning the same names")
@pytest.mark.django_db(transaction=True)
def test_concurrent_runs_interning_the_same_names_store_all_their_results(reports_enqueued):
    repository = RepositoryFactory()
    shared = [f"tests/test_race.py::test_case[{n}]" for n in range(600)]
    own = [f"tests/test_own.py::test_{n}" for n in range(2)]
    _track(repository, *shared, *own)
    runs = [
        _received(
            evidence([record(nodeid) for nodeid in [*shared, own[n]]]),
            repository=repository,
            sha=f"{n:040x}",
        )
        for n in range(2)
    ]
    at_once(*[partial(run_ingest, run_id=run.pk) for run in runs])

    assert TestName.objects.filter(repository=repository).count() == len(shared) + 2
    for run in runs:
        run.refresh_from_db()
        assert run.status == Run.Status.READY
        assert TestResult.objects.filter(run=run).count() == len(shared) + 1


@races_need_postgresql("a deletion and an ingest")
@pytest.mark.django_db(transaction=True)
def test_deleting_a_run_while_it_is_ingested_leaves_no_results_behind(
    reports_enqueued, monkeypatch
):
    nodeids = [f"tests/test_bulk.py::test_{n}" for n in range(3_000)]
    repository = RepositoryFactory()
    _track(repository, *nodeids[:300])
    run = _received(evidence([record(nodeid) for nodeid in nodeids]), repository=repository)
    stored = threading.Event()
    real_store = results.results_store

    def store_then_linger(run, parsed):
        real_store(run, parsed)
        stored.set()  # the results are written, not committed yet
        time.sleep(0.5)

    monkeypatch.setattr(results, "results_store", store_then_linger)

    def delete_once_stored() -> None:
        assert stored.wait(timeout=30)
        Run.objects.get(pk=run.pk).delete()

    at_once(partial(run_ingest, run_id=run.pk), delete_once_stored)

    assert not Run.objects.filter(pk=run.pk).exists()
    assert not RunOutcomes.objects.filter(run_id=run.pk).exists()
    assert not TestResult.objects.filter(run_id=run.pk).exists()
