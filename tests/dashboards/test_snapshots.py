import datetime

import pytest
import time_machine
from django.conf import settings
from django.core.management import CommandError, call_command

from dashboards.models import DebtSnapshot
from dashboards.snapshots import snapshot_take, snapshots_backfill
from dashboards.tasks import snapshot_debt
from evidence.models import Report, Run
from ledger.models import FreezeAction, FreezeEvent
from tests.factories import (
    FreezeEventFactory,
    FreezeFactory,
    LedgerVersionFactory,
    PatchFactory,
    ReportFactory,
    RepositoryFactory,
    RunFactory,
)

UTC = datetime.UTC
DAY = datetime.date(2026, 11, 2)


def at(day: str, hour: int = 10) -> datetime.datetime:
    return datetime.datetime.combine(
        datetime.date.fromisoformat(day), datetime.time(hour), tzinfo=UTC
    )


def ledger_entry(fid: str, opened: str | None, expires: str | None) -> dict:
    return {"id": fid, "test": f"tests/test_x.py::{fid}", "opened": opened, "expires": expires}


REGISTERED = at("2026-10-01")


@pytest.fixture
def repository(db):
    return RepositoryFactory(slug="billing", default_branch="main", created_at=REGISTERED)


@pytest.fixture
def ledger(repository):
    """Version 1 (Nov 1): A expires in 3 days, B in 18, C expired, D has no expiry.
    Version 2 (Nov 3) renews B. A's owner acknowledged version 1; B's acknowledged version 2."""
    v1 = LedgerVersionFactory(
        repository=repository,
        created_at=at("2026-11-01"),
        freezes=[
            ledger_entry("A", "2026-10-25", "2026-11-05"),
            ledger_entry("B", "2026-10-30", "2026-11-20"),
            ledger_entry("C", "2026-10-20", "2026-10-31"),
            ledger_entry("D", "2026-10-20", None),
        ],
    )
    v2 = LedgerVersionFactory(
        repository=repository,
        created_at=at("2026-11-03"),
        freezes=[
            ledger_entry("A", "2026-10-25", "2026-11-05"),
            ledger_entry("B", "2026-10-30", "2026-11-25"),
        ],
    )
    rows = {}
    for fid in "ABCD":
        rows[fid] = FreezeFactory(repository=repository, freeze_id=fid, first_version=v1)
        FreezeEventFactory(freeze=rows[fid], ledger_version=v1, created_at=at("2026-11-01"))
    FreezeEvent.objects.create(
        repository=repository,
        freeze=rows["B"],
        ledger_version=v2,
        kind=FreezeEvent.Kind.RENEWED,
        silent=True,
        chain=1,
        before={"expires": "2026-11-20"},
        after={"expires": "2026-11-25"},
        created_at=at("2026-11-03"),
    )
    for fid, version, when in [("A", 1, "2026-11-01"), ("B", 2, "2026-11-03")]:
        FreezeAction.objects.create(
            freeze=rows[fid],
            freeze_version=version,
            owner_email="owner@example.com",
            action=FreezeAction.Action.ACKNOWLEDGE,
            nonce=f"n-{fid}",
            created_at=at(when, 12),
        )
    return rows


def ready_run(repository, *, branch="main", created, skipped=0, xfail=0, status=Run.Status.READY):
    return RunFactory(
        repository=repository,
        branch=branch,
        status=status,
        parsed_at=created if status == Run.Status.READY else None,
        created_at=created,
        skipped=skipped,
        xfail=xfail,
    )


@pytest.fixture
def runs(repository):
    ready_run(repository, created=at("2026-10-30"), skipped=1, xfail=0)
    ready_run(repository, created=at("2026-11-01"), skipped=4, xfail=2)
    ready_run(repository, created=at("2026-11-03"), skipped=9, xfail=1)  # after the day
    ready_run(repository, branch="feature/x", created=at("2026-11-02"), skipped=50)
    ready_run(repository, created=at("2026-11-02"), skipped=70, status=Run.Status.RECEIVED)


