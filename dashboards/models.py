"""The daily debt snapshots the charts read, and their totals."""

import datetime
from collections.abc import Iterable

from django.db import models
from django.db.models import Count, Q, Sum
from django.db.models.signals import post_delete
from django.dispatch import receiver

from evidence.models import Repository

# The figures a daily snapshot holds, in the order pages and CSV exports show them.
SNAPSHOT_FIGURES = (
    "active",
    "expiring",
    "expired",
    "unacknowledged",
    "freeze_days",
    "skipped",
    "xfail",
    "patches",
    "blocked",
    "passed",
    "new_skips",
    "median_net_delta",
    "earned",
    "borrowed",
)


class DebtSnapshot(models.Model):
    """The debt of one repository on one day, as ``snapshot_take`` computed it.

    Charts read these rows only, never raw results: a year of 50 repositories is 18,250 rows.
    """

    repository = models.ForeignKey(
        Repository, on_delete=models.CASCADE, related_name="debt_snapshots"
    )
    day = models.DateField()
    # Freezes of the ledger current that day.
    active = models.PositiveIntegerField(default=0)
    expiring = models.PositiveIntegerField(default=0)
    expired = models.PositiveIntegerField(default=0)
    unacknowledged = models.PositiveIntegerField(default=0)
    freeze_days = models.PositiveIntegerField(default=0)
    # The latest ready run of the default branch created by the end of the day.
    skipped = models.PositiveIntegerField(default=0)
    xfail = models.PositiveIntegerField(default=0)
    # Reports computed that day.
    new_skips = models.PositiveIntegerField(default=0)
    patches = models.PositiveIntegerField(default=0)
    blocked = models.PositiveIntegerField(default=0)
    passed = models.PositiveIntegerField(default=0)
    median_net_delta = models.FloatField(null=True, blank=True)
    earned = models.PositiveIntegerField(default=0)
    borrowed = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["repository", "day"]
        constraints = [
            # snapshot_debt is idempotent: taking a day again updates its one row.
            models.UniqueConstraint(fields=["repository", "day"], name="debtsnapshot_unique_day"),
            # A report is either a pass or a block; pending ones are not counted.
            models.CheckConstraint(
                condition=Q(blocked__lte=models.F("patches")) & Q(passed__lte=models.F("patches")),
                name="debtsnapshot_verdicts_within_patches",
            ),
        ]
        indexes = [
            # Overview charts read a date range across many repositories.
            models.Index(fields=["day", "repository"], name="debtsnapshot_day_idx"),
        ]

    def __str__(self) -> str:
        return f"debt of {self.repository_id} on {self.day}"


# The figures a DebtTotal sums (the overview's charts and their CSV exports).
TOTAL_FIGURES = (
    "active",
    "expiring",
    "expired",
    "unacknowledged",
    "skipped",
    "xfail",
    "new_skips",
    "patches",
    "blocked",
)


class DebtTotalManager(models.Manager["DebtTotal"]):
    def refresh(self, *, days: Iterable[datetime.date]) -> None:
        """Sum these days' snapshots into their rows again, in the caller's transaction (the
        snapshot job's); a day left without snapshots loses its row."""
        days = sorted(set(days))
        if not days:
            return
        # Lock the days' rows (made if missing) in day order before summing: a concurrent
        # taker of another repository's same day waits here, then sums with it committed.
        self.bulk_create([DebtTotal(day=day) for day in days], ignore_conflicts=True)
        list(self.select_for_update().filter(day__in=days).order_by("day").values("day"))
        sums = list(
            DebtSnapshot.objects.filter(day__in=days)
            .order_by("day")
            .values("day")
            .annotate(snapshots=Count("pk"), **{name: Sum(name) for name in TOTAL_FIGURES})
        )
        self.bulk_create(
            [DebtTotal(**row) for row in sums],
            update_conflicts=True,
            unique_fields=["day"],
            update_fields=["snapshots", *TOTAL_FIGURES],
        )
        self.filter(day__in=set(days) - {row["day"] for row in sums}).delete()

    def rebuild(self) -> None:
        """Every day's row again from the snapshots."""
        self.all().delete()
        self.refresh(days=DebtSnapshot.objects.values_list("day", flat=True).distinct())


class DebtTotal(models.Model):
    """The sums of one day's snapshots across every repository, written by the code that
    writes the snapshots (``DebtTotal.objects.refresh``). Days without a snapshot have no row.

    The overview's charts for someone who sees every repository read these: a row per day
    rather than one per repository and day.
    """

    day = models.DateField(primary_key=True)
    snapshots = models.IntegerField(default=0)
    active = models.BigIntegerField(default=0)
    expiring = models.BigIntegerField(default=0)
    expired = models.BigIntegerField(default=0)
    unacknowledged = models.BigIntegerField(default=0)
    skipped = models.BigIntegerField(default=0)
    xfail = models.BigIntegerField(default=0)
    new_skips = models.BigIntegerField(default=0)
    patches = models.BigIntegerField(default=0)
    blocked = models.BigIntegerField(default=0)

    objects = DebtTotalManager()

    class Meta:
        ordering = ["day"]

    def __str__(self) -> str:
        return f"debt of every repository on {self.day}"


@receiver(post_delete, sender=Repository, dispatch_uid="dashboards.debttotal.repository")
def _repository_deleted(sender, instance, **kwargs) -> None:
    # Its snapshots went with it (a cascade, in the same transaction): which days they were is
    # no longer known, and deleting a repository is rare, so every day is summed again.
    DebtTotal.objects.rebuild()
