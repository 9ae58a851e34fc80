"""The patch report page's read: the patch, its report and its two runs."""

from __future__ import annotations

import datetime
from typing import Any, TypedDict

from django.http import Http404
from django.utils import timezone

from evidence import visibility
from evidence.models import Patch, Report, Repository, Run
from evidence.reports import ledger_freezes, patch_label
from freezedebt_ci.analysis.judge import analysis_section

DRIFT_KEYS = ("image_digest", "lockfile_sha256", "python")


class PatchDetail(TypedDict):
    """The patch page. ``report`` is the §5.8 body ({} while pending) and most keys are its
    sections; ``problems`` blocking first, split into the patch's ``own_problems`` and those
    ``inherited_problems`` from the ledger; ``per_file`` rows have ``swap`` when the file both
    lost tests and gained others; ``drift`` the run meta keys that differ; ``base_run`` and
    ``head_run`` their ids (None when missing); ``caller_map`` the analysis section."""

    repository: Repository
    patch: Patch
    report: dict[str, Any]
    status: str
    verdict: str
    computed_at: datetime.datetime | None
    problems: list[dict[str, Any]]
    own_problems: list[dict[str, Any]]
    inherited_problems: list[dict[str, Any]]
    pending_reason: str | None
    figures: dict[str, Any]
    new_skips: list[Any]
    retired_skips: list[Any]
    lost: list[Any]
    new_xfails: list[Any]
    frozen_surface_hits: list[Any]
    per_file: list[dict[str, Any]]
    earned: int | None
    borrowed: int | None
    drift: list[dict[str, Any]]
    base_run: int | None
    head_run: int | None
    analysis: Any
    caller_map: dict[str, Any] | None


def _run_for(repository: Repository, sha: str, label: str) -> Run | None:
    return (
        Run.objects.defer("raw")
        .filter(repository=repository, sha=sha, label=label)
        .order_by("-attempt")
        .first()
    )


def patch_detail(*, user, repository_slug: str, patch_id: int) -> PatchDetail:
    """The patch page; Http404 when not visible or not found."""
    repository = visibility.repository(user, repository_slug)
    patch = (
        Patch.objects.filter(repository=repository, pk=patch_id).select_related("report").first()
    )
    if patch is None:
        raise Http404("No such patch.")
    report = getattr(patch, "report", None)
    body: dict[str, Any] = report.body if report is not None and report.body else {}
    label = patch_label(patch)
    base_run = _run_for(repository, patch.base_sha, label)
    head_run = _run_for(repository, patch.head_sha, label)

    drift = []
    if base_run is not None and head_run is not None:
        base_meta = base_run.meta if isinstance(base_run.meta, dict) else {}
        head_meta = head_run.meta if isinstance(head_run.meta, dict) else {}
        for key in DRIFT_KEYS:
            if base_meta.get(key) != head_meta.get(key):
                drift.append({"key": key, "base": base_meta.get(key), "head": head_meta.get(key)})

    per_file = []
    for row in body.get("per_file", []):
        gained = row.get("head_passed", 0) - row.get("base_passed", 0) + row.get("lost", 0)
        per_file.append({**row, "swap": row.get("lost", 0) > 0 and gained > 0})

    problems = sorted(
        body.get("problems", []),
        key=lambda p: (p.get("severity") != "block", p.get("code", "")),
    )
    figures = body.get("figures", {})
    return {
        "repository": repository,
        "patch": patch,
        "report": body,
        "status": report.status if report else Report.Status.PENDING,
        "verdict": report.verdict if report else Report.Verdict.PENDING,
        "computed_at": report.computed_at if report else None,
        "problems": problems,
        "own_problems": [p for p in problems if p.get("origin") != "ledger"],
        "inherited_problems": [p for p in problems if p.get("origin") == "ledger"],
        "pending_reason": body.get("pending_reason"),
        "figures": figures,
        "new_skips": body.get("new_skips", []),
        "retired_skips": body.get("retired_skips", []),
        "lost": body.get("lost", []),
        "new_xfails": body.get("new_xfails", []),
        "frozen_surface_hits": body.get("frozen_surface_hits", []),
        "per_file": per_file,
        "earned": figures.get("earned"),
        "borrowed": figures.get("borrowed"),
        "drift": drift,
        "base_run": base_run.pk if base_run else None,
        "head_run": head_run.pk if head_run else None,
        "analysis": patch.analysis,
        "caller_map": _caller_map(repository, patch, body),
    }


def _caller_map(repository, patch: Patch, body: dict[str, Any]) -> dict[str, Any] | None:
    """The report's ``analysis`` section; for a report stored before it had one, the same
    section computed now from the stored analysis and ledger."""
    section = body.get("analysis")
    if isinstance(section, dict):
        return section
    if not patch.analysis:
        return None
    return analysis_section(
        patch.analysis, freezes=ledger_freezes(repository), today=timezone.localdate()
    )
