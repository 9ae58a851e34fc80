"""Runs stored straight through the ORM, as ingestion leaves them, for report tests that are
not about ingestion."""

from django.utils import timezone

from evidence.models import Run, TestName, TestResult
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
    """A run of ``sha`` whose results are ``{nodeid: bucket name}``."""
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
    results = []
    for nodeid, bucket in outcomes.items():
        test, _ = TestName.objects.get_or_create(
            repository=repository,
            nodeid_sha256=TestName.digest(nodeid),
            defaults={"nodeid": nodeid},
        )
        results.append(TestResult(run=run, test=test, bucket=BUCKETS[bucket]))
    TestResult.objects.bulk_create(results)
    return run
