"""The overview's reads: a row per visible repository, and the charts' sums across them."""

from __future__ import annotations

import datetime
from typing import Any, TypedDict, cast

from django.db.models import Field

from dashboards import charts
from dashboards.models import TOTAL_FIGURES, DebtSnapshot, DebtTotal
from dashboards.selectors.series import WeekRow, weekly_from_series
from evidence import visibility
from evidence.models import Repository
from sqlreads import Read, fields

# "Change over 30 days" and "blocked share of patches in the last 30 days".
CHANGE_WINDOW_DAYS = 30

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


class OverviewRow(TypedDict):
    """A repository's figures as of the range's end. ``as_of`` is its snapshot's day (None
    before its first snapshot: the figures are then zero); ``blocked_share`` the percent of
    the patches of the 30 days to it (None without patches); ``change`` each figure of
    ``OVERVIEW_FIGURES`` minus its value 30 days before (None when either side is unknown)."""

    slug: str
    name: str
    active: int
    expiring: int
    expired: int
    unacknowledged: int
    skipped: int
    xfail: int
    freeze_days: int
    patches_30d: int
    blocked_30d: int
    blocked_share: float | None
    debt: int
    as_of: datetime.date | None
    change: dict[str, float | int | None]


class TotalRow(TypedDict):
    """The sums of one day's snapshots of the repositories read (``TOTAL_FIGURES``)."""

    date: datetime.date
    active: int
    expiring: int
    expired: int
    unacknowledged: int
    skipped: int
    xfail: int
    new_skips: int
    patches: int
    blocked: int


class Totals(TypedDict):
    daily: list[TotalRow]
    weekly: list[WeekRow]


class Overview(Totals):
    rows: list[OverviewRow]


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


# Per repository: its latest snapshot up to "now" and its latest within the 30 days to "30 days
# before", found through the (repository, day) index, and the patches reported and blocked in
# the 30 days to each, summed in one pass over the 60 days (sums correlated to each repository
# let PostgreSQL read every day of it).
_OVERVIEW = Read(
    """
    SELECT d.id,
           n.day, n.active, n.expiring, n.expired, n.unacknowledged, n.skipped, n.xfail,
           n.freeze_days,
           t.day, t.active, t.expiring, t.expired, t.unacknowledged, t.skipped, t.xfail,
           t.freeze_days,
           sums.now_patches, sums.now_blocked, sums.then_patches, sums.then_blocked
      FROM (SELECT r.id,
                   (SELECT s.day FROM {DebtSnapshot} s
                     WHERE s.repository_id = r.id AND s.day <= %s
                     ORDER BY s.day DESC LIMIT 1) AS now_day,
                   (SELECT s.day FROM {DebtSnapshot} s
                     WHERE s.repository_id = r.id AND s.day >= %s AND s.day <= %s
                     ORDER BY s.day DESC LIMIT 1) AS then_day
              FROM {Repository} r
             WHERE r.id = ANY(%s)) d
      LEFT JOIN {DebtSnapshot} n ON n.repository_id = d.id AND n.day = d.now_day
      LEFT JOIN {DebtSnapshot} t ON t.repository_id = d.id AND t.day = d.then_day
      LEFT JOIN (SELECT repository_id,
                        SUM(CASE WHEN day > %s THEN patches ELSE 0 END) AS now_patches,
                        SUM(CASE WHEN day > %s THEN blocked ELSE 0 END) AS now_blocked,
                        SUM(CASE WHEN day <= %s THEN patches ELSE 0 END) AS then_patches,
                        SUM(CASE WHEN day <= %s THEN blocked ELSE 0 END) AS then_blocked
                   FROM {DebtSnapshot}
                  WHERE repository_id = ANY(%s) AND day >= %s AND day <= %s
                  GROUP BY repository_id) sums ON sums.repository_id = d.id
    """,
    [
        ("pk", None),
        *(
            (f"{side}_{name}", cast(Field, DebtSnapshot._meta.get_field(name)))
            for side in ("now", "then")
            for name in ("day", *_ROW_FIGURES)
        ),
        ("now_patches", None),
        ("now_blocked", None),
        ("then_patches", None),
        ("then_blocked", None),
    ],
    tables={"DebtSnapshot": DebtSnapshot, "Repository": Repository},
)


