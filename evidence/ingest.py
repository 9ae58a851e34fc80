"""Runs from upload to stored results.

``run_receive`` stores an upload as it came (the answer to the POST) and enqueues its parsing;
``run_ingest`` parses a received run and stores one result per node id, or rejects the run with
its reasons; ``runs_requeue_received`` enqueues again the runs whose parsing never happened
(broker down, worker lost), so an accepted upload is never lost.
"""

import json
import logging
import math
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from itertools import chain, compress, repeat
from operator import eq, itemgetter, ne
from typing import TYPE_CHECKING, Any

import psycopg
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from config.jsontext import unstorable
from dashboards.live import refresh_later
from evidence.models import Repository, Run, RunOutcomes, TestName, TestResult
from evidence.uploads import ReceivedBody
from freezedebt_ci.errors import MAX_PROBLEMS, InputError, Problem, ProblemCollector
from freezedebt_ci.evidence import (
    FAILED,
    PASSED,
    SKIPPED,
    XFAIL,
    Evidence,
    parse_evidence,
    sha_conflict,
)

if TYPE_CHECKING:
    from evidence.reports import ReportAhead

logger = logging.getLogger(__name__)

BUCKETS = {
    PASSED: TestResult.Bucket.PASSED.value,
    FAILED: TestResult.Bucket.FAILED.value,
    SKIPPED: TestResult.Bucket.SKIPPED.value,
    XFAIL: TestResult.Bucket.XFAIL.value,
}
# A run still "received" after this long has lost its task (or waits behind a long queue; a
# duplicate task is harmless, it finds the run claimed and does nothing).
REQUEUE_AFTER = timedelta(seconds=settings.FREEZEDEBT_SWEEP_SECONDS)
REQUEUE_BATCH = 500
# Parse attempts a run gets: a run that fails (or takes its worker down) this often is
# rejected as one that could not be processed, so the sweep never keeps retrying it.
MAX_INGEST_ATTEMPTS = 5
# meta is shown on pages and copied into reports; a few KiB is what the plugin writes.
MAX_META_BYTES = 64 << 10
# A reason quotes the offending value; the quote is for people, not a copy of the input.
MAX_REASON_CHARS = 500
# Bounds of the database columns the reader does not know about.
_EXIT_RANGE = range(-(2**31), 2**31)
_SIGNATURE_LENGTH = TestResult._meta.get_field("signature").max_length
_FREEZE_LENGTH = TestResult._meta.get_field("freeze").max_length
# Memory for the hash and the sort of one ingest's statements (see _store_postgresql).
STAGING_WORK_MEM = "64MB"
# SQLite allows a few hundred bound parameters per statement in older builds.
_SQLITE_CHUNK = 500

# The packed outcomes of a run (RunOutcomes): this header line, the number of node ids of each
# bucket, a newline, then the node ids bucket by bucket (in _PACKED order), separated by NUL
# characters (a node id never holds one: the ingest rejects it), all zlib-compressed.
OUTCOMES_FORMAT = "freezedebt-outcomes/1"
_PACKED = (PASSED, FAILED, SKIPPED, XFAIL)
# Level 1: about 4:1 on node ids at several times the speed of the default level.
_OUTCOMES_LEVEL = 1

# One row of a run's results before it is stored: nodeid, bucket, duration, signature, freeze.
Row = tuple[str, int, float | None, str, str]
# From this many rows on, the ingest matches a run's node ids with the repository's names by
# hashing both sets of node ids in the database; below it, it looks each up by its digest.
MATCH_BY_HASHING_FROM = 2000


class RunConflict(Exception):
    """Another upload with the same repository, sha, label and attempt holds other content."""

    def __init__(self, run: Run) -> None:
        super().__init__(f"run {run.pk} holds other content for this attempt")
        self.run = run


# --- receiving ------------------------------------------------------------------------------


def run_receive(
    *,
    repository: Repository,
    sha: str,
    branch: str,
    label: str,
    attempt: int,
    content_type: str,
    body: ReceivedBody,
) -> tuple[Run, bool]:
    """Store an upload as a ``received`` run and enqueue its parsing once committed.

    Returns ``(run, created)``: a repeated upload of the same attempt with the same content
    returns the stored run with ``created`` False. Raises :class:`RunConflict` when the
    attempt is stored with other content.
    """
    binary = connection.vendor == "postgresql"
    try:
        with transaction.atomic():
            run = Run.objects.create(
                repository=repository,
                sha=sha,
                branch=branch,
                label=label,
                attempt=attempt,
                content_sha256=body.sha256,
                content_type=content_type,
                raw=b"" if binary else body.raw,
                raw_size=body.size,
            )
            if binary:
                write_bytes(Run, run.pk, "raw", body.raw)
                run.raw = body.raw  # as stored: a later save() must not write b"" back
            transaction.on_commit(partial(enqueue_ingest, run.pk), robust=True)
    except IntegrityError:
        # The database decides between concurrent uploads of one attempt: the loser lands here
        # once the winner has committed, and answers with the winner's run.
        existing = (
            Run.objects.defer("raw")
            .filter(repository=repository, sha=sha, label=label, attempt=attempt)
            .first()
        )
        if existing is None:
            raise
        if existing.content_sha256 != body.sha256:
            raise RunConflict(existing) from None
        return existing, False
    return run, True


