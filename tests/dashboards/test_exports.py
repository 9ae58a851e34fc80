import csv
import datetime
import io

from dashboards import charts, exports

D1 = datetime.date(2026, 11, 2)
D2 = datetime.date(2026, 11, 3)


def parsed(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.content.decode())))


def series_row(date, repository, **figures):
    row = {"date": date, "repository": repository, "median_net_delta": None}
    row.update(dict.fromkeys(exports.SERIES_FIELDS, 0))
    row["median_net_delta"] = None
    row.update(figures)
    return row


SERIES = [
    series_row(D1, "billing", active=3, expired=1, skipped=10, unacknowledged=2),
    series_row(D1, "search", active=1, skipped=4, median_net_delta=2.5),
    series_row(D2, "billing", active=2, expired=2, skipped=12),
]


def test_csv_response_is_a_download_with_a_header_and_iso_dates():
    response = exports.csv_response(
        [{"day": D1, "n": 3, "share": None}], ["day", ("n", "count"), "share"], "x.csv"
    )
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="x.csv"'
    assert parsed(response) == [["day", "count", "share"], ["2026-11-02", "3", ""]]


def test_csv_cells_that_a_spreadsheet_would_run_are_defused():
    response = exports.csv_response(
        [{"title": "=HYPERLINK(1)"}, {"title": "@SUM(A1)"}, {"title": -3}], ["title"], "x.csv"
    )
    assert parsed(response)[1:] == [["'=HYPERLINK(1)"], ["'@SUM(A1)"], ["-3"]]


def test_the_filename_cannot_break_the_header():
    response = exports.csv_response([], ["a"], 'evil"\r\nX-Header: 1.csv')
    assert response["Content-Disposition"] == 'attachment; filename="evilX-Header1.csv"'


def test_the_freeze_debt_csv_has_the_numbers_the_chart_draws():
    rows = parsed(exports.freeze_debt_csv(SERIES))
    assert rows == [
        ["date", "active", "expiring", "expired", "unacknowledged"],
        ["2026-11-02", "4", "0", "1", "2"],
        ["2026-11-03", "2", "0", "2", "0"],
    ]
    chart = charts.freeze_debt_figure(charts.freeze_debt_table(SERIES))
    active = next(t for t in chart["data"] if t["name"] == "Active freezes")
    assert [int(r[1]) for r in rows[1:]] == active["y"]


def test_the_skip_debt_csv_sums_repositories_per_day():
    rows = parsed(exports.skip_debt_csv(SERIES))
    assert rows[0] == ["date", "skipped", "xfail", "new_skips"]
    assert [r[1] for r in rows[1:]] == ["14", "12"]


def test_the_blocked_share_csv_gives_weekly_totals_and_percent():
    weekly = [
        {"week": D1, "repository": "a", "patches": 4, "blocked": 1, "share": 25.0},
        {"week": D1, "repository": "b", "patches": 6, "blocked": 4, "share": 66.7},
    ]
    assert parsed(exports.blocked_share_csv(weekly)) == [
        ["week", "patches", "blocked", "share_percent"],
        ["2026-11-02", "10", "5", "50.0"],
    ]
    assert parsed(exports.weekly_csv(weekly))[1] == ["2026-11-02", "a", "4", "1", "25.0"]


def test_the_series_csv_has_every_snapshot_figure():
    rows = parsed(exports.series_csv(SERIES))
    assert rows[0] == ["date", "repository", *exports.SERIES_FIELDS]
    assert rows[2][:3] == ["2026-11-02", "search", "1"]
    median = rows[0].index("median_net_delta")
    assert (rows[1][median], rows[2][median]) == ("", "2.5")


def test_the_overview_csv_flattens_the_30_day_changes():
    row = {
        "slug": "billing",
        "name": "Billing",
        "active": 4,
        "expiring": 1,
        "expired": 2,
        "unacknowledged": 3,
        "skipped": 15,
        "xfail": 1,
        "blocked_share": 66.7,
        "patches_30d": 3,
        "blocked_30d": 2,
        "freeze_days": 14,
        "debt": 40,
        "as_of": D2,
        "change": {"active": 2, "blocked_share": None},
    }
    header, values = parsed(exports.overview_csv([row]))
    cells = dict(zip(header, values, strict=True))
    assert cells["blocked_share_30d_percent"] == "66.7"
    assert cells["change_30d_active"] == "2"
    assert cells["change_30d_blocked_share"] == ""
    assert cells["as_of"] == "2026-11-03"


def test_the_repository_trend_csv_matches_its_chart():
    rows = parsed(exports.repository_trend_csv(SERIES[:1] + SERIES[2:]))
    assert rows[0] == ["date", "active", "expired", "skipped", "xfail", "freeze_days"]
    assert rows[1] == ["2026-11-02", "3", "1", "10", "0", "0"]
