import datetime
import re

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dashboards import charts, selectors
from dashboards.models import TOTAL_FIGURES, DebtSnapshot, DebtTotal
from dashboards.selectors import repository as repository_selectors
from evidence.models import Run, TestResult
from evidence.teams import team_create
from ledger.models import FreezeAction, FreezeEvent, Policy, PolicyChange
from tests.factories import (
    FreezeEventFactory,
    FreezeFactory,
    PatchFactory,
    ReportFactory,
    RepositoryFactory,
    RunFactory,
    TestNameFactory,
    TestResultFactory,
    UserFactory,
)

UTC = datetime.UTC
END = datetime.date(2026, 11, 30)
START = END - datetime.timedelta(days=59)


def day(offset: int) -> datetime.date:
    """``offset`` days before END."""
    return END - datetime.timedelta(days=offset)


def snap(repository, offset, **figures):
    snapshot = DebtSnapshot.objects.create(repository=repository, day=day(offset), **figures)
    DebtTotal.objects.refresh(days=[snapshot.day])  # as the snapshot job sums what it wrote
    return snapshot


# --- overview -------------------------------------------------------------------------------


@pytest.fixture
def overview(db):
    billing = RepositoryFactory(slug="billing", name="Billing")
    search = RepositoryFactory(slug="search", name="Search")
    quiet = RepositoryFactory(slug="quiet", name="Quiet")
    snap(billing, 30, active=2, expired=0, skipped=10, patches=4, blocked=1, passed=3)
    snap(billing, 10, active=3, expired=1, skipped=12, patches=3, blocked=2, passed=1)
    snap(billing, 0, active=4, expiring=1, expired=2, unacknowledged=3, skipped=15, freeze_days=14)
    snap(search, 0, active=1, skipped=2, patches=2, passed=2)
    return billing, search, quiet


def test_overview_rows_are_sorted_by_debt_highest_first(overview, staff):
    rows = selectors.overview_rows(user=staff, start=START, end=END, repositories=None)
    assert [row["slug"] for row in rows] == ["billing", "search", "quiet"]
    assert rows[0]["debt"] > rows[1]["debt"] > rows[2]["debt"] == 0


def test_overview_figures_are_those_of_the_latest_snapshot(overview, staff):
    [billing] = selectors.overview_rows(user=staff, start=START, end=END, repositories=["billing"])
    assert billing["name"] == "Billing"
    assert (billing["active"], billing["expiring"], billing["expired"]) == (4, 1, 2)
    assert (billing["unacknowledged"], billing["skipped"], billing["freeze_days"]) == (3, 15, 14)
    assert billing["as_of"] == END


def test_overview_blocked_share_counts_the_last_30_days(overview, staff):
    [billing] = selectors.overview_rows(user=staff, start=START, end=END, repositories=["billing"])
    # Day 30 is outside the 30 days ending today; day 10 is inside.
    assert (billing["patches_30d"], billing["blocked_30d"]) == (3, 2)
    assert billing["blocked_share"] == pytest.approx(66.7)


def test_overview_change_is_against_30_days_before(overview, staff):
    [billing] = selectors.overview_rows(user=staff, start=START, end=END, repositories=["billing"])
    change = billing["change"]
    assert (change["active"], change["expired"], change["skipped"]) == (2, 2, 5)
    assert change["blocked_share"] == pytest.approx(66.7 - 25.0)


def test_overview_change_is_unknown_without_history(overview, staff):
    rows = selectors.overview_rows(user=staff, start=START, end=END, repositories=None)
    search = next(row for row in rows if row["slug"] == "search")
    quiet = next(row for row in rows if row["slug"] == "quiet")
    assert search["change"]["active"] is None
    assert quiet["as_of"] is None
    assert quiet["blocked_share"] is None
    assert quiet["active"] == 0


def test_overview_uses_an_old_snapshot_when_none_is_recent(db, staff):
    old = RepositoryFactory(slug="old")
    snap(old, 200, active=5)
    [row] = selectors.overview_rows(user=staff, start=START, end=END, repositories=None)
    assert row["active"] == 5
    assert row["as_of"] == day(200)
    assert row["change"]["active"] is None  # no second snapshot to compare with


