"""Writes for patches: declaring one (or declaring it again) and scheduling its report."""

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from evidence.models import Patch, Report, Repository, ServerAnalysis
from evidence.reports import enqueue_report
from evidence.server_analysis import enqueue_server_analysis
from freezedebt_ci.changes import Change


@dataclass(frozen=True)
class DeclaredPatch:
    patch: Patch
    created: bool


def patch_declare(
    *,
    repository: Repository,
    ref: str,
    base_sha: str,
    head_sha: str,
    changes: list[Change],
    title: str = "",
    url: str = "",
    author: str = "",
    label: str = "",
    ledger_changed: bool = False,
    analysis: dict[str, Any] | None = None,
) -> DeclaredPatch:
    """Create the patch revision (repository, ref, base, head), or update the one declared
    before, and compute its report after commit.

    A repeated declaration recomputes the report when anything it holds changed, and also when
    the report is not ready yet (so a computation lost with the broker is made up for).
    """
    key = {"repository": repository, "ref": ref, "base_sha": base_sha, "head_sha": head_sha}
    values: dict[str, Any] = {
        "title": title,
        "url": url,
        "author": author,
        "label": label,
        "changed": [change.as_dict() for change in sorted(set(changes))],
        "ledger_changed": ledger_changed,
        "analysis": analysis,
    }
    with transaction.atomic():
        patch = Patch.objects.select_for_update().filter(**key).first()
        if patch is None:
            try:
                with transaction.atomic():
                    patch = Patch.objects.create(**key, **values)
            except IntegrityError:
                # A concurrent declaration of the same revision won; update that one instead.
                patch = Patch.objects.select_for_update().get(**key)
            else:
                enqueue_server_analysis(patch)
                enqueue_report(patch.pk)
                return DeclaredPatch(patch, created=True)
        differing = [name for name, value in values.items() if getattr(patch, name) != value]
        if differing:
            for name in differing:
                setattr(patch, name, values[name])
            patch.save(update_fields=[*differing, "updated_at"])
        if differing or not Report.objects.filter(patch=patch, status=Report.Status.READY).exists():
            if not ServerAnalysis.objects.filter(
                patch=patch, status=ServerAnalysis.Status.DONE
            ).exists():
                enqueue_server_analysis(patch)  # failed, or never made: try again
            enqueue_report(patch.pk)
    return DeclaredPatch(patch, created=False)
