"""Rows of results for the tests a repository tracks (those its ledger freezes or froze): stored
by every run, and filled in from the recent runs' packed outcomes when a ledger starts tracking a
test, so the freeze page shows a test's recent outcomes from the day it is frozen."""

import threading
import time
from functools import partial

import pytest

from dashboards.selectors.freeze import freeze_detail
from evidence import results
from evidence.ingest import run_ingest
from evidence.models import Run, TestName, TestResult
from evidence.results import RECENT_RUNS, results_backfill
from ledger.sync import ledger_sync
from tests.concurrency import at_once, races_need_postgresql
from tests.evidence.bodies import evidence, record
from tests.evidence.test_ingest import _received
from tests.evidence.test_ingest import reports_enqueued as reports_enqueued  # a fixture
from tests.ledger.test_sync import PATH, freeze_toml

ROUNDING = "tests/test_pricing.py::test_rounding_boundary"
OTHER = "tests/test_pricing.py::test_other"


def _ingested(repository, n: int, outcomes: dict[str, str]) -> Run:
    body = evidence([record(nodeid, bucket) for nodeid, bucket in outcomes.items()])
    run = _received(body, repository=repository, sha=f"{n:040x}")
    run_ingest(run_id=run.pk)
    return run


def _results(nodeid: str) -> dict[int, str]:
    rows = TestResult.objects.filter(test__nodeid=nodeid).values_list("run_id", "bucket")
    return {run_id: TestResult.Bucket(bucket).label for run_id, bucket in rows}


def test_a_newly_frozen_test_gets_its_results_in_the_recent_runs(
    repository, staff, reports_enqueued
):
    runs = [
        _ingested(repository, n, {ROUNDING: "failed" if n % 3 else "passed", OTHER: "passed"})
        for n in range(RECENT_RUNS + 2)
    ]
    runs.append(_ingested(repository, 99, {OTHER: "passed"}))  # the test did not run
    assert not TestResult.objects.exists()

    ledger_sync(repository=repository, sha="a" * 40, raw=freeze_toml(test=ROUNDING), path=PATH)

    # The latest RECENT_RUNS ready runs, as the freeze page reads them; the oldest two are not.
    recent = runs[-RECENT_RUNS:]
    assert _results(ROUNDING) == {
        run.pk: "failed" if n % 3 else "passed" for n, run in enumerate(runs[:-1]) if run in recent
    }
    assert not _results(OTHER)
    # The freeze page shows them, newest first: the run without the test as "not run".
    page = freeze_detail(user=staff, repository_slug=repository.slug, freeze_id="FRZ-014")
    assert [row["outcome"] for row in page["outcomes"]] == ["not run"] + [
        "failed" if n % 3 else "passed" for n in reversed(range(3, RECENT_RUNS + 2))
    ]
    # From now on each run stores it.
    latest = _ingested(repository, 100, {ROUNDING: "skipped", OTHER: "passed"})
    assert _results(ROUNDING)[latest.pk] == "skipped"


def test_a_ledger_that_tracks_nothing_new_fills_nothing_in(repository, reports_enqueued):
    first = _ingested(repository, 1, {ROUNDING: "passed"})
    ledger_sync(repository=repository, sha="a" * 40, raw=freeze_toml(test=ROUNDING), path=PATH)
    assert _results(ROUNDING) == {first.pk: "passed"}
    TestResult.objects.all().delete()
    # A renewal of the same test: it was tracked already, so no run is read again.
    renewal = freeze_toml(test=ROUNDING, expires="2026-12-20")
    ledger_sync(repository=repository, sha="b" * 40, raw=renewal, path=PATH)
    assert not TestResult.objects.exists()
    # A freeze moved to another test tracks that one.
    moved = freeze_toml(test=OTHER, expires="2026-12-20")
    second = _ingested(repository, 2, {ROUNDING: "passed", OTHER: "failed"})
    ledger_sync(repository=repository, sha="c" * 40, raw=moved, path=PATH)
    assert _results(OTHER) == {second.pk: "failed"}


def test_filling_in_twice_adds_nothing_and_keeps_what_runs_stored(repository, reports_enqueued):
    run = _ingested(repository, 1, {ROUNDING: "failed"})
    assert results_backfill(repository.pk, [ROUNDING]) == 1
    assert results_backfill(repository.pk, [ROUNDING]) == 0
    assert _results(ROUNDING) == {run.pk: "failed"}
    assert TestName.objects.filter(nodeid=ROUNDING).count() == 1


@races_need_postgresql("a ledger sync and an ingest")
@pytest.mark.django_db(transaction=True)
def test_a_test_frozen_while_a_run_is_stored_gets_that_runs_result(
    repository, reports_enqueued, monkeypatch
):
    run = _received(evidence([record(ROUNDING, "failed"), record(OTHER)]), repository=repository)
    stored = threading.Event()
    real_store = results.results_store

    def store_then_linger(run, parsed):
        real_store(run, parsed)
        stored.set()  # the run's results are written, not committed yet
        time.sleep(0.5)

    monkeypatch.setattr(results, "results_store", store_then_linger)

    def freeze_once_stored() -> None:
        assert stored.wait(timeout=30)
        ledger_sync(repository=repository, sha="a" * 40, raw=freeze_toml(test=ROUNDING), path=PATH)

    at_once(partial(run_ingest, run_id=run.pk), freeze_once_stored)

    # The sync waited for the run's commit, then filled its result in.
    assert _results(ROUNDING) == {run.pk: "failed"}