def test_overview_ignores_snapshots_after_the_end(overview, staff):
    [billing] = selectors.overview_rows(
        user=staff, start=START, end=day(5), repositories=["billing"]
    )
    assert billing["active"] == 3
    assert billing["as_of"] == day(10)


# --- series ----------------------------------------------------------------------------------


def test_debt_series_rows_come_straight_from_the_snapshots(overview, staff):
    series = selectors.debt_series(user=staff, start=day(10), end=END, repositories=None)
    assert [(row["date"], row["repository"]) for row in series] == [
        (day(10), "billing"),
        (END, "billing"),
        (END, "search"),
    ]
    assert set(series[0]) == {"date", "repository", *selectors.SERIES_FIELDS}
    assert series[1]["skipped"] == 15
    assert series[0]["median_net_delta"] is None


def test_weekly_rows_sum_days_into_weeks(db, staff):
    repository = RepositoryFactory(slug="billing")
    monday = datetime.date(2026, 11, 16)
    for offset, (patches, blocked) in enumerate([(2, 1), (3, 0), (0, 0)]):
        DebtSnapshot.objects.create(
            repository=repository,
            day=monday + datetime.timedelta(days=offset),
            patches=patches,
            blocked=blocked,
        )
    DebtSnapshot.objects.create(repository=repository, day=monday + datetime.timedelta(7))
    weekly = selectors.weekly_from_series(
        selectors.debt_series(
            user=staff, start=monday, end=monday + datetime.timedelta(13), repositories=None
        )
    )
    assert weekly == [
        {"week": monday, "repository": "billing", "patches": 5, "blocked": 1, "share": 20.0},
        {
            "week": monday + datetime.timedelta(7),
            "repository": "billing",
            "patches": 0,
            "blocked": 0,
            "share": None,
        },
    ]


# --- totals summed by the database ---------------------------------------------------------


@pytest.fixture
def crafted(db):
    """Three repositories with uneven days: gaps, a day only one has, weeks cut by the range,
    a week without patches, a null median, and figures that differ on every day."""
    repositories = [RepositoryFactory(slug=slug) for slug in ("alpha", "beta", "gamma")]
    for index, repository in enumerate(repositories):
        for offset in range(0, 45):
            if (offset + index) % (index + 2) == 0:
                continue  # a gap: this repository has no snapshot that day
            patches = 0 if 15 <= offset <= 21 else (offset * 7 + index) % 6
            blocked = min(patches, (offset + 3 * index) % 4)
            DebtSnapshot.objects.create(
                repository=repository,
                day=day(offset),
                **{
                    name: (offset * (index + 3) + len(name)) % 11
                    for name in TOTAL_FIGURES
                    if name not in ("patches", "blocked", "passed")
                },
                patches=patches,
                blocked=blocked,
                passed=patches - blocked,
                median_net_delta=None if offset % 5 else 1.5 * index,
            )
    DebtTotal.objects.refresh(days=[day(offset) for offset in range(45)])
    return repositories


# The Python sums the overview used to make of the per-repository series.
def python_totals(series):
    return {
        "daily": charts.daily_totals(series, TOTAL_FIGURES),
        "weekly": charts.blocked_share_table(selectors.weekly_from_series(series)),
    }


@pytest.mark.parametrize(
    ("start", "end", "repositories"),
    [
        (day(44), END, None),
        (day(40), day(3), None),  # both weeks cut by the range (END is a Monday)
        (day(30), day(12), ["beta", "gamma"]),
        (day(30), END, ["alpha"]),
        (day(100), day(50), None),  # no snapshots at all
    ],
)
def test_debt_totals_equal_the_python_sums_of_the_series(crafted, staff, start, end, repositories):
    args = {"user": staff, "start": start, "end": end, "repositories": repositories}
    totals = selectors.debt_totals(**args)
    assert totals == python_totals(selectors.debt_series(**args))
    # What the charts and their tables draw is the same from either.
    series = selectors.debt_series(**args)
    daily, weekly = totals["daily"], totals["weekly"]
    for table in (charts.freeze_debt_table, charts.skip_debt_table):
        assert table(daily) == table(series)
    assert charts.blocked_share_table(weekly) == charts.blocked_share_table(
        selectors.weekly_from_series(series)
    )
    # The overview draws its figures straight from the daily and weekly rows, as they come.
    freeze_table, skip_table = charts.freeze_debt_table(series), charts.skip_debt_table(series)
    assert charts.freeze_debt_figure(daily) == charts.freeze_debt_figure(freeze_table)
    assert charts.skip_debt_figure(daily) == charts.skip_debt_figure(skip_table)
    weeks = charts.blocked_share_table(selectors.weekly_from_series(series))
    assert charts.blocked_share_figure(weekly) == charts.blocked_share_figure(weeks)


