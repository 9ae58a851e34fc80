"""Reads of the ledger app, limited to the repositories the caller may see."""

from collections.abc import Iterable

from django.db.models import F, QuerySet

from evidence import visibility
from evidence.models import Repository
from ledger.models import Freeze, FreezeAction
from sqlreads import Read


def freezes_visible_to(
    principal, *, repository: Repository | None = None, include_retired: bool = False
) -> QuerySet[Freeze]:
    """Freezes of the visible repositories, soonest expiry first (retired ones on request)."""
    freezes = visibility.rows(Freeze.objects.all(), principal, tokens=True)
    if repository is not None:
        freezes = freezes.filter(repository=repository)
    if not include_retired:
        freezes = freezes.current()
    return freezes.select_related("repository").order_by(
        "repository__slug", F("expires").asc(nulls_last=True), "freeze_id"
    )


# Read for every page and digest that shows owners' answers (sqlreads: cheaper than building
# the query).
_ACTIONS_OF = Read.of(FreezeAction, "WHERE freeze_id = ANY(%s) ORDER BY created_at, id")


def current_version_actions(freezes: Iterable[Freeze]) -> list[FreezeAction]:
    """The owner actions on the current version of each of these freezes, oldest first (one
    query): an action on an earlier version ended with it."""
    versions = {freeze.pk: freeze.version for freeze in freezes}
    if not versions:
        return []
    actions = _ACTIONS_OF.instances(FreezeAction, [list(versions)])
    return [action for action in actions if versions[action.freeze_id] == action.freeze_version]


def latest_actions(freezes: Iterable[Freeze]) -> dict[int, FreezeAction]:
    """The latest owner action on the current version of each freeze, by freeze pk (one
    query): what the pages and the digest show as "acknowledged 2 days ago"."""
    return {action.freeze_id: action for action in current_version_actions(freezes)}


def open_renewal_requests(freeze_pks: Iterable[int] | None = None) -> list[FreezeAction]:
    """The open renewal requests (of these freezes, or of all), oldest first, with their freeze
    and its repository (one query). A request is open while made on the current version of a
    freeze still in the ledger: a renewal (a new version) or a retirement closes it."""
    requests = FreezeAction.objects.filter(
        action=FreezeAction.Action.RENEWAL,
        freeze__current=True,
        freeze_version=F("freeze__version"),
    )
    if freeze_pks is not None:
        requests = requests.filter(freeze_id__in=list(freeze_pks))
    return list(requests.select_related("freeze__repository").order_by("created_at", "pk"))
