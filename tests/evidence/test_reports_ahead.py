"""Reports computed by the ingest of the run that completes them, while its results are stored."""

import gzip
import hashlib
from functools import partial

import pytest
from django.utils import timezone

from evidence import reports
from evidence.ingest import run_ingest
from evidence.models import Report, Run, RunOutcomes
from evidence.reports import report_compute, reports_ahead, store_reports_ahead
from tests.concurrency import at_once, races_need_postgresql
from tests.evidence.bodies import evidence, record
from tests.factories import PatchFactory, RepositoryFactory, RunFactory

BASE_SHA, HEAD_SHA = "b" * 40, "e" * 40
BASE = evidence(
    [
        record("tests/test_pricing.py::test_half_even"),
        record("tests/test_pricing.py::test_rounding_boundary"),
        record("tests/test_net.py::test_fetch", "skipped"),
    ]
)
HEAD = evidence(
    [
        record("tests/test_pricing.py::test_half_even"),
        record("tests/test_pricing.py::test_half_up"),
        record("tests/test_pricing.py::test_rounding_boundary", "skipped"),
        record("tests/test_net.py::test_fetch", "skipped"),
    ]
)

pytestmark = pytest.mark.usefixtures("frozen_today")


@pytest.fixture
def enqueued(monkeypatch) -> list[int]:
    """The patches whose report is left to the report task (not computed here)."""
    calls: list[int] = []
    monkeypatch.setattr(reports, "enqueue_report", calls.append)
    return calls


def _ingested(repository, sha: str, body: bytes, **fields) -> Run:
    run = RunFactory(
        repository=repository,
        sha=sha,
        raw=gzip.compress(body),
        raw_size=len(body),
        content_sha256=hashlib.sha256(body).hexdigest(),
        **fields,
    )
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.READY
    return run


def _patch(repository, **fields):
    changed = [{"status": "M", "path": "src/pricing/rounding.py"}]
    return PatchFactory(
        repository=repository, base_sha=BASE_SHA, head_sha=HEAD_SHA, changed=changed, **fields
    )


def _body_now(patch) -> dict:
    """The body the report task computes from what is stored."""
    return report_compute(patch_id=patch.pk).body


def test_the_run_completing_a_patch_stores_its_report_itself(repository, enqueued):
    _ingested(repository, BASE_SHA, BASE)
    patch = _patch(repository)
    enqueued.clear()

    _ingested(repository, HEAD_SHA, HEAD)

    assert enqueued == []
    stored = Report.objects.get(patch=patch)
    assert stored.status == "ready"
    assert "unaccounted-skip" in [problem["code"] for problem in stored.body["problems"]]
    # Exactly what the report task computes from the stored runs.
    assert stored.body == _body_now(patch)


def test_a_pending_report_is_stored_too_and_completed_by_the_other_run(repository, enqueued):
    patch = _patch(repository)
    _ingested(repository, HEAD_SHA, HEAD)
    assert Report.objects.get(patch=patch).status == "pending"

    _ingested(repository, BASE_SHA, BASE)

    assert enqueued == []
    stored = Report.objects.get(patch=patch)
    assert stored.status == "ready"
    assert stored.body == _body_now(patch)


def test_patches_of_other_labels_are_neither_computed_nor_enqueued(repository, enqueued):
    _ingested(repository, BASE_SHA, BASE)
    other = _patch(repository, label="py312")
    _ingested(repository, HEAD_SHA, HEAD)
    assert not Report.objects.filter(patch=other).exists()
    assert enqueued == []


def test_beyond_the_limit_the_report_task_computes_them(repository, enqueued, monkeypatch):
    monkeypatch.setattr(reports, "REPORTS_AHEAD", 2)
    _ingested(repository, BASE_SHA, BASE)
    patches = [_patch(repository, ref=f"PR-{n}") for n in range(3)]
    enqueued.clear()

    _ingested(repository, HEAD_SHA, HEAD)

    assert set(Report.objects.values_list("patch_id", flat=True)) == {p.pk for p in patches[:2]}
    assert enqueued == [patches[2].pk]


