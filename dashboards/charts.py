"""Plotly figures built from selector output: pure functions, no database, no request.

Each chart function returns a figure as a plain dict (``{"data": [...], "layout": {...}}``) that
``plotly.graph_objects.Figure`` accepts and the page hands to plotly.js through ``json_script``.
The numbers a chart draws come from a ``*_table`` function next to it, which the CSV export
uses too, so the table always says what the chart shows.

A series keeps one colour on every page (``SERIES_COLOURS``); an empty input gives a figure
with no traces and an annotation saying so, never an empty pair of axes that looks like zero.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

EMPTY_MESSAGE = "No data for this range"

# One colour per series name, used by every chart that draws the series (colour-blind-safe
# Okabe-Ito palette).
SERIES_COLOURS: dict[str, str] = {
    "active": "#0072B2",
    "expiring": "#E69F00",
    "expired": "#D55E00",
    "unacknowledged": "#CC79A7",
    "freeze_days": "#56B4E9",
    "skipped": "#009E73",
    "xfail": "#B8A000",  # a darker yellow: the pure one fades on white
    "new_skips": "#999999",
    "patches": "#56B4E9",
    "blocked": "#D55E00",
    "passed": "#009E73",
    "blocked_share": "#D55E00",
    "earned": "#009E73",
    "borrowed": "#999999",
}

SERIES_LABELS: dict[str, str] = {
    "active": "Active freezes",
    "expiring": "Expiring (≤ 7 days)",
    "expired": "Expired freezes",
    "unacknowledged": "Unacknowledged",
    "freeze_days": "Freeze-days accrued",
    "skipped": "Skipped tests",
    "xfail": "Xfailed tests",
    "new_skips": "New skips by patches",
    "patches": "Patches reported",
    "blocked": "Blocked",
    "passed": "Passed",
    "blocked_share": "Blocked share",
    "earned": "Earned green",
    "borrowed": "Borrowed green",
}

DATE_AXIS = {"title": {"text": "Date"}, "type": "date"}
WEEK_AXIS = {"title": {"text": "Week (starting Monday)"}, "type": "date"}


def _iso(day: datetime.date | str) -> str:
    return day if isinstance(day, str) else day.isoformat()


def _layout(title: str, *, xaxis: dict, yaxis_title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "xaxis": dict(xaxis),
        "yaxis": {"title": {"text": yaxis_title}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.2},
        "hovermode": "x unified",
        # Whole series names in the hover box: Plotly cuts them at 15 characters by default.
        "hoverlabel": {"namelength": -1},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 60},
        **extra,
    }


def empty_figure(title: str, *, xaxis: dict, yaxis_title: str) -> dict[str, Any]:
    """A figure with its title and axes, no traces, and a centred "no data" annotation."""
    layout = _layout(title, xaxis=xaxis, yaxis_title=yaxis_title)
    layout["xaxis"]["visible"] = False
    layout["yaxis"]["visible"] = False
    layout["annotations"] = [
        {
            "text": EMPTY_MESSAGE,
            "xref": "paper",
            "yref": "paper",
            "x": 0.5,
            "y": 0.5,
            "showarrow": False,
            "font": {"size": 16},
        }
    ]
    return {"data": [], "layout": layout}


def _line(name: str, x: list[str], y: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": SERIES_LABELS[name],
        "x": x,
        "y": y,
        "line": {"color": SERIES_COLOURS[name], "width": 2},
        **extra,
    }


def daily_totals(
    series: Iterable[Mapping[str, Any]], fields: Iterable[str]
) -> list[dict[str, Any]]:
    """Sum ``fields`` across repositories per date: ``[{"date", field: total, ...}]``."""
    fields = tuple(fields)
    totals: dict[datetime.date | str, dict[str, Any]] = {}
    for row in series:
        total = totals.setdefault(row["date"], dict.fromkeys(fields, 0))
        for name in fields:
            total[name] += row.get(name) or 0
    return [{"date": day, **totals[day]} for day in sorted(totals)]


# --- freeze debt -----------------------------------------------------------------------------

FREEZE_DEBT_FIELDS = ("active", "expiring", "expired", "unacknowledged")


def freeze_debt_table(series: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Freezes per day across the selected repositories: what ``freeze_debt_figure`` draws."""
    return daily_totals(series, FREEZE_DEBT_FIELDS)


