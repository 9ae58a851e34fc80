import datetime
import json

import plotly.graph_objects as go
import pytest

from dashboards import charts

D1 = datetime.date(2026, 11, 2)
D2 = datetime.date(2026, 11, 3)
MONDAY = datetime.date(2026, 11, 2)


def row(date, repository, **figures):
    base = dict.fromkeys(
        ("active", "expiring", "expired", "unacknowledged", "freeze_days", "skipped", "xfail",
         "patches", "blocked", "passed", "new_skips", "earned", "borrowed"),
        0,
    )  # fmt: skip
    return {"date": date, "repository": repository, **base, "median_net_delta": None, **figures}


SERIES = [
    row(D1, "billing", active=3, expired=1, unacknowledged=2, skipped=10, xfail=1, new_skips=1),
    row(D1, "search", active=1, expired=0, unacknowledged=1, skipped=4, xfail=0, patches=2),
    row(D2, "billing", active=2, expired=2, unacknowledged=3, skipped=12, xfail=1, freeze_days=9),
]
WEEKLY = [
    {"week": MONDAY, "repository": "billing", "patches": 4, "blocked": 1, "share": 25.0},
    {"week": MONDAY, "repository": "search", "patches": 6, "blocked": 4, "share": 66.7},
    {"week": MONDAY + datetime.timedelta(7), "repository": "billing", "patches": 0, "blocked": 0,
     "share": None},
]  # fmt: skip

# Each chart: its table of the rows a page reads (a series of snapshots, or weeks), the figure
# of that table, and rows to draw.
CHARTS = {
    "freeze": (charts.freeze_debt_table, charts.freeze_debt_figure, SERIES),
    "skip": (charts.skip_debt_table, charts.skip_debt_figure, SERIES),
    "blocked": (charts.blocked_share_table, charts.blocked_share_figure, WEEKLY),
    "trend": (charts.repository_trend_table, charts.repository_trend_figure, SERIES),
    "outcomes": (charts.patch_outcomes_table, charts.patch_outcomes_figure, SERIES),
}


def draw(name: str, rows: list[dict]) -> dict:
    """The chart ``name`` of ``rows``, as a page draws it: the figure of their table."""
    table, figure, _ = CHARTS[name]
    return figure(table(rows))


@pytest.mark.parametrize("name", ["trend", "outcomes"])
def test_one_repository_series_is_its_own_table(name):
    # The repository page draws its series as it is: one row a day.
    _table, figure, _ = CHARTS[name]
    billing = [
        row(D1, "billing", active=3, expired=1, skipped=10, patches=4, passed=3, blocked=1),
        row(D2, "billing", active=2, expired=2, skipped=12, freeze_days=9, patches=2, passed=2),
    ]
    drawn = figure(billing)
    assert drawn["data"]  # something drawn, not two empty figures alike
    assert drawn == draw(name, billing)


def test_a_table_of_weeks_already_summed_is_its_own_table():
    # The overview's weeks come summed by the database: drawn as they are.
    table = charts.blocked_share_table(WEEKLY)
    assert charts.blocked_share_table(table) == table


def traces(figure) -> dict[str, dict]:
    return {trace["name"]: trace for trace in figure["data"]}


def test_freeze_debt_chart_sums_repositories_per_day():
    figure = draw("freeze", SERIES)
    by_name = traces(figure)
    assert by_name["Active freezes"]["x"] == ["2026-11-02", "2026-11-03"]
    assert by_name["Active freezes"]["y"] == [4, 2]
    assert by_name["Expired freezes"]["y"] == [1, 2]
    assert by_name["Unacknowledged"]["y"] == [3, 3]


def test_skip_debt_chart_draws_skipped_xfail_and_new_skips():
    by_name = traces(draw("skip", SERIES))
    assert by_name["Skipped tests"]["y"] == [14, 12]
    assert by_name["Xfailed tests"]["y"] == [1, 1]
    assert by_name["New skips by patches"]["y"] == [1, 0]


def test_blocked_share_chart_is_blocked_over_patches_per_week_in_percent():
    [trace] = draw("blocked", WEEKLY)["data"]
    assert trace["x"] == ["2026-11-02", "2026-11-09"]
    assert trace["y"] == [50.0, None]  # a week without patches is a gap, not 0 %


