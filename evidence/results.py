"""A run's results as they are stored: its packed outcomes (RunOutcomes: every node id and its
bucket in one value, which reports read), and a row of results (TestResult) for each test the
repository tracks by name, the tests its ledger freezes or froze, whose recent outcomes the
freeze page shows.

A row for every test of every run cost more than all the rest of an upload (a repository's first
run interned 200,000 names), and only the freeze page reads one test's result across runs.
"""

import logging
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

from django.db import connection

from evidence.models import Repository, Run, RunOutcomes, TestName, TestResult
from evidence.parsing import ParsedRun
from evidence.run_outcomes import BUCKETS, outcomes_find, outcomes_pack, outcomes_store
from ledger.models import Freeze

logger = logging.getLogger(__name__)

# The runs whose results the freeze page shows, and so those a newly tracked test's results
# are filled in for.
RECENT_RUNS = 20
# Bound parameters per statement (older SQLite builds allow a few hundred).
_CHUNK = 500


def results_store(run: Run, parsed: ParsedRun) -> None:
    """Store a run's packed outcomes and the results of the tests its repository tracks, in the
    transaction that marks the run ready."""
    outcomes_store(run, outcomes_pack(parsed.outcomes))
    tracked = tracked_nodeids(run.repository_id, lock=True)
    rows = [parsed.row(nodeid) for nodeid in sorted(tracked) if nodeid in parsed.outcomes]
    if not rows:
        return
    names = _interned(run.repository_id, [row[0] for row in rows])
    TestResult.objects.bulk_create(
        (
            TestResult(
                run_id=run.pk,
                test_id=names[nodeid],
                bucket=bucket,
                duration=duration,
                signature=signature,
                freeze=frozen_by,
            )
            for nodeid, bucket, duration, signature, frozen_by in rows
        ),
        batch_size=_CHUNK,
    )


def tracked_nodeids(repository_id: int, *, lock: bool = False) -> set[str]:
    """The node ids the repository tracks test by test: those of its freezes, current or not.

    ``lock``: first take the repository's row in share mode (PostgreSQL), as every ingest
    does. A ledger sync holds it exclusively, so a sync that starts tracking a test waits for
    the runs being stored and then fills in their results, and a run stored after the sync
    sees its freezes. (SQLite has one writer at a time.)
    """
    if lock and connection.vendor == "postgresql":
        table = connection.ops.quote_name(Repository._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR SHARE", [repository_id])  # noqa: S608
    nodeids = Freeze.objects.filter(repository_id=repository_id).values_list("nodeid", flat=True)
    return set(nodeids) - {""}


def results_backfill(repository_id: int, nodeids: Collection[str]) -> int:
    """Fill in the results of newly tracked tests in the repository's recent ready runs, from
    their packed outcomes; returns the number of results added. Idempotent.

    Runs without packed outcomes are older than them and hold a result for every test.
    """
    runs = list(
        Run.objects.filter(repository_id=repository_id, status=Run.Status.READY)
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)[:RECENT_RUNS]
    )
    names: dict[str, int] | None = None
    added = 0
    for run_id in runs:
        # One at a time: each holds every node id of its run.
        packed = RunOutcomes.objects.filter(run_id=run_id).values_list("packed", flat=True).first()
        if packed is None:
            continue
        try:
            found = outcomes_find(bytes(packed), nodeids)
        except ValueError:
            logger.warning("run %s: packed outcomes unreadable; results not filled in", run_id)
            continue
        if not found:
            continue
        if names is None:
            names = _interned(repository_id, nodeids)
        # A run stored while the test was tracked has its result already.
        stored: set[int] = set()
        for chunk in _chunks([names[nodeid] for nodeid in found]):
            rows = TestResult.objects.filter(run_id=run_id, test_id__in=chunk)
            stored.update(rows.values_list("test_id", flat=True))
        missing = [
            TestResult(run_id=run_id, test_id=names[nodeid], bucket=BUCKETS[bucket])
            for nodeid, bucket in sorted(found.items())
            if names[nodeid] not in stored
        ]
        TestResult.objects.bulk_create(missing, batch_size=_CHUNK)
        added += len(missing)
    return added


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _interned(repository_id: int, nodeids: Iterable[str]) -> dict[str, int]:
    """The test name id of each node id, interning those the repository has not named yet.

    In digest order: two ingests interning the same names lock them in one order. A name a
    concurrent ingest is interning is waited for (ON CONFLICT), then read.
    """
    by_digest = {TestName.digest(nodeid): nodeid for nodeid in nodeids}
    digests = sorted(by_digest)
    TestName.objects.bulk_create(
        (
            TestName(repository_id=repository_id, nodeid=by_digest[digest], nodeid_sha256=digest)
            for digest in digests
        ),
        batch_size=_CHUNK,
        ignore_conflicts=True,
    )
    found: dict[str, int] = {}
    for chunk in _chunks(digests):
        rows = TestName.objects.filter(
            repository_id=repository_id, nodeid_sha256__in=chunk
        ).values_list("nodeid_sha256", "pk")
        found.update((by_digest[digest], pk) for digest, pk in rows)
    return found