def freeze_debt_figure(table: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Active (expiring included) and expired freezes over time, plus the unacknowledged: the
    figure of its table's rows (:func:`freeze_debt_table`)."""
    title = "Freeze debt over time"
    if not table:
        return empty_figure(title, xaxis=DATE_AXIS, yaxis_title="freezes")
    x = [_iso(row["date"]) for row in table]
    return {
        "data": [
            _line("active", x, [row["active"] for row in table], stackgroup="ledger"),
            _line("expired", x, [row["expired"] for row in table], stackgroup="ledger"),
            _line(
                "unacknowledged",
                x,
                [row["unacknowledged"] for row in table],
                line={"color": SERIES_COLOURS["unacknowledged"], "width": 2, "dash": "dot"},
            ),
        ],
        "layout": _layout(title, xaxis=DATE_AXIS, yaxis_title="freezes"),
    }


# --- skip debt -------------------------------------------------------------------------------

SKIP_DEBT_FIELDS = ("skipped", "xfail", "new_skips")


def skip_debt_table(series: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Skipped and xfailed tests of the default branch, new skips by patches, per day."""
    return daily_totals(series, SKIP_DEBT_FIELDS)


def skip_debt_figure(table: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Skipped and xfailed tests in the latest default-branch run, and new skips by patches:
    the figure of its table's rows (:func:`skip_debt_table`)."""
    title = "Skip debt over time"
    if not table:
        return empty_figure(title, xaxis=DATE_AXIS, yaxis_title="tests")
    x = [_iso(row["date"]) for row in table]
    return {
        "data": [
            _line("skipped", x, [row["skipped"] for row in table]),
            _line("xfail", x, [row["xfail"] for row in table]),
            {
                "type": "bar",
                "name": SERIES_LABELS["new_skips"],
                "x": x,
                "y": [row["new_skips"] for row in table],
                "marker": {"color": SERIES_COLOURS["new_skips"]},
                "opacity": 0.6,
            },
        ],
        "layout": _layout(title, xaxis=DATE_AXIS, yaxis_title="tests"),
    }


# --- blocked share ---------------------------------------------------------------------------


def blocked_share(blocked: int, patches: int) -> float | None:
    """Blocked share in percent, one decimal; None when there were no patches to judge."""
    return round(100.0 * blocked / patches, 1) if patches else None


def blocked_share_table(weekly: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Patches, blocked and blocked share (%) per week across the selected repositories."""
    totals: dict[datetime.date | str, list[int]] = defaultdict(lambda: [0, 0])
    for row in weekly:
        totals[row["week"]][0] += row["patches"]
        totals[row["week"]][1] += row["blocked"]
    return [
        {
            "week": week,
            "patches": patches,
            "blocked": blocked,
            "share": blocked_share(blocked, patches),
        }
        for week, (patches, blocked) in sorted(totals.items())
    ]


def blocked_share_figure(table: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Share of reported patches that were blocked, per week, across the repositories: the
    figure of its table's rows (:func:`blocked_share_table`)."""
    title = "Blocked share of patches per week"
    if not any(row["patches"] for row in table):
        return empty_figure(title, xaxis=WEEK_AXIS, yaxis_title="share of patches, %")
    x = [_iso(row["week"]) for row in table]
    layout = _layout(title, xaxis=WEEK_AXIS, yaxis_title="share of patches, %")
    # A little above 100 so a week at 100 % is drawn whole; the ticks stop at 100 %.
    layout["yaxis"]["range"] = [0, 104]
    layout["yaxis"]["tickvals"] = [0, 20, 40, 60, 80, 100]
    return {
        "data": [
            _line(
                "blocked_share",
                x,
                [row["share"] for row in table],
                mode="lines+markers",
                customdata=[[row["blocked"], row["patches"]] for row in table],
                hovertemplate="%{y}% (%{customdata[0]} of %{customdata[1]} patches)",
                connectgaps=False,
            )
        ],
        "layout": layout,
    }


# --- one repository --------------------------------------------------------------------------

REPOSITORY_TREND_FIELDS = ("active", "expired", "skipped", "xfail", "freeze_days")


def repository_trend_table(series: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Freezes, skips and freeze-days per day (summed, for a series of one repository)."""
    return daily_totals(series, REPOSITORY_TREND_FIELDS)


def repository_trend_figure(table: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One repository's freezes and skipped tests (left axis) and freeze-days (right axis):
    the figure of its table's rows (:func:`repository_trend_table`)."""
    title = "Debt trend"
    if not table:
        return empty_figure(title, xaxis=DATE_AXIS, yaxis_title="freezes and tests")
    x = [_iso(row["date"]) for row in table]
    layout = _layout(title, xaxis=DATE_AXIS, yaxis_title="freezes and tests")
    layout["yaxis2"] = {
        "title": {"text": "freeze-days"},
        "overlaying": "y",
        "side": "right",
        "rangemode": "tozero",
        "showgrid": False,
    }
    return {
        "data": [
            _line("active", x, [row["active"] for row in table]),
            _line("expired", x, [row["expired"] for row in table]),
            _line("skipped", x, [row["skipped"] for row in table]),
            _line("xfail", x, [row["xfail"] for row in table]),
            _line(
                "freeze_days",
                x,
                [row["freeze_days"] for row in table],
                yaxis="y2",
                line={"color": SERIES_COLOURS["freeze_days"], "width": 2, "dash": "dash"},
            ),
        ],
        "layout": layout,
    }


def patch_outcomes_table(series: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Patches passed and blocked per day, with earned and borrowed green."""
    return daily_totals(series, ("patches", "passed", "blocked", "earned", "borrowed"))


def patch_outcomes_figure(table: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Patches reported per day, stacked by verdict: the figure of its table's rows
    (:func:`patch_outcomes_table`)."""
    title = "Patches per day by verdict"
    if not any(row["patches"] for row in table):
        return empty_figure(title, xaxis=DATE_AXIS, yaxis_title="patches")
    x = [_iso(row["date"]) for row in table]
    return {
        "data": [
            {
                "type": "bar",
                "name": SERIES_LABELS[name],
                "x": x,
                "y": [row[name] for row in table],
                "marker": {"color": SERIES_COLOURS[name]},
            }
            for name in ("passed", "blocked")
        ],
        "layout": _layout(title, xaxis=DATE_AXIS, yaxis_title="patches", barmode="stack"),
    }