def enqueue_ingest(run_id: int) -> None:
    """Send the parse task of a run; with the broker down the run waits for the sweep."""
    from evidence.tasks import ingest_run

    try:
        ingest_run.delay(run_id)
    except BrokerError:
        logger.warning(
            "run %s stays received: the broker is unreachable; the periodic sweep will "
            "enqueue it again",
            run_id,
            exc_info=True,
        )


def runs_requeue_received(*, older_than: timedelta = REQUEUE_AFTER, now=None) -> list[int]:
    """Enqueue the parsing of runs left ``received`` for longer than ``older_than``.

    At most REQUEUE_BATCH runs, the least tried first, then the oldest, so one sweep stays
    short, the next takes the rest, and runs that keep failing cannot crowd out those that
    were merely lost (they are rejected after MAX_INGEST_ATTEMPTS anyway).
    """
    received_before = (now or timezone.now()) - older_than
    run_ids = list(
        Run.objects.awaiting_parse(received_before=received_before)
        .order_by("ingest_attempts", "created_at")
        .values_list("pk", flat=True)[:REQUEUE_BATCH]
    )
    for run_id in run_ids:
        enqueue_ingest(run_id)
    if run_ids:
        logger.info("enqueued %d run(s) left received: %s", len(run_ids), run_ids)
    return run_ids


# --- parsing and storing --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Parsed:
    rows: list[Row]
    outcomes: dict[str, str]
    counts: dict[str, int]
    exit_code: int
    meta: dict[str, Any]


def run_ingest(*, run_id: int) -> Run | None:
    """Parse a received run and store its results (``ready``) or its reasons (``rejected``).

    Idempotent: a run that is gone or no longer ``received`` is left alone and None returned.
    Everything happens in one transaction, so a worker killed midway leaves the run
    ``received``, and the redelivered task starts over from the stored upload. Each attempt
    is counted first, in a commit of its own: after MAX_INGEST_ATTEMPTS the run is rejected
    as one that could not be processed.
    """
    if not Run.objects.filter(pk=run_id, status=Run.Status.RECEIVED).update(
        ingest_attempts=F("ingest_attempts") + 1
    ):
        return None
    with transaction.atomic():
        # The claim: this UPDATE takes the run's row lock (PostgreSQL) or the database write
        # lock (SQLite), so a concurrent delivery waits here and then matches no row.
        claimed = Run.objects.filter(pk=run_id, status=Run.Status.RECEIVED).update(
            updated_at=timezone.now()
        )
        if not claimed:
            return None
        run = Run.objects.defer("raw").select_related("repository").get(pk=run_id)
        if run.ingest_attempts > MAX_INGEST_ATTEMPTS:
            logger.error("run %s rejected after %d attempts", run_id, MAX_INGEST_ATTEMPTS)
            _reject(run, [Problem("$", _UNPROCESSABLE)])
            return run
        raw = Run.objects.filter(pk=run_id).values_list("raw", flat=True).get()
        try:
            parsed = _parse(bytes(raw), source=f"run {run_id}", sha=run.sha)
        except InputError as error:
            _reject(run, error.problems)
            return run
        except Exception:
            # Reading is pure: what fails here fails the same way on every retry. The run
            # ends rejected (and the error is logged as the bug it is), not received for ever.
            logger.exception("run %s could not be read", run_id)
            _reject(run, [Problem("$", "could not be read; the error was logged")])
            return run
        del raw
        # Imported here: the reports module reads runs, and runs should not import reports.
        from evidence.reports import enqueue_reports_for_run, reports_ahead, store_reports_ahead

        run.exit_code = parsed.exit_code
        run.meta = parsed.meta
        # The reports of the patches this run completes are computed (Python) while the
        # database stores its results: both CPUs at work instead of one after the other.
        ahead = reports_ahead(run, parsed.outcomes)
        done = _store(run, parsed.rows, alongside=[item.compute for item in ahead])
        bodies = [_body(item, future) for item, future in zip(ahead, done, strict=True)]
        run.status = Run.Status.READY
        run.reasons = []
        run.passed = parsed.counts[PASSED]
        run.failed = parsed.counts[FAILED]
        run.skipped = parsed.counts[SKIPPED]
        run.xfail = parsed.counts[XFAIL]
        run.parsed_at = timezone.now()
        run.save(
            update_fields=[
                "status",
                "reasons",
                "exit_code",
                "meta",
                "passed",
                "failed",
                "skipped",
                "xfail",
                "parsed_at",
                "updated_at",
            ]
        )
        computed = store_reports_ahead(zip(ahead, bodies, strict=True))
        enqueue_reports_for_run(run, computed=computed)
        if run.branch == run.repository.default_branch:
            refresh_later(run.repository_id)  # today's skipped tests on the default branch
    return run


