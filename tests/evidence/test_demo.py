import datetime as dt

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from dashboards import charts, selectors
from dashboards.models import DebtSnapshot
from evidence import visibility
from evidence.demo import DEMO_PASSWORD, DEMO_USER, MODULES, demo_load
from evidence.models import Patch, Report, Run, Team
from ledger.models import Freeze, FreezeAction, FreezeEvent

TODAY = dt.date(2026, 11, 30)
# Two weeks of history keep these tests quick; one test below loads the full 90 days.
SHORT_HISTORY = 14


@pytest.fixture
def demo(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert demo_load(today=TODAY, history_days=SHORT_HISTORY) is True
    return Report.objects.select_related("patch")


def test_demo_reports_show_every_verdict(demo):
    verdicts = {report.verdict for report in demo}
    assert verdicts == {"pass", "block", "pending"}


def test_demo_reports_show_each_patch_problem(demo):
    codes = {p["code"] for report in demo for p in report.body["problems"]}
    assert {
        "head-failed",
        "unaccounted-skip",
        "lost-tests",
        "frozen-surface",
        "expired-freeze",
        "ledger-in-patch",
        "environment-drift",
        "fixture-touched",
        "base-missing",
    } <= codes


def test_demo_ledger_has_active_expiring_expired_and_a_silent_renewal(demo):
    freezes = Freeze.objects.current()
    assert freezes.filter(expires__lt=TODAY).exists()
    assert freezes.filter(expires__gte=TODAY, expires__lte=TODAY + dt.timedelta(days=7)).exists()
    assert freezes.filter(expires__gt=TODAY + dt.timedelta(days=7)).exists()
    assert FreezeEvent.objects.filter(kind="renewed", silent=True).exists()


def test_demo_runs_are_parsed_and_the_login_works(demo):
    assert not Run.objects.exclude(status=Run.Status.READY).exists()
    assert authenticate(username=DEMO_USER, password=DEMO_PASSWORD) is not None


def test_load_demo_twice_changes_nothing(demo):
    counts = (Patch.objects.count(), Run.objects.count(), Freeze.objects.count())
    call_command("load_demo")
    assert (Patch.objects.count(), Run.objects.count(), Freeze.objects.count()) == counts


def test_the_demo_lead_is_a_team_member_not_staff(demo):
    lead = authenticate(username=DEMO_USER, password=DEMO_PASSWORD)
    assert not lead.is_staff
    team = Team.objects.get(slug="platform")
    assert list(team.members.all()) == [lead]
    assert set(visibility.repositories(lead).values_list("slug", flat=True)) == set(MODULES)


def test_demo_patches_are_spread_over_past_days(demo):
    days = {report.computed_at.date() for report in demo.filter(status="ready")}
    assert len(days) > SHORT_HISTORY // 3
    assert min(days) >= TODAY - dt.timedelta(days=SHORT_HISTORY)


def test_demo_default_branch_runs_vary_their_skips_over_time(demo):
    runs = Run.objects.filter(branch="main", repository__slug="shop-api").order_by("created_at")
    assert runs.count() >= 4
    assert len(set(runs.values_list("skipped", flat=True))) > 1
    assert runs.first().created_at.date() <= TODAY - dt.timedelta(days=SHORT_HISTORY - 1)


def test_demo_owners_acknowledged_some_freezes(demo):
    assert FreezeAction.objects.filter(freeze__freeze_id="FRZ-014").exists()


def test_demo_has_a_snapshot_for_each_repository_and_day(demo):
    assert DebtSnapshot.objects.count() == len(MODULES) * SHORT_HISTORY
    assert DebtSnapshot.objects.filter(day=TODAY, expired__gt=0).exists()


def test_the_full_demo_fills_every_chart_over_90_days(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert demo_load(today=TODAY) is True
    lead = authenticate(username=DEMO_USER, password=DEMO_PASSWORD)
    start = TODAY - dt.timedelta(days=89)
    assert DebtSnapshot.objects.count() == len(MODULES) * 90
    series = selectors.debt_series(user=lead, start=start, end=TODAY, repositories=None)
    weekly = selectors.weekly_from_series(
        selectors.debt_series(user=lead, start=start, end=TODAY, repositories=None)
    )
    assert {row["date"] for row in series} == {start + dt.timedelta(days=n) for n in range(90)}
    for figure in (
        charts.freeze_debt_figure(charts.freeze_debt_table(series)),
        charts.skip_debt_figure(charts.skip_debt_table(series)),
        charts.blocked_share_figure(charts.blocked_share_table(weekly)),
        charts.repository_trend_figure(charts.repository_trend_table(series)),
        charts.patch_outcomes_figure(charts.patch_outcomes_table(series)),
    ):
        assert figure["data"], figure["layout"]["title"]
        for trace in figure["data"]:
            assert any(trace["y"]), trace["name"]
    shares = [row["share"] for row in charts.blocked_share_table(weekly) if row["share"]]
    assert len(set(shares)) > 3  # the blocked share moves from week to week
    expired = [row["expired"] for row in charts.freeze_debt_table(series)]
    assert max(expired) > min(expired)
    rows = selectors.overview_rows(user=lead, start=start, end=TODAY, repositories=None)
    assert all(row["change"]["skipped"] is not None for row in rows)
    past = Report.objects.filter(computed_at__date__lt=TODAY - dt.timedelta(days=30))
    assert {report.verdict for report in past} == {"pass", "block"}


def test_demo_patches_show_each_analysis_finding_from_a_real_analysis(demo):
    analysed = {r.patch.ref: r for r in demo if r.patch.analysis}
    assert set(analysed) == {"PR-301", "PR-302"}
    findings = analysed["PR-301"]
    assert findings.verdict == "block"
    assert {
        "untested-caller",
        "contract-change",
        "fixture-lock",
        "co-modified",
        "unlabeled-path",
        "frozen-symbol",
        "candidate-only",
    } <= {p["code"] for p in findings.body["problems"]}
    # The analysis used the governance files the server synced: no mismatch.
    assert "analysis-mismatch" not in {p["code"] for p in findings.body["problems"]}
    section = findings.body["analysis"]
    assert section["status"] == "complete"
    by_symbol = {entry["symbol"]: entry for entry in section["symbols"]}
    assert by_symbol["shop.pricing:round_price"]["frozen_by"] == ["FRZ-014"]
    clean = analysed["PR-302"]
    assert (clean.verdict, clean.body["analysis"]["class"]) == ("pass", "cosmetic")
