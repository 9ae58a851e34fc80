"""DebtTotal: each day's sums across repositories, written by the snapshot job in its own
transaction (``DebtTotal.objects.refresh``), on SQLite and PostgreSQL alike."""

import datetime
import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection

from dashboards import charts
from dashboards.models import TOTAL_FIGURES, DebtSnapshot, DebtTotal
from dashboards.snapshots import snapshot_take, snapshots_backfill
from tests.concurrency import at_once, races_need_postgresql
from tests.factories import RepositoryFactory

pytestmark = pytest.mark.django_db

DAY = datetime.date(2026, 11, 30)
REGISTERED = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def day(offset: int) -> datetime.date:
    return DAY - datetime.timedelta(days=offset)


def summed() -> dict[datetime.date, dict[str, int]]:
    """Each day's sums as the snapshots give them now."""
    sums: dict[datetime.date, dict[str, int]] = {}
    for snapshot in DebtSnapshot.objects.all():
        row = sums.setdefault(snapshot.day, dict.fromkeys(("snapshots", *TOTAL_FIGURES), 0))
        row["snapshots"] += 1
        for name in TOTAL_FIGURES:
            row[name] += getattr(snapshot, name)
    return sums


def kept() -> dict[datetime.date, dict[str, int]]:
    return {
        row.pop("day"): row for row in DebtTotal.objects.values("day", "snapshots", *TOTAL_FIGURES)
    }


def test_the_snapshot_job_writes_the_sums_of_the_days_it_took():
    alpha, beta = RepositoryFactory(created_at=REGISTERED), RepositoryFactory(created_at=REGISTERED)
    snapshots_backfill(day=DAY, days=3)
    assert kept() == summed()
    assert set(kept()) == {day(0), day(1), day(2)}
    assert {row["snapshots"] for row in kept().values()} == {2}
    # Taken again: the same rows, not twice the sums.
    snapshots_backfill(day=DAY, days=3, repositories=[alpha])
    snapshots_backfill(day=DAY, days=3)
    assert kept() == summed()
    assert {row["snapshots"] for row in kept().values()} == {2}
    del beta


def test_taking_a_day_again_with_other_figures_rewrites_its_sums():
    repository = RepositoryFactory(created_at=REGISTERED)
    other = RepositoryFactory(created_at=REGISTERED)
    DebtSnapshot.objects.create(repository=other, day=DAY, skipped=3, active=1)
    DebtTotal.objects.refresh(days=[DAY])
    snapshot_take(repository=repository, day=DAY)
    DebtSnapshot.objects.filter(repository=repository).update(skipped=40)
    snapshot_take(repository=repository, day=DAY)  # computes 0 skipped again
    assert kept() == summed()
    assert kept()[DAY]["snapshots"] == 2
    assert kept()[DAY]["skipped"] == 3


def test_a_deleted_repository_leaves_the_sums():
    alpha, beta = RepositoryFactory(created_at=REGISTERED), RepositoryFactory(created_at=REGISTERED)
    snapshots_backfill(day=DAY, days=2)
    DebtSnapshot.objects.create(repository=beta, day=day(5), active=4)
    DebtTotal.objects.refresh(days=[day(5)])
    assert kept()[day(5)]["active"] == 4
    beta.delete()  # its snapshots go with it
    assert kept() == summed()
    assert set(kept()) == {day(0), day(1)}
    assert {row["snapshots"] for row in kept().values()} == {1}
    del alpha


def test_a_day_left_without_snapshots_loses_its_row():
    repository = RepositoryFactory()
    DebtSnapshot.objects.create(repository=repository, day=DAY, active=1)
    DebtTotal.objects.refresh(days=[DAY])
    DebtSnapshot.objects.all().delete()
    DebtTotal.objects.refresh(days=[DAY])
    assert kept() == {}


@races_need_postgresql("two repositories' snapshots of one day")
@pytest.mark.django_db(transaction=True)
def test_repositories_snapshotted_at_once_are_all_summed():
    repositories = [RepositoryFactory(created_at=REGISTERED) for _ in range(4)]
    at_once(
        *(lambda r=r: snapshots_backfill(day=DAY, days=2, repositories=[r]) for r in repositories)
    )
    assert kept() == summed()
    assert {row["snapshots"] for row in kept().values()} == {4}


def test_the_totals_sum_the_figures_the_model_and_the_charts_name():
    assert (
        *charts.FREEZE_DEBT_FIELDS,
        *charts.SKIP_DEBT_FIELDS,
        "patches",
        "blocked",
    ) == TOTAL_FIGURES
    assert {field.name for field in DebtTotal._meta.get_fields()} == {
        "day",
        "snapshots",
        *TOTAL_FIGURES,
    }


def test_the_migration_sums_the_days_already_snapshotted():
    migration = importlib.import_module("dashboards.migrations.0004_debttotal_without_triggers")
    alpha, beta = RepositoryFactory(), RepositoryFactory()
    for offset in range(3):
        DebtSnapshot.objects.create(repository=alpha, day=day(offset), active=offset, patches=1)
    DebtSnapshot.objects.create(repository=beta, day=day(1), skipped=6, blocked=1, patches=2)
    # What forward uses of a schema editor (SQLite's refuses to open inside a test's transaction).
    editor = SimpleNamespace(connection=connection, execute=connection.cursor().execute)
    migration.forward(apps, editor)
    assert kept() == summed()
    assert len(kept()) == 3
