"""Patch reports: the stored runs, the synced ledger and the repository's policy turned into
the inputs of the shared rules, and the rules' answer stored as the patch's report.

No accounting rule lives here: :func:`freezedebt_ci.report.compute_report` decides everything,
so the server's report equals ``freezedebt-ci delta`` for the same input.
"""

import datetime
import logging
from collections.abc import Iterator
from functools import partial
from typing import Any

from celery import shared_task
from django.db import OperationalError, transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from evidence.ingest import outcomes_unpack
from evidence.models import Patch, Report, Repository, Run, RunOutcomes, TestResult
from freezedebt_ci.changes import Change, changes_from_objects
from freezedebt_ci.evidence import FAILED, PASSED, SKIPPED, XFAIL, Evidence, evidence_from_outcomes
from freezedebt_ci.ledger import Freeze
from freezedebt_ci.policy import DEFAULT_SEVERITIES
from freezedebt_ci.policy import Policy as RulesPolicy
from freezedebt_ci.report import compute_report
from ledger.models import LedgerVersion, Policy

logger = logging.getLogger(__name__)

# Rows fetched per round trip while reading a run's results (200,000-record runs stay flat).
RESULT_CHUNK_SIZE = 10_000

BUCKET_NAMES = {
    TestResult.Bucket.PASSED: PASSED,
    TestResult.Bucket.FAILED: FAILED,
    TestResult.Bucket.SKIPPED: SKIPPED,
    TestResult.Bucket.XFAIL: XFAIL,
}


# --- inputs of the rules --------------------------------------------------------------------


def run_for_report(*, repository: Repository, sha: str, label: str) -> Run | None:
    """The run a report uses for a commit: the latest attempt of (sha, label), if ready.

    A later attempt still being parsed, or rejected, leaves the commit without usable evidence:
    an earlier attempt is never taken in its place.
    """
    # The stored upload may be tens of MiB; the report needs none of it. Its packed outcomes
    # are what it reads, so they come in the same query.
    runs = Run.objects.defer("raw").select_related("outcomes")
    run = runs.latest_attempt(repository=repository, sha=sha, label=label)
    # A ready run always has its exit status; without it "head-failed" could not be judged,
    # and a report must never pass on evidence it cannot read.
    if run is None or run.status != Run.Status.READY or run.exit_code is None:
        return None
    return run


def _outcomes(run: Run) -> Iterator[tuple[str, str]]:
    rows = (
        TestResult.objects.filter(run=run)
        .values_list("test__nodeid", "bucket")
        .iterator(chunk_size=RESULT_CHUNK_SIZE)
    )
    for nodeid, bucket in rows:
        yield nodeid, BUCKET_NAMES[bucket]


def _packed_outcomes(run: Run) -> dict[str, str] | None:
    """The run's packed outcomes, when it has them and they agree with the run's counts."""
    try:
        packed = run.outcomes.packed
    except RunOutcomes.DoesNotExist:
        return None
    try:
        outcomes, counts = outcomes_unpack(bytes(packed))
    except ValueError:
        logger.warning("run %s: packed outcomes unreadable; reading its results", run.pk)
        return None
    # The counts are written with them: a cheap check that a report is never computed from
    # outcomes that are not the run's.
    expected = {PASSED: run.passed, FAILED: run.failed, SKIPPED: run.skipped, XFAIL: run.xfail}
    if counts != expected:
        logger.warning("run %s: packed outcomes disagree with its counts; reading results", run.pk)
        return None
    return outcomes


def run_evidence(run: Run) -> Evidence:
    """A stored run as the rules' evidence: the bucket of each node id, exit status and meta.

    Read from the run's packed outcomes, one value, or else from its results, a row per test.
    """
    assert run.exit_code is not None  # noqa: S101 - run_for_report hands over only such runs
    meta = run.meta if isinstance(run.meta, dict) else {}
    outcomes = _packed_outcomes(run)
    if outcomes is not None:
        return Evidence(run.exit_code, outcomes, dict(meta))
    return evidence_from_outcomes(_outcomes(run), exit_status=run.exit_code, meta=meta)


