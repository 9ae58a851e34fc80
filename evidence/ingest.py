"""Runs from upload to stored results.

``run_receive`` stores an upload as it came (the answer to the POST) and enqueues its parsing;
``run_ingest`` parses a received run and stores one result per node id, or rejects the run with
its reasons; ``runs_requeue_received`` enqueues again the runs whose parsing never happened
(broker down, worker lost), so an accepted upload is never lost.
"""

import logging
from collections.abc import Sequence
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from config.celery import task_named
from dashboards.live import refresh_later
from evidence import parsing, reports, results
from evidence.binary_columns import write_bytes
from evidence.models import Repository, Run
from evidence.uploads import ReceivedBody
from freezedebt_ci.errors import MAX_PROBLEMS, InputError, Problem
from freezedebt_ci.outcomes import FAILED, PASSED, SKIPPED, XFAIL

logger = logging.getLogger(__name__)

# A run still "received" after this long has lost its task (or waits behind a long queue; a
# duplicate task is harmless, it finds the run claimed and does nothing).
REQUEUE_AFTER = timedelta(seconds=settings.FREEZEDEBT_SWEEP_SECONDS)
REQUEUE_BATCH = 500
# Parse attempts a run gets: a run that fails (or takes its worker down) this often is
# rejected as one that could not be processed, so the sweep never keeps retrying it.
MAX_INGEST_ATTEMPTS = 5
# A reason quotes the offending value; the quote is for people, not a copy of the input.
MAX_REASON_CHARS = 500


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
    try:
        task_named("evidence.tasks.ingest_run").delay(run_id)
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
            parsed = parsing.run_parse(bytes(raw), source=f"run {run_id}", sha=run.sha)
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
        run.exit_code = parsed.exit_code
        run.meta = parsed.meta
        # The reports of the patches this run completes, from the outcomes in hand: the
        # report task would read them back from the database.
        ahead = reports.reports_ahead(run, parsed.outcomes)
        results.results_store(run, parsed)
        bodies = [_body(item) for item in ahead]
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
        computed = reports.store_reports_ahead(zip(ahead, bodies, strict=True))
        reports.enqueue_reports_for_run(run, computed=computed)
        if run.branch == run.repository.default_branch:
            refresh_later(run.repository_id)  # today's skipped tests on the default branch
    return run


_UNPROCESSABLE = (
    f"could not be processed: {MAX_INGEST_ATTEMPTS} attempts failed; upload it again as a new "
    "attempt, or report it if it keeps failing"
)


def _body(item: reports.ReportAhead) -> dict[str, Any] | None:
    """A report computed ahead, or None (left to the report task) when computing it failed:
    the report task then fails on it visibly, and the run is stored all the same."""
    try:
        return item.compute()
    except Exception:
        logger.exception("report of patch %s not computed by the ingest", item.patch.pk)
        return None


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
