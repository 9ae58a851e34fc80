"""Keeping the results table to what is still read: pruning the results of old runs."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from evidence.models import Patch, Run, TestResult

# Runs whose results are deleted per transaction: short transactions, bounded lock time.
PRUNE_BATCH = 200


@dataclass(frozen=True)
class PruneSummary:
    cutoff: datetime
    runs: int
    results: int
    kept_runs: int


def results_prune(*, older_than_days: int, now: datetime | None = None) -> PruneSummary:
    """Delete the per-test results of runs created more than ``older_than_days`` ago, except
    runs that a patch declared in that window names as its base or head.

    The runs themselves stay, with their counts, meta and the stored upload, so their pages
    still read and their results can be parsed again from the upload. Test names stay too:
    a concurrent upload may be about to refer to any of them.
    """
    if older_than_days < 1:
        raise ValueError("older_than_days must be at least 1")
    cutoff = (now or timezone.now()) - timedelta(days=older_than_days)
    recent_use = Patch.objects.filter(
        repository=OuterRef("repository"), created_at__gte=cutoff
    ).filter(Q(base_sha=OuterRef("sha")) | Q(head_sha=OuterRef("sha")))
    old_with_results = Run.objects.filter(created_at__lt=cutoff).filter(
        Exists(TestResult.objects.filter(run=OuterRef("pk")))
    )
    kept_runs = old_with_results.filter(Exists(recent_use)).count()
    run_ids = list(
        old_with_results.exclude(Exists(recent_use)).order_by("pk").values_list("pk", flat=True)
    )
    results = 0
    for start in range(0, len(run_ids), PRUNE_BATCH):
        with transaction.atomic():
            deleted, _ = TestResult.objects.filter(
                run_id__in=run_ids[start : start + PRUNE_BATCH]
            ).delete()
        results += deleted
    return PruneSummary(cutoff=cutoff, runs=len(run_ids), results=results, kept_runs=kept_runs)
