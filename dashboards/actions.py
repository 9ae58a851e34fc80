"""What owners answered through their signed links (acknowledge, request a renewal, report
fixed), as the dashboard pages show it: "acknowledged 2 days ago".

Every reader here makes one query, whatever the number of freezes or repositories. A renewal
request never changes the freeze (the ledger is the only source of freezes): leads see it as a
request with its proposed reason until the ledger renews or retires the freeze.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.utils import timezone
from django.utils.timesince import timesince

from ledger.models import FreezeAction
from sqlreads import Read, fields

# How each action reads after the owner's name or before "2 days ago".
VERBS = {
    FreezeAction.Action.ACKNOWLEDGE: "acknowledged",
    FreezeAction.Action.RENEWAL: "renewal requested",
    FreezeAction.Action.FIXED: "reported fixed",
}


def ago(when: datetime.datetime, now: datetime.datetime | None = None) -> str:
    """The time since ``when`` in its largest unit: "2 days ago", "3 hours ago", "just now"."""
    now = now or timezone.now()
    if now - when < datetime.timedelta(minutes=1):
        return "just now"
    return f"{timesince(when, now, depth=1)} ago"


LABELS = dict(FreezeAction.Action.choices)

# The fields of an action that describe_fields reads.
DESCRIBED_FIELDS = ("action", "created_at", "owner_email", "freeze_version", "new_reason")


def describe(action: FreezeAction, now: datetime.datetime | None = None) -> dict[str, Any]:
    """One action as the pages show it: ``kind``, ``verb``, ``ago``, ``at``, ``owner``,
    ``version``, ``reason`` (the proposed reason of a renewal request, else "") and ``text``
    ("acknowledged 2 days ago")."""
    return describe_fields({name: getattr(action, name) for name in DESCRIBED_FIELDS}, now)


def describe_fields(fields: dict[str, Any], now: datetime.datetime | None = None) -> dict[str, Any]:
    """:func:`describe` from an action's ``DESCRIBED_FIELDS`` (a ``values()`` row)."""
    verb = VERBS.get(fields["action"], fields["action"])
    when = ago(fields["created_at"], now)
    return {
        "kind": fields["action"],
        "label": LABELS.get(fields["action"], fields["action"]),
        "verb": verb,
        "ago": when,
        "at": fields["created_at"],
        "owner": fields["owner_email"],
        "version": fields["freeze_version"],
        "reason": fields["new_reason"],
        "text": f"{verb} {when}",
    }


def repository_actions(
    rows: Sequence[Mapping[str, Any]], renewal_requests: Iterable[FreezeAction]
) -> dict[str, Any]:
    """Extra context of the repository page, from ``repository_detail``'s freeze rows and open
    renewal requests (no query):

    ``freezes`` (the rows, each with ``answer``: its latest action on the current version as
    :func:`describe` gives it, or None, and ``unowned``: its handle resolves to nobody) and
    ``renewal_requests`` (described, each with its ``freeze_id``, and the freeze's current
    ``current_reason`` and ``expires``).
    """
    now = timezone.now()
    freezes = [
        {
            **row,
            "answer": describe(row["latest_action"], now) if row.get("latest_action") else None,
            "unowned": not row.get("owner_email"),
        }
        for row in rows
    ]
    by_pk = {row["id"]: row for row in rows}
    requests = [
        {
            **describe(action, now),
            "freeze_id": by_pk[action.freeze_id]["freeze_id"],
            "current_reason": by_pk[action.freeze_id]["reason"],
            "expires": by_pk[action.freeze_id]["expires"],
        }
        for action in renewal_requests
    ]
    return {"freezes": freezes, "renewal_requests": requests}


# Each repository's newest action on a current freeze's current version: the actions of current
# versions are few (they end with the version), so they are ranked per repository in one pass.
_LATEST = Read(
    "SELECT action, created_at, owner_email, freeze_version, new_reason, freeze_code, slug"
    " FROM (SELECT a.action, a.created_at, a.owner_email, a.freeze_version, a.new_reason,"
    "  f.freeze_id AS freeze_code, r.slug,"
    "  ROW_NUMBER() OVER (PARTITION BY f.repository_id ORDER BY a.created_at DESC, a.id DESC)"
    "  AS newest"
    "  FROM ledger_freezeaction a JOIN ledger_freeze f ON f.id = a.freeze_id"
    "  JOIN evidence_repository r ON r.id = f.repository_id"
    '  WHERE r.slug = ANY(%s) AND f."current" = %s AND a.freeze_version = f.version'
    " ) ranked WHERE newest = 1",
    [*fields(FreezeAction, *DESCRIBED_FIELDS), ("freeze_code", None), ("slug", None)],
)


def latest_by_repository(slugs: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each repository's most recent action on a current freeze's current version (one query).

    Keyed by repository slug, each the action's ``DESCRIBED_FIELDS`` and its freeze's
    ``freeze_id`` (as ``freeze_code``); repositories without one are left out.
    """
    slugs = list(slugs)
    if not slugs:
        return {}
    return {row.pop("slug"): row for row in _LATEST.rows([slugs, True])}


def overview_actions(rows: list[dict[str, Any]]) -> None:
    """Give each overview table row (``slug``, ``cells``…) its repository's ``answer``: the
    latest owner action on its current freezes, described, or None. One query."""
    now = timezone.now()
    latest = latest_by_repository(row["slug"] for row in rows)
    for row in rows:
        action = latest.get(row["slug"])
        row["answer"] = None
        if action is not None:
            row["answer"] = describe_fields(action, now) | {"freeze_id": action["freeze_code"]}
