"""Who a ledger ``owner`` handle names: an entry of the owner directory, or, for a handle that
is itself an e-mail address, that address (section 8)."""

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from ledger.models import Owner
from sqlreads import Read, fields


@dataclass(frozen=True)
class ResolvedOwner:
    handle: str
    name: str
    email: str
    is_team: bool = False


def _as_address(handle: str) -> ResolvedOwner | None:
    try:
        validate_email(handle)
    except ValidationError:
        return None
    return ResolvedOwner(handle=handle, name=handle, email=handle)


# Read on every page that lists freezes (sqlreads: cheaper than building the query).
_DIRECTORY = Read(
    "SELECT handle, name, email, is_team FROM ledger_owner WHERE handle = ANY(%s)",
    fields(Owner, "handle", "name", "email", "is_team"),
)


def owners_resolve(handles: Iterable[str]) -> dict[str, ResolvedOwner]:
    """Each handle that names somebody, mapped to them; unowned handles are left out.

    The directory wins over the address reading, so a lead can route a personal address in the
    ledger to a team's list.
    """
    wanted = {handle for handle in handles if handle}
    found = {}
    if wanted:
        found = {
            row["handle"]: ResolvedOwner(
                handle=row["handle"],
                name=row["name"] or row["handle"],
                email=row["email"],
                is_team=row["is_team"],
            )
            for row in _DIRECTORY.rows([list(wanted)])
        }
    for handle in wanted - found.keys():
        address = _as_address(handle)
        if address is not None:
            found[handle] = address
    return found


def owner_resolve(handle: str) -> ResolvedOwner | None:
    return owners_resolve([handle]).get(handle)
