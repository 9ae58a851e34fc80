"""The repository page's reads: its trends, current ledger, history, patches and policy."""

from __future__ import annotations

import datetime
from typing import Any, TypedDict, cast

from django.utils import timezone

from dashboards.models import DebtSnapshot
from dashboards.selectors.series import SERIES_FIELDS, SeriesRow, WeekRow, weekly_from_series
from evidence import visibility
from evidence.models import Patch, Report, Repository
from freezedebt_ci.ledger import expiry_status
from freezedebt_ci.policy import DEFAULT_SEVERITIES
from ledger.models import (
    Freeze,
    FreezeAction,
    FreezeEvent,
    GovernanceFile,
    LedgerVersion,
    Policy,
    PolicyChange,
)
from ledger.owners import owners_resolve
from ledger.selectors import current_version_actions
from sqlreads import Read, fields

# The trends when no range is asked for.
DEFAULT_TREND_DAYS = 90
RECENT_PATCHES = 50
# Ledger events on the page; each freeze's page has its whole history.
RECENT_EVENTS = 60
POLICY_CHANGES = 20
# Versions of the fixture lock and oracle map the page lists.
RECENT_GOVERNANCE_FILES = 20


class FreezeRow(TypedDict):
    """A freeze as the ledger tables show it. ``status``: active, expiring, expired or
    invalid; ``days_left`` None without an expiry; ``latest_action`` its owner's latest answer
    on its current version (``acknowledged``: there is one)."""

    freeze: Freeze
    id: int
    freeze_id: str
    test: str
    covers: list[str]
    owner: str
    owner_name: str | None
    owner_email: str | None
    opened: datetime.date | None
    expires: datetime.date | None
    days_left: int | None
    status: str
    reason: str
    renewals: int
    version: int
    acknowledged: bool
    latest_action: FreezeAction | None


class EventRow(TypedDict):
    kind: str
    silent: bool
    chain: int
    created_at: datetime.datetime
    sha: str
    freeze_id: str


class PatchRow(TypedDict):
    """A patch with its report's ``status``, ``verdict`` (pending without a report) and
    problem ``codes``, not the report's body."""

    id: int
    ref: str
    title: str
    author: str
    created_at: datetime.datetime
    status: str
    verdict: str
    codes: list[str]


class PolicyView(TypedDict):
    """The effective policy; ``overrides`` the severities stored for this repository (the
    form shows the rest as "default"); ``changes`` the latest audited changes, each with its
    author's ``by`` username (None once the user is gone)."""

    stored: bool
    severities: dict[str, str]
    overrides: dict[str, str]
    max_freeze_days: int
    fixture_paths: list[str]
    ledger_path: str
    require_analysis: bool
    changes: list[dict[str, Any]]


class RepositoryDetail(TypedDict):
    """Everything the repository page shows. ``counts``: freezes per status, ``active``
    including the expiring ones as the snapshots do, and ``unacknowledged``. ``history``: the
    latest events, newest first, of ``history_total`` (``silent_renewals`` of them silent).
    ``chains``: renewals in each renewed freeze's current chain. ``renewal_requests``: the
    open ones, oldest first."""

    repository: Repository
    start: datetime.date
    end: datetime.date
    series: list[SeriesRow]
    weekly: list[WeekRow]
    freezes: list[FreezeRow]
    counts: dict[str, int]
    history: list[EventRow]
    history_total: int
    silent_renewals: int
    chains: dict[str, int]
    patches: list[PatchRow]
    renewal_requests: list[FreezeAction]
    policy: PolicyView
    governance_files: list[GovernanceFile]


# Reads of the rows of a repository already found visible, run on every request (sqlreads).
_FREEZES = Read.of(
    Freeze, 'WHERE repository_id = %s AND "current" = %s ORDER BY expires, freeze_id'
)
# The latest events, with the count of all of them and of the silent renewals among them
# (window counts, taken before the limit), without the freezes' JSON.
_EVENTS = Read(
    """
    SELECT e.kind, e.silent, e.chain, e.created_at, v.sha, f.freeze_id,
           COUNT(*) OVER (), SUM(CASE WHEN e.silent THEN 1 ELSE 0 END) OVER ()
      FROM {FreezeEvent} e
      JOIN {LedgerVersion} v ON v.id = e.ledger_version_id
      JOIN {Freeze} f ON f.id = e.freeze_id
     WHERE e.repository_id = %s
     ORDER BY e.created_at DESC, e.id DESC
     LIMIT %s
    """,
    [
        *fields(FreezeEvent, "kind", "silent", "chain", "created_at"),
        ("sha", None),
        ("freeze_id", None),
        ("total", None),
        ("silent_total", None),
    ],
    tables={"FreezeEvent": FreezeEvent, "LedgerVersion": LedgerVersion, "Freeze": Freeze},
)
# The problems' codes, not the report bodies: a body carries per-file rows and test lists,
# megabytes for a large suite, and this list shows fifty of them.
_PATCHES = Read(
    """
    SELECT p.id, p.ref, p.title, p.author, p.created_at, r.status, r.verdict, r.codes
      FROM {Patch} p
      LEFT JOIN {Report} r ON r.patch_id = p.id
     WHERE p.repository_id = %s
     ORDER BY p.created_at DESC, p.id DESC
     LIMIT %s
    """,
    [
        *fields(Patch, "id", "ref", "title", "author", "created_at"),
        *fields(Report, "status", "verdict", "codes"),
    ],
    tables={"Patch": Patch, "Report": Report},
)
_SNAPSHOTS = Read(
    """
    SELECT day, active, expiring, expired, unacknowledged, freeze_days, skipped, xfail,
           patches, blocked, passed, new_skips, median_net_delta, earned, borrowed
      FROM {DebtSnapshot}
     WHERE repository_id = %s AND day >= %s AND day <= %s
     ORDER BY day
    """,
    fields(DebtSnapshot, "day", *SERIES_FIELDS),
    tables={"DebtSnapshot": DebtSnapshot},
)
_POLICY = Read.of(Policy, "WHERE repository_id = %s")
_POLICY_CHANGES = Read(
    """
    SELECT c.before, c.after, c.created_at, u.username
      FROM {PolicyChange} c
      LEFT JOIN auth_user u ON u.id = c.changed_by_id
     WHERE c.repository_id = %s
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT %s
    """,
    [*fields(PolicyChange, "before", "after", "created_at"), ("by", None)],
    tables={"PolicyChange": PolicyChange},
)


