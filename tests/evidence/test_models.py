import datetime

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from evidence import visibility
from evidence.models import Patch, Report, Repository, Run, TestName, TestResult, UploadToken
from ledger.models import Freeze, LedgerVersion
from tests.factories import (
    FreezeFactory,
    PatchFactory,
    ReportFactory,
    RepositoryFactory,
    RunFactory,
    TestResultFactory,
    UserFactory,
)

# --- Repository ------------------------------------------------------------------------------


def test_repository_slug_is_unique(db):
    Repository.objects.create(slug="shop", name="Shop")
    with pytest.raises(IntegrityError), transaction.atomic():
        Repository.objects.create(slug="shop", name="Other shop")


@pytest.mark.parametrize("slug", ["Shop", "my shop", "-shop", "shop\n", ""])
def test_repository_slug_format_is_enforced_by_the_database(db, slug):
    with pytest.raises(IntegrityError), transaction.atomic():
        Repository.objects.create(slug=slug, name="x")


def test_repository_default_branch_is_main(db):
    assert Repository.objects.create(slug="shop", name="Shop").default_branch == "main"


def test_staff_see_every_repository(db):
    repositories = RepositoryFactory.create_batch(2)
    staff = UserFactory(is_staff=True)
    assert set(visibility.repositories(staff)) == set(repositories)


def test_other_users_see_no_repository_until_teams_exist(db):
    RepositoryFactory()
    assert not visibility.repositories(UserFactory()).exists()


def test_anonymous_and_inactive_users_see_nothing(db):
    from django.contrib.auth.models import AnonymousUser

    RepositoryFactory()
    assert not visibility.repositories(AnonymousUser()).exists()
    assert not visibility.repositories(UserFactory(is_staff=True, is_active=False)).exists()


def test_deleting_a_repository_removes_everything_it_owns(db):
    freeze = FreezeFactory()
    repository = freeze.repository
    run = RunFactory(repository=repository)
    TestResultFactory(run=run)
    ReportFactory(patch=PatchFactory(repository=repository))
    repository.delete()
    for model in (Run, TestName, TestResult, Patch, Report, Freeze, LedgerVersion):
        assert not model.objects.exists(), model.__name__


