"""A chart's numbers table, as a lead reads a year of it: captioned, grouped by week."""

import datetime

from dashboards.views.common import chart_panel

MONDAY = datetime.date(2026, 11, 30)


def test_a_days_table_is_captioned_and_marks_each_monday():
    rows = [{"date": MONDAY - datetime.timedelta(days=n), "active": n} for n in range(14)]
    figure = {"layout": {"title": {"text": "Freeze debt"}}}
    panel = chart_panel("x", figure, rows, columns=("active",), csv="/x.csv")
    table = str(panel["table"])
    assert '<table class="data compact numbers"><caption>Freeze debt: 14 days</caption>' in table
    assert table.count('<tr class="monday">') == 2
    assert '<tr class="monday"><th scope="row">2026-11-30</th>' in table


def test_a_weeks_table_has_no_rule_on_every_row():
    rows = [{"week": MONDAY, "patches": 3, "blocked": 1, "share": 33.3}]
    figure = {"layout": {"title": {"text": "Blocked"}}}
    columns = ("patches", "blocked", "share")
    panel = chart_panel("y", figure, rows, columns=columns, csv="/y.csv", by_week=True)
    table = str(panel["table"])
    assert "<caption>Blocked: 1 week</caption>" in table
    assert 'class="monday"' not in table