def test_debt_totals_types_and_shape(crafted, staff):
    totals = selectors.debt_totals(user=staff, start=day(44), end=END, repositories=None)
    first = totals["daily"][0]
    assert set(first) == {"date", *TOTAL_FIGURES}
    assert isinstance(first["date"], datetime.date)
    assert all(type(first[name]) is int for name in TOTAL_FIGURES)
    week = totals["weekly"][0]
    assert set(week) == {"week", "patches", "blocked", "share"}
    assert week["week"] == selectors.week_start(day(44))
    assert isinstance(week["week"], datetime.date)
    # Days 15 to 21 (a whole week) have no patches: its share is unknown, not 0 %.
    [quiet] = [row for row in totals["weekly"] if row["patches"] == 0]
    assert quiet == {"week": day(21), "patches": 0, "blocked": 0, "share": None}


def test_debt_totals_count_only_visible_repositories(crafted, db):
    member = UserFactory(username="pat")
    team_create(name="Payments", slug="payments", members=[member], repositories=[crafted[1]])
    args = {"start": day(44), "end": END}
    mine = selectors.debt_totals(user=member, repositories=None, **args)
    assert mine == selectors.debt_totals(user=member, repositories=["beta"], **args)
    assert mine == python_totals(selectors.debt_series(user=member, repositories=None, **args))
    # Naming an invisible repository adds nothing.
    assert selectors.debt_totals(user=member, repositories=["alpha"], **args) == {
        "daily": [],
        "weekly": [],
    }


@pytest.mark.parametrize("repositories", [None, ["beta", "gamma"]])
def test_the_overview_is_its_rows_and_totals_with_the_repositories_read_once(
    crafted, staff, repositories, django_assert_num_queries
):
    lead = UserFactory(username="lee")
    team_create(name="Two", slug="two", members=[lead], repositories=crafted[1:])
    args = {"start": day(44), "end": END, "repositories": repositories}
    for user in (staff, lead):
        rows = selectors.overview_rows(user=user, **args)
        totals = selectors.debt_totals(user=user, **args)
        every = user.is_staff and not repositories
        # Two reads of the repositories apart (one when staff read every one), one together.
        with django_assert_num_queries(3 if every else 4):
            selectors.overview_rows(user=user, **args)
            selectors.debt_totals(user=user, **args)
        with django_assert_num_queries(3):
            together = selectors.overview(user=user, **args)
        assert together == {"rows": rows, **totals}
        assert together["rows"] and together["daily"]


# --- repository page ---------------------------------------------------------------------------


@pytest.fixture
def ledger(db):
    repository = RepositoryFactory(slug="billing")
    soon = FreezeFactory(
        repository=repository, freeze_id="FRZ-SOON", expires=day(-3), owner="a@example.com"
    )
    later = FreezeFactory(repository=repository, freeze_id="FRZ-LATER", expires=day(-20))
    gone = FreezeFactory(repository=repository, freeze_id="FRZ-GONE", expires=day(4))
    FreezeFactory(repository=repository, freeze_id="FRZ-RETIRED", current=False)
    for freeze in (soon, later, gone):
        FreezeEventFactory(freeze=freeze)
    later.version, later.renewals = 2, 1
    later.save()
    FreezeEvent.objects.create(
        repository=repository,
        freeze=later,
        ledger_version=later.first_version,
        kind=FreezeEvent.Kind.RENEWED,
        silent=True,
        chain=1,
        before={"expires": "x"},
        after={"expires": "y"},
    )
    # An answer on the current version acknowledges; one on an older version does not.
    FreezeAction.objects.create(
        freeze=soon, freeze_version=1, owner_email="a@example.com", action="acknowledge", nonce="1"
    )
    FreezeAction.objects.create(
        freeze=later, freeze_version=1, owner_email="a@example.com", action="acknowledge", nonce="2"
    )
    return repository


