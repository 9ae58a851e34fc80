"""DebtTotal: the database's own sums of each day's snapshots, kept by triggers whatever
writes the snapshots (the migration's SQL, on SQLite and PostgreSQL alike)."""

import datetime
import importlib

import pytest
from django.db import connection

from dashboards import charts
from dashboards.models import TOTAL_FIGURES, DebtSnapshot, DebtTotal
from dashboards.snapshots import snapshot_take
from tests.factories import RepositoryFactory

pytestmark = pytest.mark.django_db

DAY = datetime.date(2026, 11, 30)


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


def test_every_way_of_writing_snapshots_keeps_the_sums():
    alpha, beta, gamma = RepositoryFactory(), RepositoryFactory(), RepositoryFactory()
    DebtSnapshot.objects.create(repository=alpha, day=day(0), active=2, skipped=5, patches=3)
    DebtSnapshot.objects.bulk_create(
        [
            DebtSnapshot(repository=beta, day=day(offset), expired=offset, blocked=1, patches=2)
            for offset in range(3)
        ]
        + [DebtSnapshot(repository=gamma, day=day(1), new_skips=4, xfail=1)]
    )
    assert kept() == summed() and len(kept()) == 3

    # An upsert, as the snapshot job writes: one row inserted, one updated in place.
    DebtSnapshot.objects.bulk_create(
        [
            DebtSnapshot(repository=alpha, day=day(0), active=7, unacknowledged=2),
            DebtSnapshot(repository=alpha, day=day(5), expiring=1),
        ],
        update_conflicts=True,
        unique_fields=["repository", "day"],
        update_fields=["active", "unacknowledged", "expiring"],
    )
    assert kept() == summed()
    assert kept()[day(0)]["active"] == 7  # 2 taken away, 7 added

    DebtSnapshot.objects.filter(repository=beta).update(skipped=9)
    DebtSnapshot.objects.filter(repository=gamma).update(day=day(2))  # moved to another day
    assert kept() == summed()

    snapshot = DebtSnapshot.objects.get(repository=alpha, day=day(5))
    snapshot.expiring = 3
    snapshot.save()
    assert kept() == summed()

    snapshot.delete()  # the last of its day: the day has no row any more
    assert day(5) not in kept()
    beta.delete()  # its snapshots go with it
    assert kept() == summed()
    assert set(kept()) == {day(0), day(2)}

    DebtSnapshot.objects.all().delete()
    assert kept() == {} == summed()


def test_the_snapshot_job_keeps_the_sums_when_it_takes_a_day_again():
    repository = RepositoryFactory(created_at=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))
    snapshot_take(repository=repository, day=DAY)
    DebtSnapshot.objects.filter(repository=repository).update(skipped=40)
    snapshot_take(repository=repository, day=DAY)  # computes 0 skipped again
    assert kept() == summed()
    assert kept()[DAY]["snapshots"] == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="TRUNCATE: PostgreSQL")
def test_emptying_the_snapshots_empties_the_sums():
    DebtSnapshot.objects.create(repository=RepositoryFactory(), day=DAY, active=1)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the foreign key's check, pending
        cursor.execute("TRUNCATE dashboards_debtsnapshot")
    assert kept() == {}


def test_the_triggers_sum_the_figures_the_model_and_the_charts_name():
    # The migration writes its figures out; a figure added later needs triggers of its own.
    migration = importlib.import_module("dashboards.migrations.0002_debttotal")
    assert migration.FIGURES == TOTAL_FIGURES
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
    migration = importlib.import_module("dashboards.migrations.0002_debttotal")
    alpha, beta = RepositoryFactory(), RepositoryFactory()
    for offset in range(3):
        DebtSnapshot.objects.create(repository=alpha, day=day(offset), active=offset, patches=1)
    DebtSnapshot.objects.create(repository=beta, day=day(1), skipped=6, blocked=1, patches=2)
    expected = summed()
    DebtTotal.objects.all().delete()  # as before the migration
    with connection.cursor() as cursor:
        cursor.execute(migration.FILL)
    assert kept() == expected
