"""Patch reports: the stored runs, the synced ledger and the repository's policy turned into
the inputs of the shared rules, and the rules' answer stored as the patch's report.

No accounting rule lives here: :func:`freezedebt_ci.report.compute_report` decides everything,
so the server's report equals ``freezedebt-ci delta`` for the same input.
"""

import datetime
import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from config.celery import task_named
from dashboards.live import refresh_later
from evidence.models import (
    Patch,
    Report,
    Repository,
    Run,
    RunOutcomes,
    RunQuerySet,
    ServerAnalysis,
)
from evidence.parsing import run_parse
from evidence.run_outcomes import outcomes_unpack
from freezedebt_ci.changes import Change, changes_from_objects
from freezedebt_ci.ledger import Freeze
from freezedebt_ci.outcomes import FAILED, PASSED, SKIPPED, XFAIL, Evidence
from freezedebt_ci.policy import DEFAULT_SEVERITIES
from freezedebt_ci.policy import Policy as RulesPolicy
from freezedebt_ci.report import compute_report
from ledger.governance import governance_versions_for
from ledger.models import LedgerVersion, Policy

logger = logging.getLogger(__name__)


# --- inputs of the rules --------------------------------------------------------------------


def run_for_report(
    *, repository: Repository, sha: str, label: str, runs: RunQuerySet | None = None
) -> Run | None:
    """The run a report uses for a commit: the latest attempt of (sha, label), if ready.

    A later attempt still being parsed, or rejected, leaves the commit without usable evidence:
    an earlier attempt is never taken in its place. ``runs``: what to read of it; by default
    all a report needs.
    """
    if runs is None:
        # The stored upload may be tens of MiB; the report needs none of it. Its packed
        # outcomes are what it reads, so they come in the same query.
        runs = Run.objects.defer("raw").select_related("outcomes")
    run = runs.latest_attempt(repository=repository, sha=sha, label=label)
    # A ready run always has its exit status; without it "head-failed" could not be judged,
    # and a report must never pass on evidence it cannot read.
    if run is None or run.status != Run.Status.READY or run.exit_code is None:
        return None
    return run


def run_labels(patch: Patch) -> dict[str, set[str]]:
    """The labels of the runs stored for the patch's base and head, by sha."""
    labels: dict[str, set[str]] = {patch.base_sha: set(), patch.head_sha: set()}
    rows = (
        Run.objects.filter(repository=patch.repository_id, sha__in=list(labels))
        .values_list("sha", "label")
        .distinct()
    )
    for sha, label in rows:
        labels[sha].add(label)
    return labels


def patch_label(patch: Patch, labels: dict[str, set[str]] | None = None) -> str:
    """The label whose runs the patch's report compares: the patch's own; without one, the
    one label that runs of both its commits share (a CI whose single job uploads under a label
    need not repeat it); otherwise none, and several shared labels (a matrix) leave the report
    pending until the patch names the one it is judged on."""
    if patch.label:
        return patch.label
    if labels is None:
        labels = run_labels(patch)
    shared = labels[patch.base_sha] & labels[patch.head_sha]
    return next(iter(shared)) if len(shared) == 1 else ""


def _shown(label: str) -> str:
    return repr(label) if label else "no label"


def pending_reason(
    patch: Patch, *, base_missing: bool, head_missing: bool, labels: dict[str, set[str]]
) -> str:
    """Why the patch's report is pending: which commit has no ready run under the label it
    compares, and which labels do have runs of those commits."""
    label = patch_label(patch, labels)
    sides = [
        (name, sha)
        for name, sha, missing in (
            ("base", patch.base_sha, base_missing),
            ("head", patch.head_sha, head_missing),
        )
        if missing
    ]
    commits = " and ".join(f"the {name} commit {sha[:12]}" for name, sha in sides)
    reason = f"no ready run of {commits} with {_shown(label)} yet"
    others = []
    for name, sha in (("base", patch.base_sha), ("head", patch.head_sha)):
        found = sorted(labels[sha] - {label})
        if found:
            others.append(f"{name} runs exist with {', '.join(map(_shown, found))}")
    if others:
        shared = sorted((labels[patch.base_sha] & labels[patch.head_sha]) - {label})
        if shared:
            choice = shared[0] if len(shared) == 1 else "LABEL"
            hint = f"declare the patch with --label {choice} (or FREEZEDEBT_LABEL) to compare those"
        else:
            hint = "upload the base and head runs under one label (--label or FREEZEDEBT_LABEL)"
        reason += f"; {'; '.join(others)}: {hint}"
    return reason


def _patch_runs(patch: Patch, runs: RunQuerySet | None = None) -> list[Run | None]:
    """The runs of the patch's base and head that its report uses (see run_for_report)."""
    label = patch_label(patch)
    return [
        run_for_report(repository=patch.repository, sha=sha, label=label, runs=runs)
        for sha in (patch.base_sha, patch.head_sha)
    ]