def freeze_row(
    freeze: Freeze, *, today: datetime.date, owners: dict, action: FreezeAction | None
) -> FreezeRow:
    owner = owners.get(freeze.owner)
    days_left = (freeze.expires - today).days if freeze.expires is not None else None
    return {
        "freeze": freeze,
        "id": freeze.pk,
        "freeze_id": freeze.freeze_id,
        "test": freeze.nodeid,
        "covers": list(freeze.covers),
        "owner": freeze.owner,
        "owner_name": owner.name if owner else None,
        "owner_email": owner.email if owner else None,
        "opened": freeze.opened,
        "expires": freeze.expires,
        "days_left": days_left,
        "status": expiry_status(freeze.expires, today),
        "reason": freeze.reason,
        "renewals": freeze.renewals,
        "version": freeze.version,
        "acknowledged": action is not None,
        "latest_action": action,
    }


def _policy(repository: Repository) -> PolicyView:
    stored = _POLICY.instances(Policy, [repository.pk])
    policy = stored[0] if stored else None
    settings_: dict[str, Any] = (policy or Policy(repository=repository)).snapshot()
    severities = {**DEFAULT_SEVERITIES, **settings_["severities"]}
    return {
        "stored": policy is not None,
        "severities": dict(sorted(severities.items())),
        "overrides": dict(policy.severities) if policy else {},
        "max_freeze_days": settings_["max_freeze_days"],
        "fixture_paths": settings_["fixture_paths"],
        "ledger_path": settings_["ledger_path"],
        "require_analysis": settings_["require_analysis"],
        "changes": _POLICY_CHANGES.rows([repository.pk, POLICY_CHANGES]),
    }


def repository_detail(
    *,
    user,
    slug: str,
    start: datetime.date | None = None,
    end: datetime.date | None = None,
    today: datetime.date | None = None,
) -> RepositoryDetail:
    """The repository page (trends of ``start``..``end``, by default the last 90 days);
    Http404 when the user may not see it. The snapshots are read once, for ``series``."""
    repository = visibility.repository(user, slug)
    today = today or timezone.localdate()
    end = end or today
    start = start or end - datetime.timedelta(days=DEFAULT_TREND_DAYS - 1)

    freezes = _FREEZES.instances(Freeze, [repository.pk, True])
    owners = owners_resolve(freeze.owner for freeze in freezes)
    # The owners' answers on the current versions, once: each freeze's latest, and the
    # renewal requests (open while on the current version of a freeze still in the ledger).
    answers = current_version_actions(freezes)
    latest = {action.freeze_id: action for action in answers}
    rows = [
        freeze_row(freeze, today=today, owners=owners, action=latest.get(freeze.pk))
        for freeze in freezes
    ]
    counts = dict.fromkeys(("active", "expiring", "expired", "invalid"), 0)
    for row in rows:
        counts[row["status"]] += 1
    counts["active"] += counts["expiring"]
    counts["unacknowledged"] = sum(
        1
        for row in rows
        if row["status"] in ("active", "expiring", "expired") and not row["acknowledged"]
    )

    history = _EVENTS.rows([repository.pk, RECENT_EVENTS])
    # Every row carries the counts of all the events; taken once, off the rows.
    history_total, silent_renewals = (
        (history[0]["total"], history[0]["silent_total"]) if history else (0, 0)
    )
    for event in history:
        del event["total"], event["silent_total"]

    patches = _PATCHES.rows([repository.pk, RECENT_PATCHES])
    for patch in patches:  # a patch without a report yet is pending
        patch["status"] = patch["status"] or Report.Status.PENDING
        patch["verdict"] = patch["verdict"] or Report.Verdict.PENDING
        patch["codes"] = patch["codes"] or []

    series = [
        cast(
            SeriesRow,
            {
                "date": row[0],
                "repository": repository.slug,
                **dict(zip(SERIES_FIELDS, row[1:], strict=True)),
            },
        )
        for row in _SNAPSHOTS.values([repository.pk, start, end])
    ]
    return {
        "repository": repository,
        "start": start,
        "end": end,
        "series": series,
        "weekly": weekly_from_series(series),
        "freezes": rows,
        "counts": counts,
        "history": cast(list[EventRow], history),
        "history_total": history_total,
        "silent_renewals": silent_renewals,
        "chains": {f.freeze_id: f.renewals for f in freezes if f.renewals},
        "patches": cast(list[PatchRow], patches),
        "renewal_requests": [
            action for action in answers if action.action == FreezeAction.Action.RENEWAL
        ],
        "policy": _policy(repository),
        "governance_files": list(
            GovernanceFile.objects.filter(repository=repository)
            .defer("raw")  # the file itself: up to megabytes each, the page lists versions
            .order_by("kind", "-created_at", "-pk")[:RECENT_GOVERNANCE_FILES]
        ),
    }
