"""The daily debt snapshots the charts read, and their totals."""

from django.db import models
from django.db.models import Q

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


class DebtTotal(models.Model):
    """The sums of one day's snapshots across every repository, kept by the database itself:
    triggers on DebtSnapshot (migration 0002, for PostgreSQL and SQLite) add and take away each
    snapshot written, changed or deleted, whatever writes it (the snapshot job, a cascade from
    a deleted repository, the admin). Days without a snapshot have no row.

    The overview's charts for someone who sees every repository read these: a row per day
    rather than one per repository and day (PostgreSQL summed a year of 50 repositories in
    5 ms, and reads a year of these in well under one).
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

    class Meta:
        ordering = ["day"]

    def __str__(self) -> str:
        return f"debt of every repository on {self.day}"