def report(repository, *, verdict, computed, net, earned, borrowed, new_skips=()):
    status = Report.Status.PENDING if verdict == "pending" else Report.Status.READY
    return ReportFactory(
        patch=PatchFactory(repository=repository),
        status=status,
        verdict=verdict,
        computed_at=computed,
        body={
            "figures": {"net_executed_delta": net, "earned": earned, "borrowed": borrowed},
            "new_skips": list(new_skips),
        },
    )


# verdict, computed at, net executed delta, earned, borrowed, new skips
REPORTS = [
    ("block", at("2026-11-02", 9), 2, 3, 100, ["t::a"]),
    ("pass", at("2026-11-02", 15), 4, 5, 90, []),
    ("pass", at("2026-11-02", 23), -1, 0, 50, ["t::b", "t::c"]),
    ("pending", at("2026-11-02", 16), 0, 0, 0, []),  # not reported yet: not counted
    ("block", at("2026-11-01", 16), 7, 7, 7, []),  # the day before
    ("pass", at("2026-11-03", 0), 9, 9, 9, []),  # the day after
]


@pytest.fixture
def reports(repository):
    for verdict, computed, net, earned, borrowed, new_skips in REPORTS:
        report(
            repository,
            verdict=verdict,
            computed=computed,
            net=net,
            earned=earned,
            borrowed=borrowed,
            new_skips=new_skips,
        )


@pytest.fixture
def crafted(ledger, runs, reports, repository):
    return repository


def test_freezes_are_counted_from_the_ledger_current_that_day(crafted):
    snapshot = snapshot_take(repository=crafted, day=DAY)
    assert (snapshot.active, snapshot.expiring, snapshot.expired) == (2, 1, 1)


def test_the_expiry_boundaries_of_a_day(repository):
    # In force through its expiry day, and "expiring" up to 7 days ahead (section 9).
    LedgerVersionFactory(
        repository=repository,
        created_at=at("2026-11-01"),
        freezes=[
            ledger_entry("YESTERDAY", "2026-10-20", "2026-11-01"),
            ledger_entry("TODAY", "2026-10-20", "2026-11-02"),
            ledger_entry("IN-7", "2026-10-20", "2026-11-09"),
            ledger_entry("IN-8", "2026-10-20", "2026-11-10"),
        ],
    )
    snapshot = snapshot_take(repository=repository, day=DAY)
    assert (snapshot.active, snapshot.expiring, snapshot.expired) == (3, 2, 1)


def test_freeze_days_accrue_over_the_active_freezes_since_opened(crafted):
    snapshot = snapshot_take(repository=crafted, day=DAY)
    assert snapshot.freeze_days == 8 + 3  # A since Oct 25, B since Oct 30


def test_unacknowledged_counts_active_and_expired_freezes_without_an_answer_on_their_version(
    crafted,
):
    assert snapshot_take(repository=crafted, day=DAY).unacknowledged == 2  # B and C
    # Nov 3: B renewed (version 2) and acknowledged; C retired from the ledger.
    assert snapshot_take(repository=crafted, day=datetime.date(2026, 11, 3)).unacknowledged == 0


def test_skips_come_from_the_latest_ready_default_branch_run_of_that_day(crafted):
    snapshot = snapshot_take(repository=crafted, day=DAY)
    assert (snapshot.skipped, snapshot.xfail) == (4, 2)


def test_patches_are_the_reports_computed_that_day(crafted):
    snapshot = snapshot_take(repository=crafted, day=DAY)
    assert (snapshot.patches, snapshot.blocked, snapshot.passed) == (3, 1, 2)
    assert snapshot.median_net_delta == 2.0
    assert (snapshot.earned, snapshot.borrowed, snapshot.new_skips) == (8, 240, 3)


def test_a_day_before_any_ledger_or_run_is_all_zero(crafted):
    snapshot = snapshot_take(repository=crafted, day=datetime.date(2026, 10, 1))
    assert snapshot.active == snapshot.skipped == snapshot.patches == 0
    assert snapshot.median_net_delta is None


