"""The overview: every visible repository's debt, and charts across them, with CSV exports."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from config.cache import cache_get, cache_set
from dashboards import charts, exports, freshness, selectors
from dashboards.actions import overview_actions
from dashboards.selectors import weekly_from_series
from dashboards.views import tables
from dashboards.views.common import Filters, change_text, chart_panel
from evidence import visibility
from freezedebt_ci.ledger import EXPIRING_WITHIN_DAYS

OVERVIEW_COLUMNS = (
    ("active", "Active freezes"),
    ("expiring", f"Expiring ≤ {EXPIRING_WITHIN_DAYS} days"),
    ("expired", "Expired"),
    ("unacknowledged", "Unacknowledged"),
    ("skipped", "Skipped tests"),
    ("blocked_share", "Blocked, 30 days"),
    ("freeze_days", "Freeze-days"),
    ("debt", "Debt score"),
)


def _overview_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    table = []
    for row in rows:
        cells = []
        for key, _label in OVERVIEW_COLUMNS:
            value = row.get(key)
            shown: Any  # a number, or None for no snapshot
            if key == "blocked_share":
                shown = "no patches" if value is None else f"{value:g}%"
                title = f"{row['blocked_30d']} of {row['patches_30d']} patches"
            else:
                shown, title = value, ""
            change = change_text(row["change"][key])
            if change and key == "blocked_share":
                change["text"] += " pts"  # a change of a percentage, in percentage points
            cells.append({"key": key, "value": shown, "title": title, "change": change})
        table.append(
            {"slug": row["slug"], "name": row["name"], "as_of": row["as_of"], "cells": cells}
        )
    return table


# The overview's figures and charts come from the snapshots (today's kept current by
# dashboards.live), and its table shows each repository's latest owner answer ("acknowledged
# 2 days ago"). The rendered panels are cached for a few minutes per set of repositories and
# filters; a refreshed snapshot makes them stale at once, the age of an answer shows late.
OVERVIEW_CACHE_SECONDS = 300


def _overview_key(filters: Filters, repository_ids: list[int]) -> str:
    parts = [",".join(map(str, repository_ids)), filters.query(), timezone.localdate().isoformat()]
    digest = hashlib.sha256("|".join(parts).encode()).hexdigest()
    # A refreshed snapshot of today (dashboards.live) makes every cached overview stale.
    return f"dashboards:overview:v1:{freshness.generation()}:{digest}"


def _overview_panels(request: HttpRequest, filters: Filters) -> dict[str, Any]:
    """The overview's table and charts, computed from the snapshots."""
    # The table's rows, and the charts' numbers summed by the database across repositories
    # (rows per day or week, however many repositories are chosen).
    data = selectors.overview(user=request.user, **filters.selector_args)
    # One row per day and per week, already summed: the charts' tables of them, and figures of
    # those tables (the per-repository series would sum to the same rows).
    series, weekly = data["daily"], data["weekly"]
    query = filters.query()

    def csv(name: str) -> str:
        return f"{reverse('dashboards:export', args=[name])}?{query}"

    return {
        "rows": _overview_table(data["rows"]),
        "charts": [
            chart_panel(
                "freeze-debt",
                charts.freeze_debt_figure(series),
                series,
                columns=charts.FREEZE_DEBT_FIELDS,
                csv=csv("freeze-debt"),
            ),
            chart_panel(
                "skip-debt",
                charts.skip_debt_figure(series),
                series,
                columns=charts.SKIP_DEBT_FIELDS,
                csv=csv("skip-debt"),
            ),
            chart_panel(
                "blocked-share",
                charts.blocked_share_figure(weekly),
                weekly,
                columns=("patches", "blocked", "share"),
                csv=csv("blocked-share"),
                by_week=True,
            ),
        ],
        "csv_series": csv("debt-series"),
    }


@require_GET
@login_required
def index(request: HttpRequest) -> HttpResponse:
    filters = Filters(request.GET, today=timezone.localdate())
    if request.GET.get("format") == "csv":
        return exports.overview_csv(_rows_only(request, filters)["rows"])
    visible = list(
        visibility.repositories(request.user).order_by("slug").values_list("pk", "slug", "name")
    )
    chosen = [
        pk for pk, slug, _ in visible if not filters.repositories or slug in filters.repositories
    ]
    key = _overview_key(filters, chosen)
    # The table and charts, rendered: the same for everyone who sees these repositories.
    panels = cache_get(key)
    if panels is None:
        context = {
            **_overview_panels(request, filters),
            "filters": filters,
            "columns": [label for _key, label in OVERVIEW_COLUMNS],
            "csv_overview": f"{reverse('dashboards:index')}?{filters.query(format='csv')}",
        }
        overview_actions(context["rows"])
        context["table_body"] = tables.overview_rows(context["rows"], filters)
        panels = {
            "rows": bool(context["rows"]),
            "html": render_to_string("dashboards/_overview_panels.html", context),
        }
        cache_set(key, panels, OVERVIEW_CACHE_SECONDS)
    context = {
        "filters": filters,
        "rows": panels["rows"],
        "panels_html": mark_safe(panels["html"]),  # noqa: S308 - rendered by our template
        "all_repositories": [(slug, name) for _, slug, name in visible],
        "repository_options": tables.repository_options(
            [(slug, name) for _, slug, name in visible], filters.repositories
        ),
    }
    return render(request, "dashboards/overview.html", context)


def _series_only(request: HttpRequest, filters: Filters) -> dict[str, Any]:
    series = selectors.debt_series(user=request.user, **filters.selector_args)
    return {"series": series, "weekly": weekly_from_series(series)}


def _totals_only(request: HttpRequest, filters: Filters) -> selectors.Totals:
    return selectors.debt_totals(user=request.user, **filters.selector_args)


def _rows_only(request: HttpRequest, filters: Filters) -> dict[str, Any]:
    return {"rows": selectors.overview_rows(user=request.user, **filters.selector_args)}


# Each export: what it reads, and how it writes the CSV.
EXPORTS: dict[str, tuple[Callable[..., Mapping[str, Any]], Callable[..., HttpResponse]]] = {
    "overview": (_rows_only, lambda data: exports.overview_csv(data["rows"])),
    "freeze-debt": (_totals_only, lambda data: exports.freeze_debt_csv(data["daily"])),
    "skip-debt": (_totals_only, lambda data: exports.skip_debt_csv(data["daily"])),
    "blocked-share": (_totals_only, lambda data: exports.blocked_share_csv(data["weekly"])),
    "blocked-weekly": (_series_only, lambda data: exports.weekly_csv(data["weekly"])),
    "debt-series": (_series_only, lambda data: exports.series_csv(data["series"])),
}


@require_GET
@login_required
def export(request: HttpRequest, name: str) -> HttpResponse:
    """The numbers of an overview chart or table as CSV, for the filters of the URL. Cached as
    the overview is (same key: the visible repositories and the filters)."""
    if name not in EXPORTS:
        raise Http404("No such export.")
    filters = Filters(request.GET, today=timezone.localdate())
    visible = visibility.repositories(request.user).order_by("slug").values_list("pk", "slug")
    chosen = [
        pk for pk, slug in visible if not filters.repositories or slug in filters.repositories
    ]
    key = f"{_overview_key(filters, chosen)}:{name}"
    cached = cache_get(key)
    if cached is None:
        read, write = EXPORTS[name]
        response = write(read(request, filters))
        cached = {"content": response.content, "disposition": response["Content-Disposition"]}
        cache_set(key, cached, OVERVIEW_CACHE_SECONDS)
    response = HttpResponse(cached["content"], content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = cached["disposition"]
    return response
