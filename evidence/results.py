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


class _Statements:
    """The SQL of one PostgreSQL ingest, for its staging table and the size of its run."""

    def __init__(self, run: Run, rows: int) -> None:
        quote = connection.ops.quote_name
        names = quote(TestName._meta.db_table)
        results = quote(TestResult._meta.db_table)
        # Named after the run: a test's surrounding transaction may ingest several runs, and
        # the table only goes away at the outermost commit.
        self.staging = staging = quote(f"freezedebt_ingest_{run.pk}")
        self.names_table = TestName._meta.db_table
        # "freeze" is a keyword in PostgreSQL: the staging table says frozen_by, and the
        # column names of the results table are quoted.
        columns = ", ".join(
            quote(name)
            for name in ("run_id", "test_id", "bucket", "duration", "signature", "freeze")
        )

        def digest(alias: str) -> str:
            # TestName.digest, computed by the database, in the column's bytewise collation
            # (migration 0012): sorted and compared without the locale.
            return f"(encode(sha256(convert_to({alias}.nodeid, 'UTF8')), 'hex') COLLATE \"C\")"

        # A large run names most of the repository's tests: hashing the node ids of both sides
        # is cheaper than a digest per node id and a lookup each. A small one looks its few
        # node ids up by digest in the unique constraint's index.
        if rows >= MATCH_BY_HASHING_FROM:
            same_name = "t.nodeid = s.nodeid"
        else:
            same_name = f"t.nodeid_sha256 = {digest('s')}"
        match = f"t.repository_id = %(repository)s AND {same_name}"

        # A repository's first run: every name is new. Each staged row, in digest order, gets
        # its test id from the names' sequence; its name is inserted with that id and its
        # result from the same numbered rows: no lookup of names, nothing joined back by node
        # id. In digest order, two runs interning the same names take their index locks in one
        # order and cannot deadlock, and both indexes of the names, like the results' primary
        # key, grow in key order.
        self.intern_all = f"""
            WITH numbered AS MATERIALIZED (
                SELECT d.*, nextval(%(sequence)s::regclass) AS test_id FROM (
                    SELECT s.nodeid, s.bucket, s.duration, s.signature, s.frozen_by,
                           {digest("s")} AS digest
                    FROM {staging} s ORDER BY 6
                ) d
            ),
            interned AS (
                INSERT INTO {names} (id, repository_id, nodeid, nodeid_sha256)
                SELECT n.test_id, %(repository)s, n.nodeid, n.digest FROM numbered n
                ORDER BY 1
            )
            INSERT INTO {results} ({columns})
            SELECT %(run)s, n.test_id, n.bucket, n.duration, n.signature, n.frozen_by
            FROM numbered n
            ORDER BY n.test_id
        """  # noqa: S608 - table names from the models, values bound

        def store_known(where: str = "") -> str:
            return f"""
                INSERT INTO {results} ({columns})
                SELECT %(run)s, t.id, s.bucket, s.duration, s.signature, s.frozen_by
                FROM {staging} s JOIN {names} t ON {match}
                {where}
                ORDER BY t.id
            """  # noqa: S608

        # Any other run: the results of the staged rows whose names the repository has, first
        # (usually all of them: the same suite again), in test id order ...
        self.store_known = store_known()
        # ... then the names still missing, interned unless a concurrent run has them by now
        # (ON CONFLICT waits for its commit), with their results ...
        self.intern_missing = f"""
            WITH added AS (
                INSERT INTO {names} (repository_id, nodeid, nodeid_sha256)
                SELECT %(repository)s, s.nodeid, {digest("s")} FROM {staging} s
                WHERE NOT EXISTS (SELECT 1 FROM {names} t WHERE {match})
                ORDER BY 3
                ON CONFLICT (repository_id, nodeid_sha256) DO NOTHING
                RETURNING id, nodeid
            )
            INSERT INTO {results} ({columns})
            SELECT %(run)s, a.id, s.bucket, s.duration, s.signature, s.frozen_by
            FROM added a JOIN {staging} s ON s.nodeid = a.nodeid
            ORDER BY a.id
        """  # noqa: S608
        # ... and last, the results of names a concurrent run interned first (committed now).
        self.store_rest = store_known(
            f"WHERE NOT EXISTS (SELECT 1 FROM {results} r "  # noqa: S608
            "WHERE r.run_id = %(run)s AND r.test_id = t.id)"
        )


def _store_postgresql(
    run: Run, rows: list[Row], pool: ThreadPoolExecutor, alongside: Sequence[Callable[[], Any]]
) -> list[Future]:
    """COPY the rows into a temporary table, then match, intern and insert set-based."""
    sql = _Statements(run, len(rows))
    # Read before the COPY: whether this is the repository's first run (no names yet).
    first_run = not TestName.objects.filter(repository_id=run.repository_id).exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [sql.names_table])
        (sequence,) = cursor.fetchone()
        params = {"run": run.pk, "repository": run.repository_id, "sequence": sequence}
        cursor.execute(
            f"CREATE TEMPORARY TABLE {sql.staging} (nodeid text NOT NULL, "
            "bucket smallint NOT NULL, duration double precision, signature text NOT NULL, "
            "frozen_by text NOT NULL) ON COMMIT DROP"
        )
        # Binary COPY: no text escaping of each value on either side.
        with cursor.copy(
            f"COPY {sql.staging} (nodeid, bucket, duration, signature, frozen_by) "
            "FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "int2", "float8", "text", "text"])
            for row in rows:
                copy.write_row(row)
        # The name lookups hash the repository's names and the results are sorted by test id;
        # with the default work_mem both spill to disk for a large run. This transaction only.
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
        stored = 0
        if first_run:
            try:
                with transaction.atomic():  # a savepoint: a clash undoes this statement only
                    cursor.execute(sql.intern_all, params)
                    stored = cursor.rowcount
            except IntegrityError:
                pass  # a concurrent first run interned some names: the general way below
        if not stored:
            cursor.execute(sql.store_known, params)
            stored = cursor.rowcount
        if stored < len(rows):
            cursor.execute(sql.intern_missing, params)
            stored += cursor.rowcount
        if stored < len(rows):
            cursor.execute(sql.store_rest, params)
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