_UNPROCESSABLE = (
    f"could not be processed: {MAX_INGEST_ATTEMPTS} attempts failed; upload it again as a new "
    "attempt, or report it if it keeps failing"
)


def _body(item: "ReportAhead", future: Future) -> dict[str, Any] | None:
    """A report computed ahead, or None (left to the report task) when computing it failed:
    the report task then fails on it visibly, and the run is stored all the same."""
    try:
        return future.result()
    except Exception:
        logger.exception("report of patch %s not computed by the ingest", item.patch.pk)
        return None


def _parse(raw: bytes, *, source: str, sha: str | None = None) -> _Parsed:
    evidence = parse_evidence(
        raw,
        source=source,
        max_records=settings.FREEZEDEBT_MAX_RECORDS,
        max_nodeid_length=settings.FREEZEDEBT_MAX_NODEID_LENGTH,
        max_decompressed=settings.FREEZEDEBT_MAX_DECOMPRESSED_BYTES,
    )
    problems = ProblemCollector(source)
    if evidence.exit not in _EXIT_RANGE:
        shown = evidence.exit if abs(evidence.exit) < 10**12 else "the number"
        problems.add("$.exit", f"{shown} is outside the range of exit statuses")
    meta_problem = _json_problem(evidence.meta)
    if meta_problem:
        problems.add("$.meta", meta_problem)
    # The upload refuses this when meta comes first (409); the rest is caught here.
    own_sha = sha_conflict(evidence.meta, sha) if sha else None
    if own_sha is not None:
        problems.add(
            "$.meta.sha", f"the evidence was made at commit {own_sha}, not at the run's sha {sha}"
        )
    rows = _rows(evidence, problems)
    problems.raise_if_any()
    return _Parsed(rows, evidence.outcomes, evidence.counts(), evidence.exit, evidence.meta)


def _rows(evidence: Evidence, problems: ProblemCollector) -> list[Row]:
    """One row per node id; the checks the database needs that the reader does not make.

    Written for a few hundred thousand node ids: the usual case (a finite float duration, no
    signature, no freeze) makes no function call beyond the dictionary lookups.
    """
    rows: list[Row] = []
    append = rows.append
    extras = evidence.extras
    for nodeid, bucket in evidence.outcomes.items():
        if "\x00" in nodeid:
            problems.add("$.records[*].nodeid", f"{_quote(nodeid)} contains a NUL character")
            continue
        if not nodeid.isascii():
            try:
                nodeid.encode()
            except UnicodeEncodeError:
                problems.add("$.records[*].nodeid", f"{_quote(nodeid)} is not valid Unicode")
                continue
        extra = extras.get(nodeid)
        if extra is None:
            append((nodeid, BUCKETS[bucket], None, "", ""))
            continue
        duration = extra.get("duration")
        # x - x is 0.0 for every finite float, and NaN for infinities and NaN.
        if type(duration) is not float or duration - duration != 0.0:
            duration = _duration(duration)
        signature = extra.get("signature")
        frozen_by = extra.get("freeze")
        append(
            (
                nodeid,
                BUCKETS[bucket],
                duration,
                "" if signature is None else _text(signature, _SIGNATURE_LENGTH),
                "" if frozen_by is None else _text(frozen_by, _FREEZE_LENGTH),
            )
        )
    return rows