def test_taking_a_snapshot_twice_changes_nothing(crafted):
    first = snapshot_take(repository=crafted, day=DAY)
    values = DebtSnapshot.objects.filter(pk=first.pk).values().get()
    again = snapshot_take(repository=crafted, day=DAY)
    assert again.pk == first.pk
    assert DebtSnapshot.objects.count() == 1
    assert DebtSnapshot.objects.filter(pk=first.pk).values().get() == values


def test_taking_a_day_again_after_new_evidence_updates_its_row(crafted):
    snapshot_take(repository=crafted, day=DAY)
    ready_run(crafted, created=at("2026-11-02", 20), skipped=6, xfail=0)
    snapshot = snapshot_take(repository=crafted, day=DAY)
    assert snapshot.skipped == 6
    assert DebtSnapshot.objects.count() == 1


def test_backfill_takes_each_past_day_as_it_was(crafted):
    written = snapshots_backfill(day=datetime.date(2026, 11, 3), days=3)
    assert written == 3
    rows = {s.day.isoformat(): s for s in DebtSnapshot.objects.filter(repository=crafted)}
    assert sorted(rows) == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert (rows["2026-11-01"].skipped, rows["2026-11-01"].patches) == (4, 1)
    assert rows["2026-11-02"].patches == 3
    # Nov 3: version 2 holds A and B only, and the 9-skip run is the latest.
    assert (rows["2026-11-03"].active, rows["2026-11-03"].expired) == (2, 0)
    assert (rows["2026-11-03"].skipped, rows["2026-11-03"].patches) == (9, 1)
    # Backfilling again writes the same rows.
    snapshots_backfill(day=datetime.date(2026, 11, 3), days=3)
    assert DebtSnapshot.objects.filter(repository=crafted).count() == 3


def test_backfill_covers_every_repository(crafted):
    other = RepositoryFactory(slug="search", created_at=REGISTERED)
    snapshots_backfill(day=DAY, days=2)
    assert DebtSnapshot.objects.filter(repository=other).count() == 2


def test_backfill_leaves_out_days_before_the_repository_was_registered(crafted):
    newer = RepositoryFactory(slug="search", created_at=at("2026-11-02", 18))
    snapshots_backfill(day=datetime.date(2026, 11, 3), days=5)
    days = DebtSnapshot.objects.filter(repository=newer).values_list("day", flat=True)
    assert sorted(days) == [DAY, datetime.date(2026, 11, 3)]


def test_the_command_snapshots_today_by_default(crafted, capsys):
    with time_machine.travel(at("2026-11-02", 23), tick=False):
        call_command("snapshot_debt")
    assert list(DebtSnapshot.objects.values_list("day", flat=True)) == [DAY]
    assert "Wrote 1 debt snapshot(s) for 2026-11-02." in capsys.readouterr().out


def test_the_command_backfills_days_ending_with_the_date(crafted, capsys):
    call_command("snapshot_debt", "--date", "2026-11-03", "--backfill", "3")
    assert DebtSnapshot.objects.count() == 3
    assert "2026-11-01 to 2026-11-03" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--date", "yesterday"], "--date takes a date"), (["--backfill", "0"], "--backfill")],
)
def test_the_command_refuses_bad_arguments(db, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("snapshot_debt", *args)


def test_the_task_takes_yesterday_and_today(crafted):
    with time_machine.travel(at("2026-11-03", 0), tick=False):
        assert snapshot_debt() == 2
    assert sorted(DebtSnapshot.objects.values_list("day", flat=True)) == [
        datetime.date(2026, 11, 2),
        datetime.date(2026, 11, 3),
    ]


def test_the_beat_runs_the_task_daily_after_midnight():
    entry = settings.CELERY_BEAT_SCHEDULE["snapshot-debt"]
    assert entry["task"] == "dashboards.tasks.snapshot_debt"
    assert entry["schedule"].hour == {0}
    assert entry["schedule"].minute == {15}
    assert 22 * 3600 < entry["options"]["expires"] < 24 * 3600