def _report_run_ids(patch: Patch) -> tuple[int | None, ...]:
    """The ids of the runs the patch's report uses, read lightly."""
    runs = _patch_runs(patch, Run.objects.only("pk", "status", "exit_code"))
    return tuple(None if run is None else run.pk for run in runs)


def _upload_outcomes(run: Run) -> dict[str, str]:
    """The run's outcomes read again from its stored upload, as the ingest read them."""
    raw = Run.objects.filter(pk=run.pk).values_list("raw", flat=True).get()
    return run_parse(bytes(raw), source=f"run {run.pk}").outcomes


def _packed_outcomes(run: Run) -> dict[str, str] | None:
    """The run's packed outcomes, when it has them and they agree with the run's counts."""
    try:
        packed = run.outcomes.packed
    except RunOutcomes.DoesNotExist:
        return None
    try:
        outcomes, counts = outcomes_unpack(bytes(packed))
    except ValueError:
        logger.warning("run %s: packed outcomes unreadable; reading its upload", run.pk)
        return None
    # The counts are written with them: a cheap check that a report is never computed from
    # outcomes that are not the run's.
    expected = {PASSED: run.passed, FAILED: run.failed, SKIPPED: run.skipped, XFAIL: run.xfail}
    if counts != expected:
        logger.warning(
            "run %s: packed outcomes disagree with its counts; reading its upload",
            run.pk,
        )
        return None
    return outcomes


def run_evidence(run: Run) -> Evidence:
    """A stored run as the rules' evidence: the bucket of each node id, exit status and meta.

    Read from the run's packed outcomes, one value, or else from its stored upload.
    """
    evidence = packed_evidence(run)
    if evidence is not None:
        return evidence
    assert run.exit_code is not None  # noqa: S101 - run_for_report hands over only such runs
    return Evidence(run.exit_code, _upload_outcomes(run), _meta(run))


def packed_evidence(run: Run) -> Evidence | None:
    """The run's evidence from its packed outcomes, loaded with it (run_for_report): no query.
    None when it has none, or none that can be used."""
    assert run.exit_code is not None  # noqa: S101 - run_for_report hands over only such runs
    outcomes = _packed_outcomes(run)
    return None if outcomes is None else Evidence(run.exit_code, outcomes, _meta(run))


def _meta(run: Run) -> dict[str, Any]:
    return dict(run.meta) if isinstance(run.meta, dict) else {}


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
            "require_analysis": stored.require_analysis,
        },
        source=f"policy of {repository.slug}",
    )


def governance_digests(repository: Repository, base_sha: str) -> dict[str, str | None]:
    """The sha256 of each governance file the server holds for a patch's base: the version
    synced at that commit, else the latest (an analysis must have used these)."""
    return governance_versions_for(repository, base_sha)


