"""A run's packed outcomes: written by the ingest with the results of its tracked tests, read by
reports, and never trusted when they disagree with the run (the report reads the upload then)."""

import datetime
import gzip
import hashlib
import threading
import zlib

import pytest
import time_machine
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from evidence.ingest import run_ingest
from evidence.models import Run, RunOutcomes, TestName, TestResult
from evidence.reports import report_compute
from evidence.run_outcomes import outcomes_find, outcomes_pack, outcomes_unpack
from tests.evidence.bodies import MIXED, MIXED_BUCKETS, evidence, record
from tests.factories import FreezeFactory, PatchFactory, RepositoryFactory, RunFactory

NOON = datetime.datetime(2026, 11, 30, 12, tzinfo=datetime.UTC)
BASE_SHA, HEAD_SHA = "b" * 40, "e" * 40
UNUSUAL = [
    "tests/test_ümlaut.py::test_naïve[日本語-🙂]",
    "tests/test_ws.py::test_newline[a\nb]",
    "tests/test_ws.py::test_tab[a\tb]",
    "tests/test_quote.py::test_q['\"]",
    "tests/test_sp.py::test_space[freezedebt-outcomes/1 1 0 0 0]",
]


def _received(body: bytes, **fields) -> Run:
    return RunFactory(
        raw=gzip.compress(body),
        raw_size=len(body),
        content_sha256=hashlib.sha256(body).hexdigest(),
        **fields,
    )


@pytest.fixture(autouse=True)
def _no_reports(monkeypatch):
    monkeypatch.setattr("evidence.reports.enqueue_reports_for_run", lambda run, **_: None)


@pytest.mark.parametrize(
    "outcomes",
    [
        {},
        {"t.py::a": "skipped"},
        dict.fromkeys(UNUSUAL, "passed"),
        dict(zip(UNUSUAL, ["xfail", "failed", "passed", "skipped", "failed"], strict=True)),
    ],
)
def test_outcomes_round_trip(outcomes):
    unpacked, counts = outcomes_unpack(outcomes_pack(outcomes))
    assert unpacked == outcomes
    assert counts == {
        name: list(outcomes.values()).count(name)
        for name in ("passed", "failed", "skipped", "xfail")
    }


@pytest.mark.parametrize(
    "packed",
    [
        b"not zlib at all",
        zlib.compress(b"another-format/1 1 0 0 0\nt.py::a"),
        zlib.compress(b"freezedebt-outcomes/1 2 0 0 0\nt.py::a"),
        zlib.compress(b"freezedebt-outcomes/1 1 1 0 0\nt.py::a\0t.py::a"),
        zlib.compress(b"freezedebt-outcomes/1 1 0 0\nt.py::a"),
        zlib.compress(b"freezedebt-outcomes/1 1 0 0 0\n\xff"),
    ],
)
def test_packed_outcomes_that_are_not_such_are_refused(packed):
    with pytest.raises(ValueError):
        outcomes_unpack(packed)


OUTCOMES = dict(zip(UNUSUAL, ["xfail", "failed", "passed", "skipped", "failed"], strict=True))


@pytest.mark.parametrize(
    "outcomes",
    [
        {},
        {"t.py::a": "skipped"},
        {"t.py::a": "passed", "t.py::ab": "failed", "t.py::b": "skipped"},
        OUTCOMES,
        {**OUTCOMES, "t.py::last": "xfail"},
    ],
)
def test_finding_node_ids_in_packed_outcomes_agrees_with_unpacking_them(outcomes):
    packed = outcomes_pack(outcomes)
    asked = [*outcomes, "t.py::", "t.py::a\0t.py::ab", "", "nope", "a", "t.py::ab", "ab"]
    assert outcomes_find(packed, asked) == {
        nodeid: bucket for nodeid, bucket in outcomes_unpack(packed)[0].items() if nodeid in asked
    }


def test_ingest_stores_the_outcomes_of_its_results(db):
    repository = RepositoryFactory()
    tracked = ["tests/test_cart.py::test_discount", "tests/test_net.py::test_fetch"]
    for nodeid in tracked:
        FreezeFactory(repository=repository, nodeid=nodeid)
    run = _received(MIXED, repository=repository)
    run_ingest(run_id=run.pk)
    outcomes, _ = outcomes_unpack(bytes(RunOutcomes.objects.get(run=run).packed))
    assert outcomes == MIXED_BUCKETS
    rows = TestResult.objects.filter(run=run).values_list("test__nodeid", "bucket")
    assert {nodeid: TestResult.Bucket(bucket).label for nodeid, bucket in rows} == {
        nodeid: outcomes[nodeid] for nodeid in tracked
    }