@pytest.mark.parametrize(
    ("name", "title", "y_title"),
    [
        ("freeze", "Freeze debt over time", "freezes"),
        ("skip", "Skip debt over time", "tests"),
        ("blocked", "Blocked share of patches per week", "share of patches, %"),
        ("trend", "Debt trend", "freezes and tests"),
        ("outcomes", "Patches per day by verdict", "patches"),
    ],
)
def test_each_chart_has_a_title_and_axis_titles_with_units(name, title, y_title):
    layout = draw(name, CHARTS[name][2])["layout"]
    assert layout["title"]["text"] == title
    assert layout["yaxis"]["title"]["text"] == y_title
    assert layout["xaxis"]["type"] == "date"
    assert layout["xaxis"]["title"]["text"] in ("Date", "Week (starting Monday)")


def test_the_trend_chart_puts_freeze_days_on_its_own_axis():
    figure = draw("trend", SERIES)
    assert traces(figure)["Freeze-days accrued"]["yaxis"] == "y2"
    assert figure["layout"]["yaxis2"]["title"]["text"] == "freeze-days"


def test_a_series_has_the_same_colour_on_every_chart():
    colours: dict[str, set[str]] = {}
    for name, (_, _, data) in CHARTS.items():
        for trace in draw(name, data)["data"]:
            colour = trace.get("line", {}).get("color") or trace.get("marker", {}).get("color")
            colours.setdefault(trace["name"], set()).add(colour)
    assert all(len(found) == 1 for found in colours.values()), colours
    label_to_key = {label: key for key, label in charts.SERIES_LABELS.items()}
    for name, (colour,) in colours.items():
        assert colour == charts.SERIES_COLOURS[label_to_key[name]]


def test_series_colours_are_distinct_where_series_share_a_chart():
    for name, (_, _, data) in CHARTS.items():
        names = [trace["name"] for trace in draw(name, data)["data"]]
        label_to_key = {label: key for key, label in charts.SERIES_LABELS.items()}
        used = [charts.SERIES_COLOURS[label_to_key[name]] for name in names]
        assert len(set(used)) == len(used), names


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_no_data_gives_an_honest_empty_state(name):
    figure = draw(name, [])
    assert figure["data"] == []
    [annotation] = figure["layout"]["annotations"]
    assert annotation["text"] == "No data for this range"
    assert figure["layout"]["title"]["text"]


def test_weeks_without_any_patch_are_an_empty_blocked_share_chart():
    quiet = [{"week": MONDAY, "repository": "billing", "patches": 0, "blocked": 0, "share": None}]
    assert draw("blocked", quiet)["data"] == []


@pytest.mark.parametrize("name", sorted(CHARTS))
@pytest.mark.parametrize("empty", [False, True])
def test_figures_are_valid_plotly_and_json(name, empty):
    figure = draw(name, [] if empty else CHARTS[name][2])
    go.Figure(figure)  # raises on an invalid property
    json.dumps(figure)


def test_chart_functions_do_not_change_their_input():
    before = json.dumps(SERIES, default=str)
    for name, (_, _, data) in CHARTS.items():
        draw(name, data)
    assert json.dumps(SERIES, default=str) == before


def test_the_blocked_share_axis_shows_100_percent_and_hover_names_are_whole():
    layout = draw("blocked", CHARTS["blocked"][2])["layout"]
    assert layout["yaxis"]["tickvals"][-1] == 100
    assert layout["yaxis"]["range"][1] > 100  # a week at 100 % is drawn whole
    for name in CHARTS:
        assert draw(name, CHARTS[name][2])["layout"]["hoverlabel"] == {"namelength": -1}


def test_an_empty_chart_panel_has_its_title_once():
    from dashboards.views.common import chart_panel

    panel = chart_panel(
        "freeze-debt",
        charts.freeze_debt_figure([]),
        [],
        columns=("active",),
        csv="/export/freeze-debt.csv",
    )
    assert panel["empty"] and panel["title"] == "Freeze debt over time"
    assert panel["figure"]["layout"]["title"]["text"] == ""  # the panel's heading is the title
