"""Debt series shared by the pages: snapshot rows per repository and day, and their weeks."""

from __future__ import annotations

import datetime
from typing import Any, TypedDict, cast

from django.db.models import QuerySet

from dashboards import charts
from dashboards.models import SNAPSHOT_FIGURES, DebtSnapshot
from evidence import visibility

# The columns of debt_series rows, in order (also the CSV columns).
SERIES_FIELDS = SNAPSHOT_FIGURES


class SeriesRow(TypedDict, total=False):
    """One repository's snapshot of one day; ``repository`` is its slug (absent from sums
    across repositories). Days without a snapshot have no row, rather than zeros."""

    date: datetime.date
    repository: str
    active: int
    expiring: int
    expired: int
    unacknowledged: int
    freeze_days: int
    skipped: int
    xfail: int
    patches: int
    blocked: int
    passed: int
    new_skips: int
    median_net_delta: float | None
    earned: int
    borrowed: int


class WeekRow(TypedDict):
    """Patches reported and blocked in an ISO week (``week``: its Monday); ``share`` is the
    blocked percent, None without patches. Weeks cut by the range count the days inside it."""

    week: datetime.date
    repository: str
    patches: int
    blocked: int
    share: float | None


def _snapshots_visible(
    user, repositories: list[str] | None, start: datetime.date, end: datetime.date
) -> QuerySet[DebtSnapshot]:
    snapshots = DebtSnapshot.objects.filter(day__gte=start, day__lte=end)
    return visibility.rows(snapshots, user, slugs=repositories)


def debt_snapshots(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> QuerySet:
    """The rows of :func:`debt_series` as a query not yet run (for paging), as ``values()``
    with ``day`` and ``repository__slug``, in a total order (day, then slug)."""
    return (
        _snapshots_visible(user, repositories, start, end)
        .order_by("day", "repository__slug")
        .values("day", "repository__slug", *SERIES_FIELDS)
    )


def series_row(row: dict[str, Any]) -> SeriesRow:
    """A row of :func:`debt_snapshots` as a :class:`SeriesRow`."""
    figures = {name: row[name] for name in SERIES_FIELDS}
    return cast(SeriesRow, {"date": row["day"], "repository": row["repository__slug"], **figures})


def debt_series(
    *,
    user,
    start: datetime.date,
    end: datetime.date,
    repositories: list[str] | None,
) -> list[SeriesRow]:
    """The snapshots of the visible repositories (of those named) between ``start`` and
    ``end`` inclusive, by date then slug. Sums across repositories: ``overview.debt_totals``."""
    rows = debt_snapshots(user=user, start=start, end=end, repositories=repositories)
    return [series_row(row) for row in rows]


def week_start(day: datetime.date) -> datetime.date:
    """The Monday of ``day``'s ISO week."""
    return day - datetime.timedelta(days=day.weekday())


def weekly_from_series(series: list[SeriesRow] | list[dict[str, Any]]) -> list[WeekRow]:
    """Each week's patches and blocked of each repository (or of the daily totals, whose rows
    have no repository: then ``""``), sorted by week then repository."""
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