def _duration(value: object) -> float | None:
    """Seconds as a finite float; anything else is dropped (the extra is optional)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds = float(value)
    except OverflowError:
        return None
    return seconds if math.isfinite(seconds) else None


def _text(value: object, length: int) -> str:
    """An optional text extra as the column can hold it; anything unstorable is dropped."""
    if not isinstance(value, str) or "\x00" in value:
        return ""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return ""
    return value[:length]


def _json_problem(meta: dict[str, Any]) -> str | None:
    """Why ``meta`` cannot be stored as JSON in the database, or None."""
    problem = unstorable(meta)
    if problem is not None:
        return problem[1]
    if len(json.dumps(meta).encode("utf-8")) > MAX_META_BYTES:
        return f"is larger than {MAX_META_BYTES} bytes"
    return None


def _quote(text: str, limit: int = 80) -> str:
    shown = text if len(text) <= limit else f"{text[:limit]}…"
    return ascii(shown)


def _reason(problem: Problem) -> dict[str, str]:
    reason = problem.as_dict()
    return {
        key: value[:MAX_REASON_CHARS].encode("utf-8", "replace").decode().replace("\x00", "")
        for key, value in reason.items()
    }


def _reject(run: Run, problems: Sequence[Problem]) -> None:
    run.status = Run.Status.REJECTED
    run.reasons = [_reason(problem) for problem in problems[:MAX_PROBLEMS]]
    run.parsed_at = timezone.now()
    run.save(update_fields=["status", "reasons", "parsed_at", "updated_at"])
    logger.info("run %s rejected: %d problem(s)", run.pk, len(run.reasons))


def _store(
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
    _store_outcomes(run, packed)
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
    _store_outcomes(run, outcomes_pack(rows))


# --- packed outcomes ------------------------------------------------------------------------


def _store_outcomes(run: Run, packed: bytes) -> None:
    if connection.vendor == "postgresql":
        RunOutcomes.objects.create(run=run, packed=b"")
        write_bytes(RunOutcomes, run.pk, "packed", packed)
    else:
        RunOutcomes.objects.create(run=run, packed=packed)


def write_bytes(model: type[Run] | type[RunOutcomes], pk: int, field: str, data: bytes) -> None:
    """Set a binary column of one stored row, on PostgreSQL, from a binary parameter.

    Django binds parameters on the client: a bytes value becomes a hex literal twice its size
    that the server then parses, about five times slower than sending the bytes as they are
    for the MiBs of an upload. Runs in the current transaction, on Django's connection.
    """
    quote = connection.ops.quote_name
    column = quote(model._meta.get_field(field).column)
    sql = (
        f"UPDATE {quote(model._meta.db_table)} SET {column} = %b "  # noqa: S608
        f"WHERE {quote(model._meta.pk.column)} = %s"
    )
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, [data, pk])
        if cursor.rowcount != 1:
            raise RuntimeError(f"{model.__name__} {pk}: {cursor.rowcount} rows hold its {field}")


def outcomes_pack(rows: Sequence[Row]) -> bytes:
    """The outcomes of a run's rows (node id and bucket of each) as stored in RunOutcomes.

    Every node id must be free of NUL characters (the ingest has checked it).
    """
    nodeids = list(map(itemgetter(0), rows))
    buckets = list(map(itemgetter(1), rows))
    # Nearly all node ids pass: those are picked out without a Python-level step per node id,
    # and only the others are grouped one by one.
    groups: dict[int, list[str]] = {BUCKETS[name]: [] for name in _PACKED}
    passed = BUCKETS[PASSED]
    groups[passed] = list(compress(nodeids, map(eq, buckets, repeat(passed))))
    for nodeid, bucket in compress(
        zip(nodeids, buckets, strict=True), map(ne, buckets, repeat(passed))
    ):
        groups[bucket].append(nodeid)
    ordered = [groups[BUCKETS[name]] for name in _PACKED]
    header = " ".join([OUTCOMES_FORMAT, *(str(len(group)) for group in ordered)])
    text = "\0".join(chain.from_iterable(ordered))
    return zlib.compress(f"{header}\n{text}".encode(), _OUTCOMES_LEVEL)


def outcomes_unpack(packed: bytes) -> tuple[dict[str, str], dict[str, int]]:
    """The outcomes packed by :func:`outcomes_pack` and the number of node ids in each bucket;
    ValueError when they are not such."""
    try:
        text = zlib.decompress(packed).decode()
    except (zlib.error, UnicodeDecodeError) as error:
        raise ValueError(f"packed outcomes that cannot be read: {error}") from None
    header, _, body = text.partition("\n")
    fields = header.split(" ")
    if len(fields) != 1 + len(_PACKED) or fields[0] != OUTCOMES_FORMAT:
        raise ValueError(f"packed outcomes of another format: {header[:80]!r}")
    sizes = [int(field) for field in fields[1:]]
    nodeids = body.split("\0") if body else []
    if sum(sizes) != len(nodeids):
        raise ValueError(f"packed outcomes announce {sum(sizes)} node ids, hold {len(nodeids)}")
    # The passed ones (first, and nearly all) make the dict; the few others are added to it.
    outcomes = dict.fromkeys(nodeids[: sizes[0]], _PACKED[0])
    start = sizes[0]
    for name, size in zip(_PACKED[1:], sizes[1:], strict=True):
        outcomes.update(dict.fromkeys(nodeids[start : start + size], name))
        start += size
    if len(outcomes) != len(nodeids):
        raise ValueError("packed outcomes name a node id twice")
    return outcomes, dict(zip(_PACKED, sizes, strict=True))
