"""Daily debt snapshots: the figures of one repository on one day, computed from what was stored
by the end of that day (ledger versions, default-branch runs, reports), so a past day can be
taken again later (backfill) and gives the same figures it gave then.

Taking a snapshot is idempotent: the row of (repository, day) is inserted or overwritten with
the same figures, in one statement, so running the command or the beat task twice, or both at
once, changes nothing. The same transaction sums the days it wrote into ``DebtTotal``.
"""

from __future__ import annotations

import bisect
import datetime
import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from dashboards.models import SNAPSHOT_FIGURES, DebtSnapshot, DebtTotal
from evidence.models import Report, Repository, Run
from freezedebt_ci.ledger import expiry_status
from ledger.models import Freeze, FreezeAction, FreezeEvent, LedgerVersion

FIGURES = SNAPSHOT_FIGURES


def day_start(day: datetime.date) -> datetime.datetime:
    """Midnight at the start of ``day`` in the server's time zone."""
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))


def _date(value: Any) -> datetime.date | None:
    if not value:
        return None
    try:
        return datetime.date.fromisoformat(value)
    except (TypeError, ValueError):
        return None


def _window(rows: QuerySet, since: datetime.datetime, until: datetime.datetime) -> list[tuple]:
    """Rows created in [since, until), oldest first, after the last one created before since
    (the one still in force when the range starts): two indexed queries, not all history."""
    before = rows.filter(created_at__lt=since).order_by("-created_at", "-pk")[:1]
    within = rows.filter(created_at__gte=since, created_at__lt=until).order_by("created_at", "pk")
    return [*before, *within]


class _History:
    """What one repository stored up to the end of the last day asked for, read in a fixed
    number of queries, then answered per day in memory."""

    def __init__(self, repository: Repository, first: datetime.date, last: datetime.date):
        until = day_start(last + datetime.timedelta(days=1))
        since = day_start(first)
        versions = _window(
            LedgerVersion.objects.filter(repository=repository).values_list(
                "created_at", "freezes"
            ),
            since,
            until,
        )
        self.version_times: list[datetime.datetime] = []
        self.version_freezes: list[list[dict[str, Any]]] = []
        for created_at, freezes in versions:
            self.version_times.append(created_at)
            self.version_freezes.append(freezes if isinstance(freezes, list) else [])

        self.freeze_pks = dict(
            Freeze.objects.filter(repository=repository).values_list("freeze_id", "pk")
        )
        # Every event raised the freeze's version by one, so the version a freeze had at a time
        # is the number of its events synced by then: those before the range, counted, plus
        # those within it, by time.
        events = FreezeEvent.objects.filter(repository=repository).order_by()
        self.events_before: dict[int, int] = dict(
            events.filter(ledger_version__created_at__lt=since)
            .values("freeze_id")
            .annotate(count=Count("pk"))
            .values_list("freeze_id", "count")
        )
        self.event_times: dict[int, list[datetime.datetime]] = defaultdict(list)
        within = (
            events.filter(
                ledger_version__created_at__gte=since, ledger_version__created_at__lt=until
            )
            .order_by("ledger_version__created_at")
            .values_list("freeze_id", "ledger_version__created_at")
        )
        for freeze_pk, created_at in within:
            self.event_times[freeze_pk].append(created_at)
        self.actions: dict[tuple[int, int], datetime.datetime] = {}
        actions = (
            FreezeAction.objects.filter(freeze__repository=repository, created_at__lt=until)
            .order_by("-created_at")
            .values_list("freeze_id", "freeze_version", "created_at")
        )
        for freeze_pk, version, created_at in actions:
            self.actions[(freeze_pk, version)] = created_at  # the earliest wins

        runs = _window(
            Run.objects.filter(
                repository=repository,
                branch=repository.default_branch,
                status=Run.Status.READY,
            ).values_list("created_at", "skipped", "xfail"),
            since,
            until,
        )
        self.run_times: list[datetime.datetime] = []
        self.run_counts: list[tuple[int, int]] = []
        for created_at, skipped, xfail in runs:
            self.run_times.append(created_at)
            self.run_counts.append((skipped, xfail))

        self.reports: dict[datetime.date, list[tuple[str, Any, Any]]] = defaultdict(list)
        reports = Report.objects.filter(
            patch__repository=repository,
            status=Report.Status.READY,
            computed_at__gte=since,
            computed_at__lt=until,
        ).values_list("computed_at", "verdict", "body__figures", "body__new_skips")
        for computed_at, verdict, figures, new_skips in reports:
            self.reports[timezone.localdate(computed_at)].append((verdict, figures, new_skips))

    def figures(self, day: datetime.date) -> dict[str, Any]:
        end = day_start(day + datetime.timedelta(days=1))
        figures: dict[str, Any] = dict.fromkeys(FIGURES, 0)
        figures["median_net_delta"] = None

        index = bisect.bisect_left(self.version_times, end) - 1
        for freeze in self.version_freezes[index] if index >= 0 else []:
            status = expiry_status(_date(freeze.get("expires")), day)
            if status == "invalid":
                continue  # an invalid-freeze: neither active nor expired
            if status != "expired":
                # "active" counts every freeze in force, the expiring ones included.
                figures["active"] += 1
                figures["expiring"] += status == "expiring"
                opened = _date(freeze.get("opened"))
                if opened is not None and opened < day:
                    figures["freeze_days"] += (day - opened).days
            else:
                figures["expired"] += 1
            if not self._acknowledged(freeze.get("id"), end):
                figures["unacknowledged"] += 1

        index = bisect.bisect_left(self.run_times, end) - 1
        if index >= 0:
            figures["skipped"], figures["xfail"] = self.run_counts[index]

        deltas = []
        for verdict, report_figures, new_skips in self.reports.get(day, []):
            figures["patches"] += 1
            if verdict == Report.Verdict.BLOCK:
                figures["blocked"] += 1
            else:
                figures["passed"] += 1
            if isinstance(report_figures, dict):
                figures["earned"] += int(report_figures.get("earned") or 0)
                figures["borrowed"] += int(report_figures.get("borrowed") or 0)
                if report_figures.get("net_executed_delta") is not None:
                    deltas.append(report_figures["net_executed_delta"])
            if isinstance(new_skips, list):
                figures["new_skips"] += len(new_skips)
        if deltas:
            figures["median_net_delta"] = float(statistics.median(deltas))
        return figures

    def _acknowledged(self, freeze_id: str | None, end: datetime.datetime) -> bool:
        """Whether the freeze's owner answered (any action) on the version it had then."""
        pk = self.freeze_pks.get(freeze_id) if freeze_id else None
        if pk is None:
            return False
        version = self.events_before.get(pk, 0) + bisect.bisect_left(
            self.event_times.get(pk, []), end
        )
        answered = self.actions.get((pk, version))
        return answered is not None and answered < end


