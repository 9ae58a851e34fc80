"""A run's results stored, one row per node id, with the names of its tests interned
(TestName: one row per node id per repository, which every result refers to by key).

On PostgreSQL the rows are COPYed into a temporary table, and set-based statements match them
with the repository's names, intern the missing ones and insert the results; elsewhere (SQLite)
batched inserts do the same.
"""

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from django.db import IntegrityError, connection, transaction

from evidence.models import Run, TestName, TestResult
from evidence.parsing import Row
from evidence.run_outcomes import outcomes_pack, outcomes_store

# From this many rows on, the ingest matches a run's node ids with the repository's names by
# hashing both sets of node ids in the database; below it, it looks each up by its digest.
MATCH_BY_HASHING_FROM = 2000
# Memory for the hash and the sort of one ingest's statements (see _store_postgresql).
STAGING_WORK_MEM = "64MB"
# SQLite allows a few hundred bound parameters per statement in older builds.
_SQLITE_CHUNK = 500


def results_store(
    run: Run, rows: list[Row], *, alongside: Sequence[Callable[[], Any]] = ()
) -> list[Future]:
    """Store the results of a run, and its packed outcomes (RunOutcomes).

    ``alongside``: Python work that needs no database, done while the database stores the
    rows (waiting for it releases the GIL); returns each one's future, done.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-alongside") as pool:
        if connection.vendor == "postgresql":
            return _store_postgresql(run, rows, pool, alongside)
        _store_batched(run, rows)
        return [pool.submit(work) for work in alongside]


def _store_postgresql(
    run: Run, rows: list[Row], pool: ThreadPoolExecutor, alongside: Sequence[Callable[[], Any]]
) -> list[Future]:
    """COPY the rows into a temporary table, then insert the results and intern the names they
    need set-based.

    The results of names the repository already has are inserted first: usually that is all of
    them (the same suite again), and interning nothing then costs nothing. Only when some are
    missing are those names interned and their results inserted.
    """
    quote = connection.ops.quote_name
    names = quote(TestName._meta.db_table)
    results = quote(TestResult._meta.db_table)
    # Named after the run: a test's surrounding transaction may ingest several runs, and the
    # table only goes away at the outermost commit.
    staging = quote(f"freezedebt_ingest_{run.pk}")
    # "freeze" is a keyword in PostgreSQL: the staging table says frozen_by, and the column
    # names of the results table are quoted.
    result_columns = ", ".join(
        quote(name) for name in ("run_id", "test_id", "bucket", "duration", "signature", "freeze")
    )
    # TestName.digest, computed by the database, in the column's bytewise collation
    # (migration 0012): sorted and compared without the locale.
    digest = "(encode(sha256(convert_to(s.nodeid, 'UTF8')), 'hex') COLLATE \"C\")"
    # A large run names most of the repository's tests: hashing the node ids of both sides is
    # cheaper than a digest per node id and a lookup each. A small one looks its few node ids
    # up by digest in the unique constraint's index, not hashing all of the repository's.
    if len(rows) >= MATCH_BY_HASHING_FROM:
        same_name = "t.nodeid = s.nodeid"
    else:
        same_name = f"t.nodeid_sha256 = {digest}"
    # The results of the staged rows whose names the repository has; with skip_stored, only
    # those not stored yet (the names a concurrent run interned first).
    insert_known = (
        f"INSERT INTO {results} ({result_columns}) "  # noqa: S608
        "SELECT %(run)s, t.id, s.bucket, s.duration, s.signature, s.frozen_by "
        f"FROM {staging} s JOIN {names} t ON t.repository_id = %(repository)s AND {same_name} "
        "{skip_stored}ORDER BY t.id"
    )
    skip_stored = (
        f"WHERE NOT EXISTS (SELECT 1 FROM {results} r "  # noqa: S608
        "WHERE r.run_id = %(run)s AND r.test_id = t.id) "
    )
    # The names of the staged rows that the repository lacks, interned, and their results.
    # {on_conflict}: first none (a plain insert, a third faster for a new repository's
    # names); if a concurrent run interned one of them first, again with DO NOTHING.
    insert_added = (
        f"WITH added AS (INSERT INTO {names} (repository_id, nodeid, nodeid_sha256) "  # noqa: S608
        f"SELECT %(repository)s, s.nodeid, {digest} FROM {staging} s "
        f"WHERE NOT EXISTS (SELECT 1 FROM {names} t "
        f"WHERE t.repository_id = %(repository)s AND {same_name}) "
        "ORDER BY 3{on_conflict} "
        "RETURNING id, nodeid) "
        f"INSERT INTO {results} ({result_columns}) "
        "SELECT %(run)s, a.id, s.bucket, s.duration, s.signature, s.frozen_by "
        f"FROM added a JOIN {staging} s ON s.nodeid = a.nodeid ORDER BY a.id"
    )
    params = {"run": run.pk, "repository": run.repository_id}
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE {staging} (nodeid text NOT NULL, bucket smallint NOT NULL, "
            "duration double precision, signature text NOT NULL, frozen_by text NOT NULL) "
            "ON COMMIT DROP"
        )
        # Binary COPY: no text escaping of each value on either side, about twice as fast.
        with cursor.copy(
            f"COPY {staging} (nodeid, bucket, duration, signature, frozen_by) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "int2", "float8", "text", "text"])
            for row in rows:
                copy.write_row(row)
        # The name lookups hash the repository's names and the results are sorted by test id;
        # with the default 4 MB both spill to disk for a 200,000-test run. This transaction only.
        cursor.execute(f"SET LOCAL work_mem = '{STAGING_WORK_MEM}'")
        # Without statistics on the staging table the planner expects far more rows than it
        # holds, and may spend more time compiling a statement (JIT) than running it.
        cursor.execute("SET LOCAL jit = off")
        # Every join of the staging table with the names is by hashing: a merge join would
        # sort both sides' node ids (the planner, without statistics, expects many rows).
        cursor.execute("SET LOCAL enable_mergejoin = off")
        # Packing the outcomes, and the work alongside, are Python, these statements are the
        # database's: the one happens while the other runs. Not earlier: while the rows are
        # copied, Python is busy sending them.
        packing = pool.submit(outcomes_pack, rows)
        done = [pool.submit(work) for work in alongside]
        # In test id order the entries of the primary key are added in key order, not all
        # over the index: about twice as fast on a large table.
        cursor.execute(insert_known.format(skip_stored=""), params)
        stored = cursor.rowcount
        if stored < len(rows):
            # The names this run adds, interned together with their results. A concurrent
            # run of the same repository interning the same name makes the plain insert
            # fail; the ON CONFLICT of the second try then skips what it interned, and
            # inserting in digest order means two such runs take their index locks in one
            # order and cannot deadlock.
            try:
                with transaction.atomic():  # a savepoint: a clash undoes this statement only
                    cursor.execute(insert_added.format(on_conflict=""), params)
            except IntegrityError:
                conflict = " ON CONFLICT (repository_id, nodeid_sha256) DO NOTHING"
                cursor.execute(insert_added.format(on_conflict=conflict), params)
            stored += cursor.rowcount
        if stored < len(rows):
            # Names that such a concurrent run interned first: its commit, which the ON
            # CONFLICT waited for, makes them visible to this statement.
            cursor.execute(insert_known.format(skip_stored=skip_stored), params)
            stored += cursor.rowcount
        packed = packing.result()
    if stored != len(rows):
        raise RuntimeError(f"run {run.pk}: stored {stored} results for {len(rows)} node ids")
    outcomes_store(run, packed)
    wait(done)
    return done


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _test_ids(repository_id: int, digests: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for chunk in _chunks(digests, _SQLITE_CHUNK):
        found.update(
            TestName.objects.filter(
                repository_id=repository_id, nodeid_sha256__in=chunk
            ).values_list("nodeid_sha256", "pk")
        )
    return found


def _store_batched(run: Run, rows: list[Row]) -> None:
    """The portable path (SQLite): batched inserts, lookups by digest in bounded chunks."""
    repository_id = run.repository_id
    digests = [TestName.digest(row[0]) for row in rows]
    ids = _test_ids(repository_id, digests)
    missing = [
        (digest, row[0]) for digest, row in zip(digests, rows, strict=True) if digest not in ids
    ]
    TestName.objects.bulk_create(
        (
            TestName(repository_id=repository_id, nodeid=nodeid, nodeid_sha256=digest)
            for digest, nodeid in missing
        ),
        batch_size=_SQLITE_CHUNK,
        ignore_conflicts=True,
    )
    ids.update(_test_ids(repository_id, [digest for digest, _ in missing]))
    TestResult.objects.bulk_create(
        (
            TestResult(
                run_id=run.pk,
                test_id=ids[digest],
                bucket=bucket,
                duration=duration,
                signature=signature,
                freeze=freeze,
            )
            for digest, (_, bucket, duration, signature, freeze) in zip(digests, rows, strict=True)
        ),
        batch_size=_SQLITE_CHUNK,
    )
    outcomes_store(run, outcomes_pack(rows))