def ledger_freezes(repository: Repository) -> list[Freeze]:
    """The freezes of the repository's latest synced ledger (none before the first sync)."""
    version = LedgerVersion.objects.latest_for(repository)
    if version is None:
        return []
    return [Freeze.from_dict(item) for item in version.freezes]


def rules_policy(repository: Repository) -> RulesPolicy:
    """The repository's policy as the rules take it: its overrides on the rules' defaults."""
    stored = Policy.objects.filter(repository=repository).first()
    if stored is None:
        return RulesPolicy()
    # The model accepts any well-formed code; the rules only know theirs. A code the rules
    # never raise changes nothing, so it is left out rather than failing every report.
    unknown = sorted(set(stored.severities) - set(DEFAULT_SEVERITIES))
    if unknown:
        logger.warning(
            "policy of %s names unknown problem codes %s; ignored", repository.slug, unknown
        )
    return RulesPolicy.from_mapping(
        {
            "severities": {
                code: severity
                for code, severity in stored.severities.items()
                if code in DEFAULT_SEVERITIES
            },
            "max_freeze_days": stored.max_freeze_days,
            "fixture_paths": list(stored.fixture_paths),
            "ledger_path": stored.ledger_path,
        },
        source=f"policy of {repository.slug}",
    )


def patch_changes(patch: Patch) -> list[Change]:
    return changes_from_objects(patch.changed, source=f"changed paths of patch {patch.pk}")


def report_body(
    patch: Patch,
    *,
    base: Evidence | None,
    head: Evidence | None,
    today: datetime.date | None = None,
) -> dict[str, Any]:
    """The report JSON of a patch for the given evidence (None: that run is missing)."""
    repository = patch.repository
    return compute_report(
        base=base,
        head=head,
        freezes=ledger_freezes(repository),
        changes=patch_changes(patch),
        today=today or timezone.localdate(),
        policy=rules_policy(repository),
        ledger_changed=patch.ledger_changed,
    )


def report_placeholder(patch: Patch) -> dict[str, Any]:
    """What a report not computed yet reads as: pending, with every key a computed one has."""
    return report_body(patch, base=None, head=None)


# --- computing and storing ------------------------------------------------------------------


def report_compute(*, patch_id: int) -> Report | None:
    """Compute a patch's report from what is stored now and store it (insert or replace).

    Idempotent. Returns None when the patch is gone.
    """
    with transaction.atomic():
        # One computation per patch at a time: a run arriving while an older computation still
        # reads would otherwise let that older, pending answer overwrite the newer ready one.
        patch = (
            Patch.objects.select_for_update(of=("self",))
            .select_related("repository")
            .filter(pk=patch_id)
            .first()
        )
        if patch is None:
            return None
        runs = [
            run_for_report(repository=patch.repository, sha=sha, label=patch.label)
            for sha in (patch.base_sha, patch.head_sha)
        ]
        base, head = (run_evidence(run) if run is not None else None for run in runs)
        body = report_body(patch, base=base, head=head)
        report, _ = Report.objects.update_or_create(
            patch=patch,
            defaults={
                "status": body["status"],
                "verdict": body["verdict"],
                "body": body,
                "computed_at": timezone.now(),
            },
        )
    return report


@shared_task(
    name="evidence.compute_patch_report",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def compute_patch_report(patch_id: int) -> None:
    report_compute(patch_id=patch_id)


def _send_report_task(patch_id: int) -> None:
    try:
        compute_patch_report.delay(patch_id)
    except BrokerError:
        # What triggered the computation is committed; the report stays pending until the next
        # trigger (the patch declared again, or a run of its base or head arriving).
        logger.warning(
            "report of patch %s not computed: the broker is unreachable", patch_id, exc_info=True
        )


def enqueue_report(patch_id: int) -> None:
    """Compute the patch's report once the current transaction commits."""
    transaction.on_commit(partial(_send_report_task, patch_id))


def enqueue_reports_for_run(run: Run) -> None:
    """Recompute, after commit, the reports of every patch whose base or head is this run."""
    patch_ids = Patch.objects.touching_run(run).filter(label=run.label).values_list("pk", flat=True)
    for patch_id in patch_ids:
        enqueue_report(patch_id)