@time_machine.travel(datetime.datetime(2026, 11, 30, 12, tzinfo=UTC), tick=False)
def test_repository_detail_lists_the_current_ledger_with_status_and_answers(ledger, staff):
    detail = selectors.repository_detail(user=staff, slug="billing")
    rows = {row["freeze_id"]: row for row in detail["freezes"]}
    assert list(rows) == ["FRZ-GONE", "FRZ-SOON", "FRZ-LATER"]
    assert rows["FRZ-SOON"]["status"] == "expiring"
    assert rows["FRZ-SOON"]["days_left"] == 3
    assert rows["FRZ-SOON"]["owner_email"] == "a@example.com"
    assert rows["FRZ-LATER"]["status"] == "active"
    assert rows["FRZ-GONE"]["status"] == "expired"
    assert rows["FRZ-GONE"]["days_left"] == -4
    assert rows["FRZ-SOON"]["acknowledged"] is True
    assert rows["FRZ-LATER"]["acknowledged"] is False  # answered version 1, now at 2
    assert detail["counts"] == {
        "active": 2,
        "expiring": 1,
        "expired": 1,
        "invalid": 0,
        "unacknowledged": 2,
    }


def test_repository_detail_shows_history_with_silent_renewals_and_chains(ledger, staff):
    detail = selectors.repository_detail(user=staff, slug="billing")
    assert detail["silent_renewals"] == 1
    assert detail["chains"] == {"FRZ-LATER": 1}
    renewal = next(event for event in detail["history"] if event["kind"] == "renewed")
    assert renewal["freeze_id"] == "FRZ-LATER"
    assert renewal["silent"] is True


def test_repository_detail_lists_the_latest_events_and_counts_them_all(ledger, staff, monkeypatch):
    # Four events, of which the oldest is the only silent one: a page of two still counts it.
    long_ago = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    FreezeEvent.objects.filter(silent=True).update(created_at=long_ago)
    monkeypatch.setattr(repository_selectors, "RECENT_EVENTS", 2)
    detail = selectors.repository_detail(user=staff, slug="billing")
    assert len(detail["history"]) == 2
    assert all(not event["silent"] for event in detail["history"])
    assert detail["history_total"] == 4
    assert detail["silent_renewals"] == 1


def test_repository_detail_without_events_counts_none(staff):
    RepositoryFactory(slug="quiet")
    detail = selectors.repository_detail(user=staff, slug="quiet")
    assert (detail["history"], detail["history_total"], detail["silent_renewals"]) == ([], 0, 0)


def test_repository_detail_lists_patches_with_verdicts_and_policy(ledger, staff):
    ReportFactory(
        patch=PatchFactory(repository=ledger, ref="PR-1"),
        status="ready",
        verdict="block",
        body={"problems": [{"code": "lost-tests"}, {"code": "head-failed"}]},
    )
    PatchFactory(repository=ledger, ref="PR-2")  # no report yet
    Policy.objects.create(repository=ledger, severities={"fixture-touched": "block"})
    PolicyChange.objects.create(repository=ledger, before={}, after={"x": 1})
    detail = selectors.repository_detail(user=staff, slug="billing")
    patches = {p["ref"]: p for p in detail["patches"]}
    assert patches["PR-1"]["verdict"] == "block"
    assert patches["PR-1"]["codes"] == ["head-failed", "lost-tests"]
    assert patches["PR-2"]["verdict"] == "pending"
    assert detail["policy"]["severities"]["fixture-touched"] == "block"
    assert detail["policy"]["severities"]["environment-drift"] == "warn"
    assert detail["policy"]["max_freeze_days"] == 14
    assert len(detail["policy"]["changes"]) == 1
    # The stored overrides too, so the page's form needs no query of its own.
    assert detail["policy"]["overrides"] == {"fixture-touched": "block"}


def test_repository_detail_without_a_stored_policy_has_no_overrides(ledger, staff):
    assert selectors.repository_detail(user=staff, slug="billing")["policy"]["overrides"] == {}


