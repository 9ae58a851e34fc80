"""Reads behind the dashboard pages, one module a page as in ``dashboards.views``, each already
limited to what the user may see (``evidence.visibility``): a repository, patch or freeze
outside it is Http404, never 403. Debt figures come from the snapshots only. Each read runs a
fixed number of queries whatever the history; the reads of a repository already found visible
are written in SQL (``sqlreads``). The pages' names are importable from here too."""

from dashboards.selectors.freeze import FreezeDetail, freeze_detail
from dashboards.selectors.overview import (
    OVERVIEW_FIGURES,
    Overview,
    OverviewRow,
    Totals,
    debt_score,
    debt_totals,
    overview,
    overview_rows,
)
from dashboards.selectors.patch import PatchDetail, patch_detail
from dashboards.selectors.repository import FreezeRow, RepositoryDetail, repository_detail
from dashboards.selectors.series import (
    SERIES_FIELDS,
    SeriesRow,
    WeekRow,
    debt_series,
    debt_snapshots,
    series_row,
    week_start,
    weekly_from_series,
)

__all__ = [
    "OVERVIEW_FIGURES",
    "SERIES_FIELDS",
    "FreezeDetail",
    "FreezeRow",
    "Overview",
    "OverviewRow",
    "PatchDetail",
    "RepositoryDetail",
    "SeriesRow",
    "Totals",
    "WeekRow",
    "debt_score",
    "debt_series",
    "debt_snapshots",
    "debt_totals",
    "freeze_detail",
    "overview",
    "overview_rows",
    "patch_detail",
    "repository_detail",
    "series_row",
    "week_start",
    "weekly_from_series",
]
