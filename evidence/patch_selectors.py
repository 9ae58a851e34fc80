"""Reads of patches, already limited to what the caller may see (``evidence.visibility``)."""

from django.db.models import QuerySet
from django.http import Http404

from evidence import visibility
from evidence.models import Patch, Repository


def patches_visible_to(principal, *, repository: Repository | None = None) -> QuerySet[Patch]:
    """Patches, newest first, with repository and report state loaded for listing (not the
    report's body, nor the patch's paths and analysis: megabytes for a page of them)."""
    patches = visibility.rows(Patch.objects.all(), principal, tokens=True)
    if repository is not None:
        patches = patches.filter(repository=repository)
    return (
        patches.select_related("repository", "report")
        .defer("report__body", "changed", "analysis")
        .order_by("-created_at", "-pk")
    )


def patch_get(principal, *, patch_id: int) -> Patch:
    patch = (
        visibility.rows(Patch.objects.filter(pk=patch_id), principal, tokens=True)
        .select_related("repository")
        .first()
    )
    if patch is None:
        raise Http404("No such patch.")
    return patch