def test_repository_detail_reads_the_snapshots_once(ledger, staff):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for offset in range(20):
        snap(ledger, offset, patches=3, blocked=offset % 4 and 1)
    other = RepositoryFactory(slug="other")
    snap(other, 0, patches=9, blocked=9)
    with CaptureQueriesContext(connection) as queries:
        detail = selectors.repository_detail(user=staff, slug="billing", end=END, start=day(19))
    snapshot_reads = [q for q in queries if "dashboards_debtsnapshot" in q["sql"]]
    policy_reads = [q for q in queries if re.search(r"ledger_policy\b", q["sql"])]
    assert len(snapshot_reads) == 1
    assert len(policy_reads) == 1
    args = {"user": staff, "start": day(19), "end": END, "repositories": ["billing"]}
    assert detail["series"] == selectors.debt_series(**args)
    assert detail["weekly"] == selectors.weekly_from_series(selectors.debt_series(**args))


def test_repository_detail_trends_default_to_the_last_90_days(ledger, staff):
    DebtSnapshot.objects.create(repository=ledger, day=END, active=1)
    DebtSnapshot.objects.create(repository=ledger, day=END - datetime.timedelta(days=95))
    detail = selectors.repository_detail(user=staff, slug="billing", today=END)
    assert [row["date"] for row in detail["series"]] == [END]
    assert detail["start"] == END - datetime.timedelta(days=89)


# --- patch page ------------------------------------------------------------------------------


def test_patch_detail_gives_report_runs_drift_and_swaps(db, staff):
    repository = RepositoryFactory(slug="billing")
    patch = PatchFactory(repository=repository)
    base = RunFactory(repository=repository, sha=patch.base_sha, meta={"python": "3.12", "x": 1})
    RunFactory(repository=repository, sha=patch.head_sha, meta={"python": "3.13"}, attempt=1)
    head = RunFactory(repository=repository, sha=patch.head_sha, meta={"python": "3.13"}, attempt=2)
    ReportFactory(
        patch=patch,
        status="ready",
        verdict="block",
        body={
            "figures": {"earned": 10, "borrowed": 400},
            "problems": [
                {"code": "environment-drift", "severity": "warn"},
                {"code": "lost-tests", "severity": "block"},
            ],
            "per_file": [
                {"file": "tests/a.py", "base_passed": 1, "head_passed": 10, "lost": 1},
                {"file": "tests/b.py", "base_passed": 5, "head_passed": 7, "lost": 0},
            ],
            "lost": ["tests/a.py::slow"],
        },
    )
    detail = selectors.patch_detail(user=staff, repository_slug="billing", patch_id=patch.pk)
    assert (detail["base_run"], detail["head_run"]) == (base.pk, head.pk)
    assert detail["verdict"] == "block"
    assert [p["code"] for p in detail["problems"]] == ["lost-tests", "environment-drift"]
    assert detail["drift"] == [{"key": "python", "base": "3.12", "head": "3.13"}]
    assert [row["swap"] for row in detail["per_file"]] == [True, False]
    assert (detail["earned"], detail["borrowed"]) == (10, 400)
    assert detail["lost"] == ["tests/a.py::slow"]


def test_patch_detail_without_report_or_runs_is_pending(db, staff):
    patch = PatchFactory(repository=RepositoryFactory(slug="billing"))
    detail = selectors.patch_detail(user=staff, repository_slug="billing", patch_id=patch.pk)
    assert detail["verdict"] == "pending"
    assert detail["base_run"] is None
    assert detail["drift"] == []


# --- freeze page -----------------------------------------------------------------------------


def test_freeze_detail_shows_the_tests_outcomes_in_the_last_20_runs(db, staff):
    repository = RepositoryFactory(slug="billing")
    freeze = FreezeFactory(repository=repository, freeze_id="FRZ-1", nodeid="tests/t.py::flaky")
    FreezeEventFactory(freeze=freeze)
    name = TestNameFactory(repository=repository, nodeid="tests/t.py::flaky")
    start = datetime.datetime(2026, 11, 1, tzinfo=UTC)
    runs = [
        RunFactory(
            repository=repository,
            status=Run.Status.READY,
            parsed_at=start,
            created_at=start + datetime.timedelta(hours=index),
        )
        for index in range(22)
    ]
    TestResultFactory(run=runs[-1], test=name, bucket=TestResult.Bucket.FAILED)
    TestResultFactory(run=runs[-2], test=name, bucket=TestResult.Bucket.SKIPPED)
    TestResultFactory(run=runs[0], test=name, bucket=TestResult.Bucket.PASSED)  # too old
    RunFactory(repository=repository)  # received, not parsed: not an outcome
    detail = selectors.freeze_detail(user=staff, repository_slug="billing", freeze_id="FRZ-1")
    outcomes = [row["outcome"] for row in detail["outcomes"]]
    assert len(outcomes) == 20
    assert outcomes[:3] == ["failed", "skipped", "not run"]
    assert "passed" not in outcomes
    assert detail["covers"] == ["src/net/**"]
    assert [event["kind"] for event in detail["events"]] == ["opened"]


