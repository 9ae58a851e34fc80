"""Runs stored straight through the ORM, as ingestion leaves them, for report tests that are
not about ingestion."""

from collections import Counter

from django.utils import timezone

from evidence.models import Run, RunOutcomes, TestResult
from evidence.parsing import ParsedRun
from evidence.results import results_store
from evidence.run_outcomes import outcomes_unpack
from tests.factories import RunFactory

BUCKETS = {label: value for value, label in TestResult.Bucket.choices}


def store_run(
    repository,
    sha: str,
    outcomes: dict[str, str],
    *,
    exit_code: int = 0,
    meta: dict | None = None,
    label: str = "",
    attempt: int = 1,
    status: str = Run.Status.READY,
) -> Run:
    """A run of ``sha`` whose results are ``{nodeid: bucket name}``: its packed outcomes, and
    the results of the tests its repository tracks."""
    parsed = status != Run.Status.RECEIVED
    run = RunFactory(
        repository=repository,
        sha=sha,
        label=label,
        attempt=attempt,
        status=status,
        exit_code=exit_code if status == Run.Status.READY else None,
        meta=meta or {},
        parsed_at=timezone.now() if parsed else None,
    )
    if status != Run.Status.READY:
        return run
    counts = Counter(outcomes.values())
    counted = {bucket: counts[bucket] for bucket in BUCKETS}
    Run.objects.filter(pk=run.pk).update(**counted)
    run.refresh_from_db()
    results_store(run, ParsedRun(dict(outcomes), {}, counted, run.exit_code or 0, run.meta))
    return run


def stored_outcomes(run: Run) -> dict[str, str]:
    """The outcomes stored for a run, as reports read them (its packed outcomes)."""
    return outcomes_unpack(bytes(RunOutcomes.objects.get(run=run).packed))[0]
