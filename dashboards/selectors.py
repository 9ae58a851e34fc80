"""Reads behind the dashboard pages, already limited to the repositories the user may see.

Every function takes the user and answers only from ``evidence.visibility.repositories(user)``
(``repositories``, where taken, narrows that to some slugs; None or empty means all visible);
a repository, patch or freeze outside it is Http404, never 403, so a page does not reveal that
it exists. Debt figures and their charts come from ``DebtSnapshot`` rows only; the detail pages
read the ledger, reports and runs of one repository. Each function runs a fixed number of
queries whatever the number of repositories, patches or snapshots. Who sees what is decided by
the ORM's querysets; the reads of the rows of repositories already found visible, which the
pages run on every request, are written in SQL (``config.sql.Read``).
"""

from __future__ import annotations

import datetime
from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone

from config.sql import Read, fields
from dashboards import charts
from dashboards.models import SNAPSHOT_FIGURES, TOTAL_FIGURES, DebtSnapshot, DebtTotal
from evidence import visibility
from evidence.models import (
    Patch,
    Report,
    Repository,
    Run,
    TestName,
    TestResult,
)
from evidence.reports import ledger_freezes, patch_label
from freezedebt_ci.analysis.judge import analysis_section
from freezedebt_ci.ledger import expiry_status
from freezedebt_ci.policy import DEFAULT_SEVERITIES
from ledger.models import (
    Freeze,
    FreezeAction,
    FreezeEvent,
    GovernanceFile,
    Policy,
    PolicyChange,
)
from ledger.owners import owners_resolve
from ledger.selectors import current_version_actions

# "Change over 30 days" and "blocked share of patches in the last 30 days".
CHANGE_WINDOW_DAYS = 30
# The repository page's trends when no range is asked for.
DEFAULT_TREND_DAYS = 90
RECENT_PATCHES = 50
# Ledger events on the repository page; each freeze's page has its whole history.
RECENT_EVENTS = 60
RECENT_RUNS_FOR_FREEZE = 20

# The figures of an overview row whose 30-day change is shown.
OVERVIEW_FIGURES = (
    "active",
    "expiring",
    "expired",
    "unacknowledged",
    "skipped",
    "blocked_share",
    "freeze_days",
    "debt",
)
# The columns of debt_series rows, in order (also the CSV columns).
SERIES_FIELDS = SNAPSHOT_FIGURES

BUCKET_LABELS = {bucket.value: bucket.label for bucket in TestResult.Bucket}


def _snapshots_visible(
    user, repositories: list[str] | None, start: datetime.date, end: datetime.date
) -> QuerySet[DebtSnapshot]:
    """The snapshots of ``start``..``end`` of the visible repositories (of those named)."""
    snapshots = DebtSnapshot.objects.filter(day__gte=start, day__lte=end)
    return visibility.rows(snapshots, user, slugs=repositories)


def debt_score(figures: dict[str, Any]) -> int:
    """How much a repository owes, for sorting the overview (highest first).

    Expired and unacknowledged freezes weigh most: they are promises already broken. Skips count
    one each, and a week of frozen time counts like one skipped test.
    """
    return (
        5 * figures.get("expired", 0)
        + 3 * figures.get("unacknowledged", 0)
        + 2 * figures.get("expiring", 0)
        + figures.get("active", 0)
        + figures.get("skipped", 0)
        + figures.get("freeze_days", 0) // 7
    )


# The snapshot columns an overview row shows.
_ROW_FIGURES = (
    "active",
    "expiring",
    "expired",
    "unacknowledged",
    "skipped",
    "xfail",
    "freeze_days",
)


_DAY = DebtSnapshot._meta.get_field("day")


def _side(alias: str) -> str:
    """The day and figures of one side's snapshot (``n``: now, ``t``: 30 days before)."""
    return ", ".join(f"{alias}.{name}" for name in ("day", *_ROW_FIGURES))