def test_freeze_detail_lists_every_answer_and_knows_the_current_one(db, staff):
    freeze = FreezeFactory(repository=RepositoryFactory(slug="billing"), freeze_id="FRZ-1")
    freeze.version = 2
    freeze.save()
    FreezeAction.objects.create(
        freeze=freeze, freeze_version=1, owner_email="a@example.com", action="fixed", nonce="1"
    )
    detail = selectors.freeze_detail(user=staff, repository_slug="billing", freeze_id="FRZ-1")
    assert len(detail["actions"]) == 1
    assert detail["row"]["acknowledged"] is False
    assert detail["row"]["current"] is True


# --- bounded queries -----------------------------------------------------------------------


@pytest.fixture
def many(db):
    """Twenty repositories with 60 days of snapshots, patches, freezes and runs."""
    repositories = []
    for index in range(20):
        repository = RepositoryFactory(slug=f"repo-{index:02d}")
        repositories.append(repository)
        DebtSnapshot.objects.bulk_create(
            DebtSnapshot(repository=repository, day=day(offset), active=offset % 3, patches=2)
            for offset in range(60)
        )
    DebtTotal.objects.refresh(days=[day(offset) for offset in range(60)])
    first = repositories[0]
    for _ in range(30):
        ReportFactory(patch=PatchFactory(repository=first), status="ready", verdict="pass")
        freeze = FreezeFactory(repository=first)
        FreezeEventFactory(freeze=freeze)
    return repositories


@pytest.mark.parametrize(
    "call",
    [
        lambda user: selectors.overview_rows(user=user, start=START, end=END, repositories=None),
        lambda user: selectors.debt_series(user=user, start=START, end=END, repositories=None),
        lambda user: selectors.weekly_from_series(
            selectors.debt_series(user=user, start=START, end=END, repositories=None)
        ),
        lambda user: selectors.repository_detail(user=user, slug="repo-00"),
    ],
    ids=["overview", "series", "weekly", "repository"],
)
def test_selectors_run_a_bounded_number_of_queries(
    many, staff, call, django_assert_max_num_queries
):
    with django_assert_max_num_queries(12):
        call(staff)


def test_patch_and_freeze_detail_run_a_bounded_number_of_queries(
    many, staff, django_assert_max_num_queries
):
    patch = many[0].patches.first()
    freeze = many[0].freezes.first()
    with django_assert_max_num_queries(8):
        selectors.patch_detail(user=staff, repository_slug="repo-00", patch_id=patch.pk)
    with django_assert_max_num_queries(10):
        selectors.freeze_detail(user=staff, repository_slug="repo-00", freeze_id=freeze.freeze_id)


def test_repository_detail_reads_the_codes_of_each_report_without_its_body(ledger, staff):
    ReportFactory(
        patch=PatchFactory(repository=ledger, ref="PR-9"),
        status="ready",
        verdict="block",
        body={
            "problems": [{"code": "lost-tests"}, {"code": "head-failed"}, {"code": "lost-tests"}],
            "per_file": [{"file": f"f{i}.py"} for i in range(50)],
        },
    )
    with CaptureQueriesContext(connection) as queries:
        detail = selectors.repository_detail(user=staff, slug="billing")
    listed = next(p for p in detail["patches"] if p["ref"] == "PR-9")
    assert listed["codes"] == ["head-failed", "lost-tests"]
    # The body, per-file rows and test lists included, stays in the database: PostgreSQL
    # would decompress the whole of it even to extract its problems.
    assert not [q["sql"] for q in queries if '"evidence_report"."body"' in q["sql"]]
