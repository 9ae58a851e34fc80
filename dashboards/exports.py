"""CSV exports: the numbers behind each chart and table, as the same functions compute them."""

from __future__ import annotations

import csv
import datetime
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.http import HttpResponse

from dashboards import charts
from dashboards.selectors import OVERVIEW_FIGURES, SERIES_FIELDS

# A column is a key of the rows, or (key, header) when the header should read differently.
Column = str | tuple[str, str]

# Spreadsheet programs run a cell starting with these as a formula (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (int, float)):
        return value
    text = str(value)
    if text.startswith(FORMULA_STARTS):
        return "'" + text
    return text


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    """The rows as CSV with a header line; dates in ISO form, None as an empty cell."""
    keys = [c if isinstance(c, str) else c[0] for c in columns]
    headers = [c if isinstance(c, str) else c[1] for c in columns]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow([_cell(row.get(key)) for key in keys])
    return out.getvalue()


def csv_response(
    rows: Iterable[Mapping[str, Any]], columns: Sequence[Column], filename: str
) -> HttpResponse:
    """A CSV download of ``rows``; ``filename`` should end in ``.csv``."""
    safe = "".join(ch for ch in filename if ch.isalnum() or ch in "._-") or "export.csv"
    response = HttpResponse(csv_text(rows, columns), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{safe}"'
    return response


# --- the numbers of each chart -------------------------------------------------------------

OVERVIEW_COLUMNS: list[Column] = [
    "slug",
    "name",
    "active",
    "expiring",
    "expired",
    "unacknowledged",
    "skipped",
    "xfail",
    ("blocked_share", "blocked_share_30d_percent"),
    "patches_30d",
    "blocked_30d",
    "freeze_days",
    "debt",
    "as_of",
    *[(f"change_{name}", f"change_30d_{name}") for name in OVERVIEW_FIGURES],
]
SERIES_COLUMNS: list[Column] = ["date", "repository", *SERIES_FIELDS]
FREEZE_DEBT_COLUMNS: list[Column] = ["date", *charts.FREEZE_DEBT_FIELDS]
SKIP_DEBT_COLUMNS: list[Column] = ["date", *charts.SKIP_DEBT_FIELDS]
BLOCKED_SHARE_COLUMNS: list[Column] = ["week", "patches", "blocked", ("share", "share_percent")]
WEEKLY_COLUMNS: list[Column] = [
    "week",
    "repository",
    "patches",
    "blocked",
    ("share", "share_percent"),
]
REPOSITORY_TREND_COLUMNS: list[Column] = ["date", *charts.REPOSITORY_TREND_FIELDS]


def overview_csv(rows: Sequence[Mapping[str, Any]], filename: str = "overview.csv") -> HttpResponse:
    flat = [
        {**row, **{f"change_{key}": value for key, value in row["change"].items()}} for row in rows
    ]
    return csv_response(flat, OVERVIEW_COLUMNS, filename)


def series_csv(
    series: Sequence[Mapping[str, Any]], filename: str = "debt-series.csv"
) -> HttpResponse:
    """Every snapshot figure per day and repository."""
    return csv_response(series, SERIES_COLUMNS, filename)


def freeze_debt_csv(
    series: Sequence[Mapping[str, Any]], filename: str = "freeze-debt.csv"
) -> HttpResponse:
    return csv_response(charts.freeze_debt_table(series), FREEZE_DEBT_COLUMNS, filename)


def skip_debt_csv(
    series: Sequence[Mapping[str, Any]], filename: str = "skip-debt.csv"
) -> HttpResponse:
    return csv_response(charts.skip_debt_table(series), SKIP_DEBT_COLUMNS, filename)


def blocked_share_csv(
    weekly: Sequence[Mapping[str, Any]], filename: str = "blocked-share.csv"
) -> HttpResponse:
    return csv_response(charts.blocked_share_table(weekly), BLOCKED_SHARE_COLUMNS, filename)


def weekly_csv(
    weekly: Sequence[Mapping[str, Any]], filename: str = "blocked-weekly.csv"
) -> HttpResponse:
    """The blocked share per week and repository (the chart's numbers before summing)."""
    return csv_response(weekly, WEEKLY_COLUMNS, filename)


def repository_trend_csv(
    series: Sequence[Mapping[str, Any]], filename: str = "repository-trend.csv"
) -> HttpResponse:
    return csv_response(charts.repository_trend_table(series), REPOSITORY_TREND_COLUMNS, filename)