# Per repository (of a list): its latest snapshot up to "now" (ever) and its latest within the
# 30 days to "30 days before", found through the (repository, day) index; and the patches
# reported and blocked in the 30 days to each, summed in one pass over the 60 days (sums
# correlated to each repository let PostgreSQL read every day of it).
_OVERVIEW = Read(
    f"SELECT d.id, {_side('n')}, {_side('t')},"  # noqa: S608 - our column names
    " sums.now_patches, sums.now_blocked, sums.then_patches, sums.then_blocked"
    " FROM (SELECT r.id,"
    "  (SELECT s.day FROM dashboards_debtsnapshot s WHERE s.repository_id = r.id"
    "   AND s.day <= %s ORDER BY s.day DESC LIMIT 1) AS now_day,"
    "  (SELECT s.day FROM dashboards_debtsnapshot s WHERE s.repository_id = r.id"
    "   AND s.day >= %s AND s.day <= %s ORDER BY s.day DESC LIMIT 1) AS then_day"
    "  FROM evidence_repository r WHERE r.id = ANY(%s)) d"
    " LEFT JOIN dashboards_debtsnapshot n ON n.repository_id = d.id AND n.day = d.now_day"
    " LEFT JOIN dashboards_debtsnapshot t ON t.repository_id = d.id AND t.day = d.then_day"
    " LEFT JOIN (SELECT repository_id,"
    "  SUM(CASE WHEN day > %s THEN patches ELSE 0 END) AS now_patches,"
    "  SUM(CASE WHEN day > %s THEN blocked ELSE 0 END) AS now_blocked,"
    "  SUM(CASE WHEN day <= %s THEN patches ELSE 0 END) AS then_patches,"
    "  SUM(CASE WHEN day <= %s THEN blocked ELSE 0 END) AS then_blocked"
    "  FROM dashboards_debtsnapshot WHERE repository_id = ANY(%s) AND day >= %s AND day <= %s"
    "  GROUP BY repository_id"
    " ) sums ON sums.repository_id = d.id",
    [
        ("pk", None),
        *(
            (f"{side}_{name}", DebtSnapshot._meta.get_field(name))
            for side in ("now", "then")
            for name in ("day", *_ROW_FIGURES)
        ),
        ("now_patches", None),
        ("now_blocked", None),
        ("then_patches", None),
        ("then_blocked", None),
    ],
)


def _figures(row: dict[str, Any], side: str) -> dict[str, Any] | None:
    """The overview figures of one side ("now" or "then") of an ``_OVERVIEW`` row: its
    snapshot's and the patches of the 30 days to its day; None without a snapshot."""
    day = row[f"{side}_day"]
    if day is None:
        return None
    figures = {name: row[f"{side}_{name}"] for name in _ROW_FIGURES}
    figures["patches_30d"] = row[f"{side}_patches"] or 0
    figures["blocked_30d"] = row[f"{side}_blocked"] or 0
    figures["blocked_share"] = charts.blocked_share(figures["blocked_30d"], figures["patches_30d"])
    figures["debt"] = debt_score(figures)
    figures["as_of"] = day
    return figures


