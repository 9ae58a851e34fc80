"""Reads of the ledger app, limited to the repositories the caller may see."""

from django.db.models import F, QuerySet

from evidence.models import Repository
from evidence.patch_selectors import repositories_visible_to
from ledger.models import Freeze


def freezes_visible_to(
    principal, *, repository: Repository | None = None, include_retired: bool = False
) -> QuerySet[Freeze]:
    """Freezes of the visible repositories, soonest expiry first (retired ones on request)."""
    freezes = Freeze.objects.filter(repository__in=repositories_visible_to(principal))
    if repository is not None:
        freezes = freezes.filter(repository=repository)
    if not include_retired:
        freezes = freezes.current()
    return freezes.select_related("repository").order_by(
        "repository__slug", F("expires").asc(nulls_last=True), "freeze_id"
    )