def test_unusual_node_ids_keep_their_outcomes(db):
    run = _received(evidence([record(nodeid, "failed") for nodeid in UNUSUAL]))
    run_ingest(run_id=run.pk)
    outcomes, _ = outcomes_unpack(bytes(RunOutcomes.objects.get(run=run).packed))
    assert outcomes == dict.fromkeys(UNUSUAL, "failed")


def test_a_rejected_run_has_no_outcomes(db):
    run = _received(b"{not json")
    run_ingest(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.REJECTED
    assert not RunOutcomes.objects.exists()


@pytest.fixture
def patch_with_runs(db):
    repository = RepositoryFactory()
    base = {f"tests/test_a.py::test_{n}": "passed" for n in range(20)}
    head = {**base, "tests/test_a.py::test_3": "skipped", "tests/test_b.py::test_new": "passed"}
    del head["tests/test_a.py::test_7"]
    runs = []
    for sha, run_outcomes, exit_status in ((BASE_SHA, base, 0), (HEAD_SHA, head, 1)):
        records = [record(nodeid, bucket) for nodeid, bucket in run_outcomes.items()]
        run = _received(evidence(records, exit=exit_status), repository=repository, sha=sha)
        run_ingest(run_id=run.pk)
        runs.append(run)
    patch = PatchFactory(repository=repository, base_sha=BASE_SHA, head_sha=HEAD_SHA)
    return patch, runs, [base, head]


def _report_body(patch):
    with time_machine.travel(NOON, tick=False):
        return report_compute(patch_id=patch.pk).body


def test_the_report_reads_the_packed_outcomes_and_equals_the_one_from_the_upload(
    patch_with_runs,
):
    patch = patch_with_runs[0]
    with CaptureQueriesContext(connection) as queries:
        from_packed = _report_body(patch)
    assert from_packed["figures"]["head"]["skipped"] == 1
    assert not [q for q in queries.captured_queries if '"evidence_run"."raw"' in q["sql"]]
    RunOutcomes.objects.all().delete()
    with CaptureQueriesContext(connection) as queries:
        from_upload = _report_body(patch)
    assert from_upload == from_packed
    assert len([q for q in queries.captured_queries if '"evidence_run"."raw"' in q["sql"]]) == 2


def test_packed_outcomes_that_disagree_with_the_run_are_not_used(patch_with_runs):
    patch, runs, outcomes = patch_with_runs
    from_packed = _report_body(patch)
    # The base's outcomes with one test moved to another bucket: the counts no longer match.
    wrong = {**outcomes[0], "tests/test_a.py::test_0": "failed"}
    RunOutcomes.objects.filter(run=runs[0]).update(packed=outcomes_pack(wrong))
    RunOutcomes.objects.filter(run=runs[1]).update(packed=b"garbage")
    assert _report_body(patch) == from_packed


@pytest.mark.django_db(transaction=True)
def test_names_interned_meanwhile_by_another_run_still_get_their_results():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time")
    import psycopg

    repository = RepositoryFactory()
    known = [f"tests/test_k.py::test_{n}" for n in range(5)]
    added = [f"tests/test_n.py::test_{n}" for n in range(3)]
    for nodeid in known:
        TestName.objects.create(repository=repository, nodeid=nodeid)
    for nodeid in known + added:
        FreezeFactory(repository=repository, nodeid=nodeid)
    run = _received(evidence([record(nodeid) for nodeid in known + added]), repository=repository)
    # Another transaction interns one of the added names and commits only while this ingest
    # waits on it (its ON CONFLICT).
    params = connection.get_connection_params()
    other = psycopg.connect(
        host=params.get("host"), port=params.get("port"), user=params.get("user"),
        password=params.get("password"), dbname=params.get("dbname"),
    )  # fmt: skip
    try:
        other.execute(
            "INSERT INTO evidence_testname (repository_id, nodeid, nodeid_sha256) "
            "VALUES (%s, %s, %s)",
            [repository.pk, added[1], TestName.digest(added[1])],
        )
        timer = threading.Timer(1.0, other.commit)
        timer.start()
        with transaction.atomic():
            run_ingest(run_id=run.pk)
        timer.join()
    finally:
        other.close()
    run.refresh_from_db()
    assert run.status == Run.Status.READY
    stored = TestResult.objects.filter(run=run).values_list("test__nodeid", flat=True)
    assert sorted(stored) == sorted(known + added)
    assert TestName.objects.filter(repository=repository).count() == len(known + added)
