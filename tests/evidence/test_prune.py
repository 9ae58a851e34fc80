import datetime
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command
from django.utils import timezone

from evidence.models import Run, TestName, TestResult
from evidence.retention import results_prune
from tests.factories import (
    PatchFactory,
    RepositoryFactory,
    RunFactory,
    TestNameFactory,
    TestResultFactory,
)

NOW = timezone.make_aware(datetime.datetime(2026, 11, 30, 12, 0))


def _days_ago(days: int) -> datetime.datetime:
    return NOW - datetime.timedelta(days=days)


def _run_with_results(*, days_old: int, results: int = 3, **fields) -> Run:
    created_at = _days_ago(days_old)
    run = RunFactory(
        created_at=created_at,
        status=Run.Status.READY,
        parsed_at=created_at,
        passed=results,
        **fields,
    )
    for _ in range(results):
        TestResultFactory(run=run)
    return run


def test_results_of_old_runs_are_deleted_and_the_runs_kept(db):
    old = _run_with_results(days_old=40)
    recent = _run_with_results(days_old=5)

    summary = results_prune(older_than_days=30, now=NOW)

    assert (summary.runs, summary.results, summary.kept_runs) == (1, 3, 0)
    assert not TestResult.objects.filter(run=old).exists()
    assert TestResult.objects.filter(run=recent).count() == 3
    old.refresh_from_db()
    assert old.passed == 3
    assert bytes(old.raw)
    # Test names stay: any upload may be about to refer to them.
    assert TestName.objects.count() == 6


@pytest.mark.parametrize("side", ["base_sha", "head_sha"])
def test_old_runs_that_recent_patches_use_keep_their_results(db, side):
    repository = RepositoryFactory()
    used = _run_with_results(days_old=40, repository=repository)
    PatchFactory(repository=repository, created_at=_days_ago(2), **{side: used.sha})

    summary = results_prune(older_than_days=30, now=NOW)

    assert (summary.runs, summary.kept_runs) == (0, 1)
    assert TestResult.objects.filter(run=used).count() == 3


def test_an_old_patch_or_another_repositorys_patch_keeps_nothing(db):
    repository = RepositoryFactory()
    run = _run_with_results(days_old=40, repository=repository)
    PatchFactory(repository=repository, created_at=_days_ago(35), head_sha=run.sha)
    PatchFactory(created_at=_days_ago(1), head_sha=run.sha)

    assert results_prune(older_than_days=30, now=NOW).runs == 1
    assert not TestResult.objects.exists()


def test_pruning_twice_removes_nothing_more(db):
    _run_with_results(days_old=40)
    results_prune(older_than_days=30, now=NOW)
    summary = results_prune(older_than_days=30, now=NOW)
    assert (summary.runs, summary.results) == (0, 0)


@time_machine.travel(NOW, tick=False)
def test_prune_command_says_what_it_removed(db):
    repository = RepositoryFactory()
    _run_with_results(days_old=400, results=2)
    kept = _run_with_results(days_old=400, repository=repository)
    PatchFactory(repository=repository, base_sha=kept.sha)
    TestNameFactory()

    out = StringIO()
    call_command("prune_results", "--older-than", "30", stdout=out)

    output = out.getvalue()
    assert "Removed 2 result(s) of 1 run(s)" in output
    assert "Kept the results of 1 older run(s)" in output
    assert "stored uploads are kept" in output
    assert TestResult.objects.count() == 3


@pytest.mark.parametrize("days", ["0", "-3", "soon"])
def test_prune_command_refuses_a_bad_number_of_days(db, days):
    with pytest.raises(CommandError, match="whole number of days"):
        call_command("prune_results", "--older-than", days, stdout=StringIO())