def overview_rows(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> list[dict[str, Any]]:
    """One row per visible repository, highest debt first, with figures as of ``end``.

    Keys: ``slug``, ``name``, ``active``, ``expiring``, ``expired``, ``unacknowledged``,
    ``skipped``, ``xfail``, ``freeze_days``, ``patches_30d``, ``blocked_30d``,
    ``blocked_share`` (percent of the patches reported in the 30 days up to ``end``, None without
    patches), ``debt`` (the sort key, see :func:`debt_score`), ``as_of`` (the snapshot's day,
    None when the repository has no snapshot yet: its figures are then zero) and ``change``: for
    each figure of ``OVERVIEW_FIGURES``, its value minus its value 30 days before ``end``
    (None when either side is unknown). ``start`` is the page's range and does not change the
    figures; it is taken so that every selector of a page has the same arguments.

    Two queries, whatever the history: the visible repositories, then per repository its two
    snapshots and its four 30-day sums.
    """
    del start  # the figures are "now" (= end) and "30 days before"
    return _overview_rows(_visible_rows(user, repositories), end)


def _visible_rows(user, repositories: list[str] | None) -> list[dict[str, Any]]:
    """``pk``, ``slug`` and ``name`` of the visible repositories (of those named), by slug."""
    return list(
        visibility.repositories(user, slugs=repositories)
        .order_by("slug")
        .values("pk", "slug", "name")
    )


def _overview_rows(visible: list[dict[str, Any]], end: datetime.date) -> list[dict[str, Any]]:
    """:func:`overview_rows` of these repositories (rows of :func:`_visible_rows`)."""
    if not visible:
        return []
    before = end - datetime.timedelta(days=CHANGE_WINDOW_DAYS)
    # The earlier side counts only if a snapshot falls within the 30 days to it: an older one
    # would be the same row as "now" for a repository that stopped being snapshotted.
    since = before - datetime.timedelta(days=CHANGE_WINDOW_DAYS - 1)
    ids = [row["pk"] for row in visible]
    found = {
        row["pk"]: row
        for row in _OVERVIEW.rows([end, since, before, ids, *[before] * 4, ids, since, end])
    }
    result = []
    zero = dict.fromkeys(_ROW_FIGURES, 0)
    for repository in visible:
        row = found[repository["pk"]]
        now = _figures(row, "now")
        then = _figures(row, "then")
        figures = now or {
            **zero,
            "patches_30d": 0,
            "blocked_30d": 0,
            "blocked_share": None,
            "debt": 0,
            "as_of": None,
        }
        change: dict[str, float | int | None] = {}
        # Unknown rather than zero when one side is missing, or both are the same old row.
        unknown = now is None or then is None or now["as_of"] == then["as_of"]
        for name in OVERVIEW_FIGURES:
            if unknown or now[name] is None or then[name] is None:
                change[name] = None
            else:
                delta = now[name] - then[name]
                change[name] = round(delta, 1) if isinstance(delta, float) else delta
        result.append(
            {"slug": repository["slug"], "name": repository["name"], **figures, "change": change}
        )
    result.sort(key=lambda row: (-row["debt"], row["slug"]))
    return result


def debt_snapshots(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> QuerySet:
    """The snapshot rows of :func:`debt_series` as a query not yet run (for paging): dicts
    with ``day``, ``repository__slug`` and the figures of ``SERIES_FIELDS``, sorted by day then
    repository slug (a total order: one snapshot per repository and day)."""
    return (
        _snapshots_visible(user, repositories, start, end)
        .order_by("day", "repository__slug")
        .values("day", "repository__slug", *SERIES_FIELDS)
    )


def series_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row of :func:`debt_snapshots` as a ``debt_series`` row."""
    return {
        "date": row["day"],
        "repository": row["repository__slug"],
        **{name: row[name] for name in SERIES_FIELDS},
    }


def debt_series(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> list[dict[str, Any]]:
    """The snapshots of the visible repositories between ``start`` and ``end`` (inclusive).

    Rows sorted by date then repository slug, each with ``date``, ``repository`` (the slug) and
    the figures of ``SERIES_FIELDS``, straight from the snapshots. Days without a snapshot are
    absent, not zero. A page that draws sums across repositories reads :func:`debt_totals`
    instead: this is one row per repository and day.
    """
    rows = debt_snapshots(user=user, start=start, end=end, repositories=repositories)
    return [series_row(row) for row in rows]


# Every repository's: the database keeps their sums a day (DebtTotal).
_TOTALS = Read(
    f"SELECT day, {', '.join(TOTAL_FIGURES)} FROM dashboards_debttotal"  # noqa: S608 - our column names
    " WHERE day >= %s AND day <= %s ORDER BY day",
    [("date", DebtTotal._meta.get_field("day")), *fields(DebtTotal, *TOTAL_FIGURES)],
)
# Some repositories': their snapshots summed.
_TOTALS_OF = Read(
    f"SELECT day, {', '.join(f'SUM({name})' for name in TOTAL_FIGURES)}"  # noqa: S608 - our column names
    " FROM dashboards_debtsnapshot WHERE day >= %s AND day <= %s AND repository_id = ANY(%s)"
    " GROUP BY day ORDER BY day",
    [("date", _DAY), *((name, None) for name in TOTAL_FIGURES)],
    replan=True,  # a range of days: a year of many repositories is best read whole
)


def debt_totals(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> dict[str, list[dict[str, Any]]]:
    """The overview charts' numbers, summed by the database across the visible repositories.

    ``daily``: one row per day with a snapshot, sorted, with ``date`` and the sum of each figure
    of ``TOTAL_FIGURES`` (what ``charts.daily_totals`` makes of :func:`debt_series`). ``weekly``:
    one row per ISO week, sorted, with ``week`` (its Monday), ``patches``, ``blocked`` and
    ``share`` (percent, None without patches; what ``charts.blocked_share_table`` makes of
    :func:`weekly_from_series`). Weeks cut by the range count only the days inside it. One
    query, of rows per day rather than per repository and day: every repository's sums as the
    database keeps them (``DebtTotal``), or some repositories' snapshots summed (and then one
    more query for the ids of those repositories).
    """
    ids = None
    if not visibility.sees_all(user, repositories):
        ids = list(visibility.repositories(user, slugs=repositories).values_list("pk", flat=True))
    return _debt_totals(ids, start, end)


def _debt_totals(
    ids: list[int] | None, start: datetime.date, end: datetime.date
) -> dict[str, list[dict[str, Any]]]:
    """:func:`debt_totals` of the repositories of ``ids`` (None: every one)."""
    if ids is None:
        daily = _TOTALS.rows([start, end])
    else:
        daily = _TOTALS_OF.rows([start, end, ids]) if ids else []
    # The weeks from the days: the same sums, without another pass over the snapshots.
    return {"daily": daily, "weekly": charts.blocked_share_table(weekly_from_series(daily))}


def overview(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> dict[str, list[dict[str, Any]]]:
    """What the overview page shows, the visible repositories read once: ``rows`` as
    :func:`overview_rows` gives them, ``daily`` and ``weekly`` as :func:`debt_totals` does."""
    visible = _visible_rows(user, repositories)
    ids = None if visibility.sees_all(user, repositories) else [row["pk"] for row in visible]
    return {"rows": _overview_rows(visible, end), **_debt_totals(ids, start, end)}


def week_start(day: datetime.date) -> datetime.date:
    """The Monday of ``day``'s ISO week."""
    return day - datetime.timedelta(days=day.weekday())


def weekly_from_series(series: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Patches reported and blocked per ISO week and repository, from ``debt_series`` rows
    (or daily totals, without a repository): rows sorted by week then repository with
    ``week`` (its Monday), ``repository``, ``patches``, ``blocked``, ``share`` (percent, None
    for a week without patches). Weeks cut by the range count only the days inside it."""
    totals: dict[tuple[datetime.date, str], list[int]] = {}
    for row in series:
        key = (week_start(row["date"]), row.get("repository", ""))
        counts = totals.setdefault(key, [0, 0])
        counts[0] += row["patches"]
        counts[1] += row["blocked"]
    return [
        {
            "week": week,
            "repository": slug,
            "patches": patches,
            "blocked": blocked,
            "share": charts.blocked_share(blocked, patches),
        }
        for (week, slug), (patches, blocked) in sorted(totals.items())
    ]


# --- detail pages --------------------------------------------------------------------------

# The repository page's reads of one (visible) repository's rows, in SQL: see config.sql.


_FREEZES = Read.of(
    Freeze, 'WHERE repository_id = %s AND "current" = %s ORDER BY expires, freeze_id'
)
# The latest events, with the count of all of them and of the silent renewals among them
# (window counts, taken before the limit), without the freezes' JSON.
_EVENTS = Read(
    "SELECT e.kind, e.silent, e.chain, e.created_at, v.sha, f.freeze_id,"
    " COUNT(*) OVER (), SUM(CASE WHEN e.silent THEN 1 ELSE 0 END) OVER ()"
    " FROM ledger_freezeevent e"
    " JOIN ledger_ledgerversion v ON v.id = e.ledger_version_id"
    " JOIN ledger_freeze f ON f.id = e.freeze_id"
    " WHERE e.repository_id = %s ORDER BY e.created_at DESC, e.id DESC LIMIT %s",
    [
        *fields(FreezeEvent, "kind", "silent", "chain", "created_at"),
        ("sha", None),
        ("freeze_id", None),
        ("total", None),
        ("silent_total", None),
    ],
)
# The problems' codes, not the report bodies: a body carries per-file rows and test lists,
# megabytes for a large suite, and this list shows fifty of them.
_PATCHES = Read(
    "SELECT p.id, p.ref, p.title, p.author, p.created_at, r.status, r.verdict, r.codes"
    " FROM evidence_patch p LEFT JOIN evidence_report r ON r.patch_id = p.id"
    " WHERE p.repository_id = %s ORDER BY p.created_at DESC, p.id DESC LIMIT %s",
    [
        *fields(Patch, "id", "ref", "title", "author", "created_at"),
        *fields(Report, "status", "verdict", "codes"),
    ],
)
_SNAPSHOTS = Read(
    f"SELECT day, {', '.join(SERIES_FIELDS)} FROM dashboards_debtsnapshot"  # noqa: S608 - our column names
    " WHERE repository_id = %s AND day >= %s AND day <= %s ORDER BY day",
    fields(DebtSnapshot, "day", *SERIES_FIELDS),
)
_POLICY = Read.of(Policy, "WHERE repository_id = %s")
# The latest audited changes, each with its author's username (None once the user is gone).
POLICY_CHANGES = 20
_POLICY_CHANGES = Read(
    "SELECT c.before, c.after, c.created_at, u.username FROM ledger_policychange c"
    " LEFT JOIN auth_user u ON u.id = c.changed_by_id"
    " WHERE c.repository_id = %s ORDER BY c.created_at DESC, c.id DESC LIMIT %s",
    [*fields(PolicyChange, "before", "after", "created_at"), ("by", None)],
)


def _freeze_row(
    freeze: Freeze, *, today: datetime.date, owners: dict, action: FreezeAction | None
) -> dict[str, Any]:
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


def _policy(repository: Repository) -> dict[str, Any]:
    stored = _POLICY.instances(Policy, [repository.pk])
    policy = stored[0] if stored else None
    settings_ = (policy or Policy(repository=repository)).snapshot()
    severities = {**DEFAULT_SEVERITIES, **settings_["severities"]}
    return {
        "stored": policy is not None,
        "severities": dict(sorted(severities.items())),
        # The severities set for this repository (the form shows the rest as "default").
        "overrides": dict(policy.severities) if policy else {},
        "max_freeze_days": settings_["max_freeze_days"],
        "fixture_paths": settings_["fixture_paths"],
        "ledger_path": settings_["ledger_path"],
        "require_analysis": settings_["require_analysis"],
        "changes": _POLICY_CHANGES.rows([repository.pk, POLICY_CHANGES]),
    }


# Versions of the fixture lock and oracle map the repository page lists.
RECENT_GOVERNANCE_FILES = 20


def repository_detail(
    *,
    user,
    slug: str,
    start: datetime.date | None = None,
    end: datetime.date | None = None,
    today: datetime.date | None = None,
) -> dict[str, Any]:
    """Everything the repository page shows; Http404 when the user may not see it.

    Keys: ``repository``; ``series`` (debt_series rows of this repository, ``start``..``end``,
    by default the last 90 days); ``weekly`` (weekly_from_series rows); ``freezes`` (current
    ledger, soonest expiry first: ``freeze_id``, ``test``, ``owner``/``owner_name``/
    ``owner_email``, ``status`` active/expiring/expired/invalid, ``days_left``, ``acknowledged``
    and ``latest_action`` on the current version); ``counts`` (freezes per status, where
    ``active`` includes the expiring ones as in the snapshots, and ``unacknowledged``);
    ``history`` (the ``RECENT_EVENTS`` latest ledger events, newest first: ``kind``,
    ``freeze_id``, ``silent``, ``chain``, ``created_at``, ``sha``); ``history_total`` (all the
    repository's events) and ``silent_renewals`` (all its silent ones); ``chains`` (freeze id
    to renewals in its current chain, only those renewed); ``patches`` (the 50 latest with
    ``verdict``, ``status`` and problem ``codes``); ``renewal_requests`` (the open ones, oldest
    first, as FreezeAction models); ``policy`` (effective severities, limits, paths,
    ``overrides``: the severities stored for this repository, and the last 20 audited changes).
    The snapshots are read once, for ``series``; ``weekly`` is derived from it.
    """
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
        _freeze_row(freeze, today=today, owners=owners, action=latest.get(freeze.pk))
        for freeze in freezes
    ]
    # As in the snapshots: "active" is every freeze in force, the expiring ones included.
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

    # The repository is known to be visible: its snapshots, once, without the visibility join.
    series = [
        {
            "date": row[0],
            "repository": repository.slug,
            **dict(zip(SERIES_FIELDS, row[1:], strict=True)),
        }
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
        "history": history,
        "history_total": history_total,
        "silent_renewals": silent_renewals,
        "chains": {f.freeze_id: f.renewals for f in freezes if f.renewals},
        "patches": patches,
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


def _run_for(repository: Repository, sha: str, label: str) -> Run | None:
    return (
        Run.objects.defer("raw")
        .filter(repository=repository, sha=sha, label=label)
        .order_by("-attempt")
        .first()
    )


DRIFT_KEYS = ("image_digest", "lockfile_sha256", "python")


def patch_detail(*, user, repository_slug: str, patch_id: int) -> dict[str, Any]:
    """The patch page: its fields, report and runs; Http404 when not visible or not found.

    Keys: ``repository``, ``patch``, ``report`` (the §5.8 body; a pending placeholder when
    none), ``status``, ``verdict``, ``problems`` (blocking first), ``figures``, ``new_skips``,
    ``lost``, ``new_xfails``, ``retired_skips``, ``frozen_surface_hits``, ``per_file`` (rows
    with ``swap`` true when the file both lost tests and gained others: cheap for expensive),
    ``earned``, ``borrowed``, ``drift`` (``key``, ``base``, ``head`` for each meta key that
    differs), ``base_run``/``head_run`` (their ids, None when missing), ``analysis``.
    """
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
        # Who must act: the patch's own problems, and those inherited from the ledger.
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


# The freeze page's reads, in SQL (see config.sql), of a visible repository's rows.
_FREEZE = Read.of(Freeze, "WHERE repository_id = %s AND freeze_id = %s ORDER BY id LIMIT 1")
_FREEZE_ACTIONS = Read.of(FreezeAction, "WHERE freeze_id = %s ORDER BY created_at DESC, id DESC")
# Of each event's ledger version only the sha: a version holds the ledger's whole text.
_FREEZE_EVENTS = Read(
    "SELECT e.kind, e.silent, e.chain, v.sha, e.created_at, e.before, e.after"
    " FROM ledger_freezeevent e JOIN ledger_ledgerversion v ON v.id = e.ledger_version_id"
    " WHERE e.freeze_id = %s ORDER BY e.created_at, e.id",
    [
        *fields(FreezeEvent, "kind", "silent", "chain"),
        ("sha", None),
        *fields(FreezeEvent, "created_at", "before", "after"),
    ],
)
_READY_RUNS = Read(
    "SELECT id, sha, branch, label, created_at FROM evidence_run"
    " WHERE repository_id = %s AND status = %s ORDER BY created_at DESC, id DESC LIMIT %s",
    [("pk", None), *fields(Run, "sha", "branch", "label", "created_at")],
)
_FREEZE_RESULTS = Read(
    "SELECT r.run_id, r.bucket FROM evidence_testresult r"
    " JOIN evidence_testname t ON t.id = r.test_id"
    " WHERE t.repository_id = %s AND t.nodeid_sha256 = %s AND r.run_id = ANY(%s)",
    [("run_id", None), ("bucket", None)],
)


def freeze_detail(*, user, repository_slug: str, freeze_id: str) -> dict[str, Any]:
    """The freeze page; Http404 when not visible or not found. ``freeze_id`` is the ledger id.

    Keys: ``repository``, ``freeze`` (the model), ``row`` (as in repository_detail's freezes),
    ``covers`` (the blast radius), ``events`` (oldest first: ``kind``, ``silent``, ``chain``,
    ``sha``, ``created_at``, ``before``, ``after``), ``actions`` (newest first, every version),
    ``outcomes`` (the repository's last 20 runs, newest first: ``run``, ``sha``, ``branch``,
    ``created_at``, ``outcome`` passed/failed/skipped/xfail or ``not run``).
    """
    repository = visibility.repository(user, repository_slug)
    found = _FREEZE.instances(Freeze, [repository.pk, freeze_id])
    if not found:
        raise Http404("No such freeze.")
    freeze = found[0]
    today = timezone.localdate()
    owners = owners_resolve([freeze.owner])
    actions = _FREEZE_ACTIONS.instances(FreezeAction, [freeze.pk])
    current_action = next((a for a in actions if a.freeze_version == freeze.version), None)
    events = _FREEZE_EVENTS.rows([freeze.pk])
    runs = _READY_RUNS.rows([repository.pk, Run.Status.READY, RECENT_RUNS_FOR_FREEZE])
    # The frozen test's result in each of them, through its name's digest (one query).
    buckets: dict[int, int] = {}
    if runs:
        params = [repository.pk, TestName.digest(freeze.nodeid), [run["pk"] for run in runs]]
        buckets = dict(_FREEZE_RESULTS.values(params))
    outcomes = [
        {
            "run": run["pk"],
            "sha": run["sha"],
            "branch": run["branch"],
            "label": run["label"],
            "created_at": run["created_at"],
            "outcome": BUCKET_LABELS.get(buckets.get(run["pk"], 0), "not run"),
        }
        for run in runs
    ]
    return {
        "repository": repository,
        "freeze": freeze,
        "row": _freeze_row(
            freeze,
            today=today,
            owners=owners,
            action=current_action,
        )
        | {"current": freeze.current},
        "covers": list(freeze.covers),
        "events": events,
        "actions": actions,
        "outcomes": outcomes,
    }