def snapshots_compute(
    *, repository: Repository, days: Iterable[datetime.date]
) -> dict[datetime.date, dict[str, Any]]:
    """The figures of ``repository`` on each day, without storing them."""
    days = sorted(set(days))
    if not days:
        return {}
    history = _History(repository, days[0], days[-1])
    return {day: history.figures(day) for day in days}


def _store(repository: Repository, computed: dict[datetime.date, dict[str, Any]]) -> None:
    rows = [
        DebtSnapshot(repository=repository, day=day, **figures) for day, figures in computed.items()
    ]
    # One upsert per batch: concurrent takers of the same day both end with the same row.
    DebtSnapshot.objects.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["repository", "day"],
        update_fields=list(FIGURES),
    )
    # The same transaction sums the days into DebtTotal, which the overview reads.
    DebtTotal.objects.refresh(days=computed)


@transaction.atomic
def snapshot_take(*, repository: Repository, day: datetime.date) -> DebtSnapshot:
    """Compute and store the debt of ``repository`` on ``day``; idempotent."""
    _store(repository, snapshots_compute(repository=repository, days=[day]))
    return DebtSnapshot.objects.get(repository=repository, day=day)


def snapshots_backfill(
    *, day: datetime.date, days: int, repositories: Iterable[Repository] | None = None
) -> int:
    """Take the snapshots of the ``days`` days ending with ``day`` (inclusive) for every
    repository (or those given); returns the number of rows written.

    Days before a repository was registered are left out: a chart shows no data there rather
    than a debt of zero.
    """
    wanted = [day - datetime.timedelta(days=offset) for offset in range(max(days, 1))]
    written = 0
    for repository in repositories if repositories is not None else Repository.objects.all():
        registered = timezone.localdate(repository.created_at)
        with transaction.atomic():
            computed = snapshots_compute(
                repository=repository, days=[d for d in wanted if d >= registered]
            )
            _store(repository, computed)
        written += len(computed)
    return written