def test_deleting_a_repository_never_loads_the_stored_uploads(db, django_assert_max_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    repository = RepositoryFactory()
    for number in range(3):
        TestResultFactory(run=RunFactory(repository=repository, sha=f"{number:040x}"))
    with CaptureQueriesContext(connection) as queries:
        repository.delete()
    assert not Run.objects.exists()
    selects = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert selects, "the cascade reads the runs it deletes"
    assert not [sql for sql in selects if '"raw"' in sql], selects


# --- UploadToken -----------------------------------------------------------------------------


def test_token_prefix_is_unique(repository):
    UploadToken.objects.create(
        repository=repository, scope="evidence", prefix="abcd1234", digest="a"
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        UploadToken.objects.create(
            repository=repository, scope="ledger", prefix="abcd1234", digest="b"
        )


def test_token_scope_must_be_known(repository):
    with pytest.raises(IntegrityError), transaction.atomic():
        UploadToken.objects.create(repository=repository, scope="admin", prefix="x", digest="d")


# --- Run -------------------------------------------------------------------------------------


def test_one_run_per_repository_sha_label_and_attempt(db):
    run = RunFactory(label="py311")
    with pytest.raises(IntegrityError), transaction.atomic():
        RunFactory(repository=run.repository, sha=run.sha, label="py311", attempt=1)
    # Another label or attempt of the same commit is a different run.
    RunFactory(repository=run.repository, sha=run.sha, label="py312")
    RunFactory(repository=run.repository, sha=run.sha, label="py311", attempt=2)
    assert Run.objects.count() == 3


def test_run_attempt_counts_from_one(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        RunFactory(attempt=0)


def test_run_status_must_be_known(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        RunFactory(status="parsed")


@pytest.mark.parametrize("status", [Run.Status.READY, Run.Status.REJECTED])
def test_a_processed_run_records_when(db, status):
    with pytest.raises(IntegrityError), transaction.atomic():
        RunFactory(status=status, parsed_at=None)
    assert RunFactory(status=status, parsed_at=timezone.now()).status == status


def test_latest_attempt_is_the_highest_for_that_sha_and_label(db):
    first = RunFactory(label="py311")
    third = RunFactory(repository=first.repository, sha=first.sha, label="py311", attempt=3)
    RunFactory(repository=first.repository, sha=first.sha, label="py311", attempt=2)
    RunFactory(repository=first.repository, sha=first.sha, label="py312", attempt=9)
    found = Run.objects.latest_attempt(repository=first.repository, sha=first.sha, label="py311")
    assert found == third
    assert Run.objects.latest_attempt(repository=first.repository, sha="0" * 40) is None


def test_awaiting_parse_lists_only_old_received_runs(db):
    now = timezone.now()
    old = RunFactory(created_at=now - datetime.timedelta(minutes=10))
    RunFactory(created_at=now)
    RunFactory(
        created_at=now - datetime.timedelta(minutes=10), status=Run.Status.READY, parsed_at=now
    )
    waiting = Run.objects.awaiting_parse(received_before=now - datetime.timedelta(minutes=5))
    assert list(waiting) == [old]


# --- TestName / TestResult -------------------------------------------------------------------


def test_node_id_is_interned_once_per_repository(repository):
    TestName.objects.create(repository=repository, nodeid="tests/test_a.py::test_x")
    with pytest.raises(IntegrityError), transaction.atomic():
        TestName.objects.create(repository=repository, nodeid="tests/test_a.py::test_x")
    other = RepositoryFactory()
    TestName.objects.create(repository=other, nodeid="tests/test_a.py::test_x")


def test_bulk_interning_with_build_fills_the_digest(repository):
    names = [TestName.build(repository=repository, nodeid=f"t.py::test_{i}") for i in range(3)]
    TestName.objects.bulk_create(names)
    stored = TestName.objects.get(nodeid="t.py::test_1")
    assert stored.nodeid_sha256 == TestName.digest("t.py::test_1")


def test_node_ids_up_to_the_length_limit_are_stored_and_unique(repository, settings):
    # Far beyond what a B-tree entry may hold on PostgreSQL; uniqueness goes through the digest.
    long_nodeid = "tests/test_param.py::test_case[" + "x7Qz" * 1100 + "]"
    long_nodeid = long_nodeid[: settings.FREEZEDEBT_MAX_NODEID_LENGTH]
    TestName.objects.create(repository=repository, nodeid=long_nodeid)
    assert TestName.objects.get(nodeid_sha256=TestName.digest(long_nodeid)).nodeid == long_nodeid
    with pytest.raises(IntegrityError), transaction.atomic():
        TestName.objects.create(repository=repository, nodeid=long_nodeid)


def test_one_result_per_test_and_run(db):
    result = TestResultFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        TestResultFactory(run=result.run, test=result.test, bucket=TestResult.Bucket.FAILED)


def test_result_bucket_must_be_known(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        TestResultFactory(bucket=9)


# --- Patch / Report --------------------------------------------------------------------------


def test_one_patch_per_repository_ref_base_and_head(db):
    patch = PatchFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        PatchFactory(
            repository=patch.repository,
            ref=patch.ref,
            base_sha=patch.base_sha,
            head_sha=patch.head_sha,
        )
    PatchFactory(repository=patch.repository, ref=patch.ref, base_sha=patch.base_sha)


def test_patches_touching_a_run_are_found_by_base_or_head(db):
    run = RunFactory()
    as_base = PatchFactory(repository=run.repository, base_sha=run.sha)
    as_head = PatchFactory(repository=run.repository, head_sha=run.sha)
    PatchFactory(repository=run.repository)
    PatchFactory(base_sha=run.sha)  # same sha, another repository
    PatchFactory(repository=run.repository, base_sha=run.sha, label="py312")  # another job
    assert set(Patch.objects.touching_run(run)) == {as_base, as_head}


def test_report_starts_pending_with_a_pending_verdict(db):
    report = ReportFactory()
    assert (report.status, report.verdict) == ("pending", "pending")


@pytest.mark.parametrize(
    ("status", "verdict"),
    [("pending", "pass"), ("pending", "block"), ("ready", "pending"), ("done", "pass")],
)
def test_report_status_pending_iff_verdict_pending(db, status, verdict):
    with pytest.raises(IntegrityError), transaction.atomic():
        ReportFactory(status=status, verdict=verdict)


@pytest.mark.parametrize("verdict", ["pass", "block"])
def test_ready_report_carries_a_verdict(db, verdict):
    assert ReportFactory(status="ready", verdict=verdict).verdict == verdict


def test_one_report_per_patch(db):
    report = ReportFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Report.objects.create(patch=report.patch)


def test_names_keep_two_indexes_and_compare_digests_bytewise(db):
    from django.db import connection

    with connection.cursor() as cursor:
        indexed = [
            columns
            for _, details in connection.introspection.get_constraints(
                cursor, TestName._meta.db_table
            ).items()
            if details["index"] or details["unique"]
            for columns in [tuple(details["columns"])]
        ]
    # The unique (repository, digest) serves lookups by repository: no index of its own.
    assert ("repository_id",) not in indexed
    assert ("repository_id", "nodeid_sha256") in indexed
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT collation_name FROM information_schema.columns "
                "WHERE table_name = %s AND column_name = 'nodeid_sha256'",
                [TestName._meta.db_table],
            )
            assert cursor.fetchone() == ("C",)