def own_analysis_inputs(patch: Patch) -> dict[str, Any]:
    """The server's own analysis of the patch as compute_report takes it: nothing where the
    repository has no git remote (or the patch was declared before it had one)."""
    if not patch.repository.git_url:
        return {}
    own = ServerAnalysis.objects.filter(patch=patch).first()
    if own is None:
        return {}
    if own.status == ServerAnalysis.Status.DONE:
        return {"own_analysis": own.analysis}
    if own.status == ServerAnalysis.Status.FAILED:
        return {"own_analysis_error": own.error or "unknown error"}
    return {"own_analysis_pending": True}


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
    own = own_analysis_inputs(patch)
    reason = None
    if base is None or head is None:
        reason = pending_reason(
            patch, base_missing=base is None, head_missing=head is None, labels=run_labels(patch)
        )
    return compute_report(
        base=base,
        head=head,
        freezes=ledger_freezes(repository),
        changes=patch_changes(patch),
        today=today or timezone.localdate(),
        policy=rules_policy(repository),
        ledger_changed=patch.ledger_changed,
        analysis=patch.analysis,
        # Read only where an analysis is judged: a report without one needs none of it.
        governance=governance_digests(repository, patch.base_sha)
        if patch.analysis or own
        else None,
        **own,
        pending_reason=reason,
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
        base, head = (run_evidence(run) if run is not None else None for run in _patch_runs(patch))
        return _save_report(patch, report_body(patch, base=base, head=head))


def _save_report(patch: Patch, body: dict[str, Any]) -> Report:
    report, _ = Report.objects.update_or_create(
        patch=patch, defaults={**Report.fields_of(body), "computed_at": timezone.now()}
    )
    refresh_later(patch.repository_id)  # today's patches and blocked share
    return report


def _send_report_task(patch_id: int) -> None:
    try:
        task_named("evidence.compute_patch_report").delay(patch_id)
    except BrokerError:
        # What triggered the computation is committed; the report stays pending until the next
        # trigger (the patch declared again, or a run of its base or head arriving).
        logger.warning(
            "report of patch %s not computed: the broker is unreachable", patch_id, exc_info=True
        )


def enqueue_report(patch_id: int) -> None:
    """Compute the patch's report once the current transaction commits."""
    transaction.on_commit(partial(_send_report_task, patch_id))


def enqueue_reports_for_run(run: Run, *, computed: Collection[int] = ()) -> None:
    """Recompute, after commit, the reports of every patch whose base or head is this run,
    except those ``computed`` already (see :func:`reports_ahead`)."""
    patch_ids = Patch.objects.touching_run(run).values_list("pk", flat=True)
    for patch_id in patch_ids:
        if patch_id not in computed:
            enqueue_report(patch_id)


# --- reports computed by the ingest of one of their runs ------------------------------------

# The reports an ingest computes itself, at most; a run that many patches share (a base run
# uploaded after them) leaves the others to the report task.
REPORTS_AHEAD = 4


@dataclass(frozen=True, slots=True)
class ReportAhead:
    """A patch's report computed from a run still being stored (see :func:`reports_ahead`)."""

    patch: Patch
    run_ids: tuple[int | None, int | None]
    # Computes the body without the database; None when it cannot (left to the report task).
    compute: Callable[[], dict[str, Any] | None]


def reports_ahead(run: Run, outcomes: dict[str, str]) -> list[ReportAhead]:
    """The reports of the patches whose base or head is ``run``, to be computed while its
    results are stored, from what the ingest has read (``outcomes``) instead of what it is
    about to store.

    Reads the database now (the patches, their other runs, the ledger and the policy); what
    it returns computes without it. The ingest then stores each body with
    :func:`store_reports_ahead` in its transaction.
    """
    assert run.exit_code is not None  # noqa: S101 - the ingest has read it
    # Not the run reports take for its commit when a later attempt exists: then none of them.
    latest = Run.objects.only("pk").latest_attempt(
        repository=run.repository, sha=run.sha, label=run.label
    )
    if latest is None or latest.pk != run.pk:
        return []
    evidence = Evidence(run.exit_code, outcomes, _meta(run))  # as run_evidence reads it
    patches = list(
        Patch.objects.touching_run(run)
        .select_related("repository")  # store_reports_ahead reads it again
        .order_by("pk")[:REPORTS_AHEAD]
    )
    if not patches:
        return []
    # Every patch is of the run's repository: its ledger and policy are read once.
    shared = {
        "freezes": ledger_freezes(run.repository),
        "today": timezone.localdate(),
        "policy": rules_policy(run.repository),
    }
    ahead = []
    for patch in patches:
        if patch_label(patch) != run.label:
            continue  # an unlabelled patch judged on another label's runs: the report task's
        runs = [
            run
            if sha == run.sha
            else run_for_report(repository=run.repository, sha=sha, label=run.label)
            for sha in (patch.base_sha, patch.head_sha)
        ]
        own = own_analysis_inputs(patch)
        inputs = {
            **shared,
            "changes": patch_changes(patch),
            "ledger_changed": patch.ledger_changed,
            "analysis": patch.analysis,
            "governance": (
                governance_digests(run.repository, patch.base_sha)
                if patch.analysis or own
                else None
            ),
            **own,
        }

        def compute(runs=tuple(runs), inputs=inputs) -> dict[str, Any] | None:
            sides = []
            for other in runs:
                side = (
                    None if other is None else evidence if other is run else packed_evidence(other)
                )
                if other is not None and side is None:
                    return None  # unusable packed outcomes: left to the report task
                sides.append(side)
            return compute_report(base=sides[0], head=sides[1], **inputs)

        base_run, head_run = runs
        run_ids = (
            None if base_run is None else base_run.pk,
            None if head_run is None else head_run.pk,
        )
        ahead.append(ReportAhead(patch, run_ids, compute))
    return ahead


def store_reports_ahead(bodies: Iterable[tuple[ReportAhead, dict[str, Any] | None]]) -> set[int]:
    """Store the reports computed ahead whose runs are still those reports take; returns the
    ids of their patches. Call once the run is stored, in the transaction that stores it.

    Each patch is locked first, as report_compute does. Whatever committed meanwhile (another
    attempt, the patch's other run) is visible then: a report whose runs are no longer those
    is not stored, and its patch is left to the report task, which reads what is committed.
    """
    stored = set()
    for ahead, body in sorted(bodies, key=lambda item: item[0].patch.pk):
        if body is None:
            continue
        locked = Patch.objects.select_for_update().filter(pk=ahead.patch.pk).values_list("pk")
        if not locked or _report_run_ids(ahead.patch) != ahead.run_ids:
            continue
        _save_report(ahead.patch, body)
        stored.add(ahead.patch.pk)
    return stored