def _figures(row: dict[str, Any], side: str) -> dict[str, Any] | None:
    """The figures of one side ("now" or "then") of an ``_OVERVIEW`` row; None without a
    snapshot."""
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
) -> list[OverviewRow]:
    """One row per visible repository (of those named), highest debt first, as of ``end``;
    ``start`` does not change the figures (every selector of a page takes the same
    arguments). Two queries, whatever the history."""
    del start
    return _overview_rows(_visible_rows(user, repositories), end)


def _visible_rows(user, repositories: list[str] | None) -> list[dict[str, Any]]:
    visible = visibility.repositories(user, slugs=repositories).order_by("slug")
    return [dict(row) for row in visible.values("pk", "slug", "name")]


def _overview_rows(visible: list[dict[str, Any]], end: datetime.date) -> list[OverviewRow]:
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
    result: list[OverviewRow] = []
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
            if unknown or now is None or then is None or now[name] is None or then[name] is None:
                change[name] = None
            else:
                delta = now[name] - then[name]
                change[name] = round(delta, 1) if isinstance(delta, float) else delta
        row = {"slug": repository["slug"], "name": repository["name"], **figures, "change": change}
        result.append(cast(OverviewRow, row))
    result.sort(key=lambda row: (-row["debt"], row["slug"]))
    return result


_TOTALS = Read(
    """
    SELECT day, active, expiring, expired, unacknowledged, skipped, xfail, new_skips, patches,
           blocked
      FROM {DebtTotal}
     WHERE day >= %s AND day <= %s
     ORDER BY day
    """,
    [("date", DebtTotal._meta.get_field("day")), *fields(DebtTotal, *TOTAL_FIGURES)],
    tables={"DebtTotal": DebtTotal},
)
# Some repositories': their snapshots summed.
_TOTALS_OF = Read(
    """
    SELECT day, SUM(active), SUM(expiring), SUM(expired), SUM(unacknowledged), SUM(skipped),
           SUM(xfail), SUM(new_skips), SUM(patches), SUM(blocked)
      FROM {DebtSnapshot}
     WHERE day >= %s AND day <= %s AND repository_id = ANY(%s)
     GROUP BY day
     ORDER BY day
    """,
    [("date", DebtSnapshot._meta.get_field("day")), *((name, None) for name in TOTAL_FIGURES)],
    tables={"DebtSnapshot": DebtSnapshot},
    replan=True,  # a range of days: a year of many repositories is best read whole
)


def debt_totals(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> Totals:
    """The overview charts' numbers across the visible repositories: a row a day with a
    snapshot, and a row a week. Whoever sees every repository reads ``DebtTotal``; others the
    sums of their repositories' snapshots (one more query, for their ids)."""
    ids = None
    if not visibility.sees_all(user, repositories):
        ids = list(visibility.repositories(user, slugs=repositories).values_list("pk", flat=True))
    return _debt_totals(ids, start, end)


def _debt_totals(ids: list[int] | None, start: datetime.date, end: datetime.date) -> Totals:
    if ids is None:
        daily = _TOTALS.rows([start, end])
    else:
        daily = _TOTALS_OF.rows([start, end, ids]) if ids else []
    # The weeks from the days: the same sums, without another pass over the snapshots.
    weekly = charts.blocked_share_table(weekly_from_series(daily))
    return {"daily": cast(list[TotalRow], daily), "weekly": cast(list[WeekRow], weekly)}


def overview(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> Overview:
    """The overview page's ``rows`` and ``daily``/``weekly`` totals, the visible repositories
    read once."""
    visible = _visible_rows(user, repositories)
    ids = None if visibility.sees_all(user, repositories) else [row["pk"] for row in visible]
    return {"rows": _overview_rows(visible, end), **_debt_totals(ids, start, end)}