def test_an_earlier_attempt_computes_nothing(repository, enqueued):
    _ingested(repository, BASE_SHA, BASE)
    patch = _patch(repository)
    # Attempt 2 was uploaded and waits for its parse: attempt 1 is not what reports read.
    RunFactory(repository=repository, sha=HEAD_SHA, attempt=2)
    enqueued.clear()

    _ingested(repository, HEAD_SHA, HEAD, attempt=1)

    assert not Report.objects.filter(patch=patch).exists()
    assert enqueued == [patch.pk]


def test_a_report_whose_runs_changed_meanwhile_is_left_to_the_task(repository, enqueued):
    base = _ingested(repository, BASE_SHA, BASE)
    patch = _patch(repository)
    head = RunFactory(
        repository=repository,
        sha=HEAD_SHA,
        status=Run.Status.READY,
        exit_code=0,
        meta={},
        parsed_at=timezone.now(),
    )
    ahead = reports_ahead(head, {"tests/test_pricing.py::test_half_even": "passed"})
    assert [item.run_ids for item in ahead] == [(base.pk, head.pk)]
    # While the head's results were stored, another attempt of the base became ready.
    _ingested(repository, BASE_SHA, BASE, attempt=2)

    assert store_reports_ahead((item, item.compute()) for item in ahead) == set()
    assert not Report.objects.filter(patch=patch, status="ready").exists()


def test_unusable_packed_outcomes_of_the_other_run_leave_it_to_the_task(repository, enqueued):
    base = _ingested(repository, BASE_SHA, BASE)
    RunOutcomes.objects.filter(run=base).update(packed=b"not packed outcomes")
    patch = _patch(repository)
    enqueued.clear()

    _ingested(repository, HEAD_SHA, HEAD)

    assert not Report.objects.filter(patch=patch).exists()
    assert enqueued == [patch.pk]


def test_a_failure_computing_it_leaves_the_run_stored_and_the_report_to_the_task(
    repository, enqueued, monkeypatch, caplog
):
    _ingested(repository, BASE_SHA, BASE)
    patch = _patch(repository)
    enqueued.clear()

    def broken(**_kwargs):
        raise RuntimeError("a bug in the rules")

    monkeypatch.setattr(reports, "compute_report", broken)
    _ingested(repository, HEAD_SHA, HEAD)

    assert not Report.objects.filter(patch=patch).exists()
    assert enqueued == [patch.pk]
    assert "not computed by the ingest" in caplog.text


@races_need_postgresql("a patch's two runs")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("round_", range(3))
def test_base_and_head_ingested_at_once_leave_a_ready_report(round_, monkeypatch):
    # Each ingest computes the report before the other has committed, so each sees the other
    # run missing. Whichever stores last must notice and leave it to the task, which reads both.
    from evidence.reports import report_compute

    tasks: list[int] = []
    monkeypatch.setattr(reports, "enqueue_report", tasks.append)
    repository = RepositoryFactory()
    patch = _patch(repository)
    many = [record(f"tests/test_bulk.py::test_{n}") for n in range(3_000)]
    runs = [
        RunFactory(
            repository=repository,
            sha=sha,
            raw=gzip.compress(body),
            raw_size=len(body),
            content_sha256=hashlib.sha256(body).hexdigest(),
        )
        for sha, body in ((BASE_SHA, evidence(many)), (HEAD_SHA, evidence(many[1:])))
    ]
    at_once(*[partial(run_ingest, run_id=run.pk) for run in runs])

    # What the enqueued task does once both commits are done.
    for patch_id in tasks:
        report_compute(patch_id=patch_id)
    report = Report.objects.get(patch=patch)
    assert report.status == "ready", (tasks, report.body["problems"])
    assert "lost-tests" in [problem["code"] for problem in report.body["problems"]]
