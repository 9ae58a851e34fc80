import datetime

import pytest

from dashboards.live import _schedule
from evidence.models import Report, Run, report_codes
from evidence.reports import (
    _send_report_task,
    enqueue_reports_for_run,
    report_compute,
    report_placeholder,
)
from evidence.tasks import compute_patch_report
from freezedebt_ci.changes import changes_from_objects
from freezedebt_ci.evidence import evidence_from_outcomes
from freezedebt_ci.ledger import parse_ledger
from freezedebt_ci.policy import Policy as RulesPolicy
from freezedebt_ci.report import compute_report
from ledger.models import Policy
from ledger.services import policy_update
from ledger.sync import ledger_sync
from tests.evidence.stored_runs import store_run
from tests.factories import PatchFactory, ReportFactory, RepositoryFactory
from tests.ledger.test_sync import freeze_toml

TODAY = datetime.date(2026, 11, 30)
BASE_SHA, HEAD_SHA = "b" * 40, "e" * 40

BASE = {
    "tests/test_pricing.py::test_half_even": "passed",
    "tests/test_pricing.py::test_rounding_boundary": "passed",
    "tests/test_tax.py::test_vat": "passed",
    "tests/test_net.py::test_fetch": "skipped",
}
HEAD = {
    "tests/test_pricing.py::test_half_even": "passed",
    "tests/test_pricing.py::test_half_up": "passed",
    "tests/test_pricing.py::test_rounding_boundary": "skipped",
    "tests/test_tax.py::test_vat": "passed",
    "tests/test_net.py::test_fetch": "skipped",
}
CHANGED = ["M\tsrc/pricing/rounding.py", "A\ttests/test_pricing.py"]

pytestmark = pytest.mark.usefixtures("frozen_today")


@pytest.fixture
def patch(repository):
    return PatchFactory(
        repository=repository,
        base_sha=BASE_SHA,
        head_sha=HEAD_SHA,
        changed=[c.as_dict() for c in changes_from_objects(CHANGED)],
    )


def codes(body, severity=None):
    return [p["code"] for p in body["problems"] if severity in (None, p["severity"])]


def test_report_is_pending_while_the_base_run_is_missing(repository, patch):
    store_run(repository, HEAD_SHA, HEAD)
    report = report_compute(patch_id=patch.pk)
    assert (report.status, report.verdict) == ("pending", "pending")
    assert report.body["status"] == report.body["verdict"] == "pending"
    assert "base-missing" in codes(report.body, "block")
    assert report.body["figures"]["base"] is None
    assert report.body["figures"]["head"]["passed"] == 3


def test_report_is_pending_while_the_head_run_is_missing(repository, patch):
    store_run(repository, BASE_SHA, BASE)
    report = report_compute(patch_id=patch.pk)
    assert (report.status, report.verdict) == ("pending", "pending")
    assert "base-missing" not in codes(report.body)


def test_report_is_ready_once_both_runs_are_stored(repository, patch):
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, HEAD)
    report = report_compute(patch_id=patch.pk)
    assert (report.status, report.verdict) == ("ready", "block")
    assert report.body["today"] == "2026-11-30"
    assert report.body["figures"]["earned"] == 1
    assert report.body["lost"] == ["tests/test_pricing.py::test_rounding_boundary"]
    assert report.body["new_skips"] == ["tests/test_pricing.py::test_rounding_boundary"]
    assert report.computed_at is not None
    stored = Report.objects.get(patch=patch)
    assert stored.body == report.body
    # The codes lists of patches show, stored beside the body they come from.
    assert stored.codes == sorted(set(codes(report.body))) != []


def test_report_codes_are_the_distinct_codes_of_its_problems():
    body = {"problems": [{"code": "lost-tests"}, {"code": "head-failed"}, {"code": "lost-tests"}]}
    assert report_codes(body) == ["head-failed", "lost-tests"]
    assert report_codes({"problems": [{"severity": "warn"}, "odd"]}) == [""]
    assert report_codes({"problems": "none"}) == report_codes({}) == report_codes(None) == []


@pytest.mark.django_db
def test_the_migration_fills_the_codes_of_stored_reports(repository):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("evidence.migrations.0009_report_codes")
    report = ReportFactory(
        patch=PatchFactory(repository=repository),
        status="ready",
        verdict="block",
        body={"problems": [{"code": "lost-tests"}, {"code": "base-missing"}]},
        codes=[],
    )
    untouched = ReportFactory(patch=PatchFactory(repository=repository), codes=[])
    migration.fill_codes(apps, None)
    report.refresh_from_db()
    untouched.refresh_from_db()
    assert (report.codes, untouched.codes) == (["base-missing", "lost-tests"], [])


def test_report_is_what_the_shared_rules_compute_from_the_same_input(repository, patch):
    ledger = freeze_toml(covers=('"src/pricing/**"',), expires="2026-12-04") + freeze_toml(
        "FRZ-001", test="tests/test_old.py::test_gone", expires="2026-11-01"
    )
    ledger_sync(repository=repository, sha="1" * 40, raw=ledger, path="freeze_ledger.toml")
    meta = {"python": "3.11.7"}
    store_run(repository, BASE_SHA, BASE, meta=meta)
    store_run(repository, HEAD_SHA, HEAD, exit_code=1, meta={"python": "3.12.1"})

    body = report_compute(patch_id=patch.pk).body

    assert body == compute_report(
        base=evidence_from_outcomes(BASE.items(), exit_status=0, meta=meta),
        head=evidence_from_outcomes(HEAD.items(), exit_status=1, meta={"python": "3.12.1"}),
        freezes=parse_ledger(ledger),
        changes=changes_from_objects(CHANGED),
        today=TODAY,
        policy=RulesPolicy(),
    )
    assert set(codes(body)) >= {"environment-drift", "expired-freeze", "head-failed"}


def test_recomputing_replaces_the_stored_report(repository, patch):
    store_run(repository, HEAD_SHA, HEAD)
    assert report_compute(patch_id=patch.pk).status == "pending"
    store_run(repository, BASE_SHA, BASE)
    report_compute(patch_id=patch.pk)
    assert Report.objects.get(patch=patch).status == "ready"
    assert Report.objects.count() == 1


def test_latest_attempt_of_a_commit_is_the_one_used(repository, patch):
    store_run(repository, BASE_SHA, {"tests/test_a.py::test_flaky": "failed"}, attempt=1)
    store_run(repository, BASE_SHA, BASE, attempt=2)
    store_run(repository, HEAD_SHA, HEAD, attempt=1)
    body = report_compute(patch_id=patch.pk).body
    assert body["figures"]["base"] == {"passed": 3, "failed": 0, "skipped": 1, "xfail": 0}


@pytest.mark.parametrize("status", [Run.Status.RECEIVED, Run.Status.REJECTED])
def test_latest_attempt_not_ready_leaves_the_report_pending(repository, patch, status):
    store_run(repository, BASE_SHA, BASE, attempt=1)
    store_run(repository, BASE_SHA, BASE, attempt=2, status=status)
    store_run(repository, HEAD_SHA, HEAD)
    report = report_compute(patch_id=patch.pk)
    assert (report.status, report.verdict) == ("pending", "pending")


def test_ready_run_without_an_exit_status_never_yields_a_verdict(repository, patch):
    store_run(repository, BASE_SHA, BASE)
    head = store_run(repository, HEAD_SHA, HEAD)
    Run.objects.filter(pk=head.pk).update(exit_code=None)
    assert report_compute(patch_id=patch.pk).status == "pending"


def test_runs_of_the_patchs_label_are_used_and_others_ignored(repository):
    patch = PatchFactory(repository=repository, base_sha=BASE_SHA, head_sha=HEAD_SHA, label="py311")
    store_run(repository, BASE_SHA, BASE, label="py312")
    store_run(repository, HEAD_SHA, HEAD, label="py311")
    assert report_compute(patch_id=patch.pk).status == "pending"
    store_run(repository, BASE_SHA, BASE, label="py311")
    assert report_compute(patch_id=patch.pk).status == "ready"


def test_runs_of_another_repository_are_never_used(repository, patch):
    other = RepositoryFactory()
    store_run(other, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, HEAD)
    assert report_compute(patch_id=patch.pk).status == "pending"


def test_freezes_come_from_the_latest_synced_ledger(repository, patch):
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, HEAD)
    ledger_sync(repository=repository, sha="1" * 40, raw=freeze_toml(), path="freeze_ledger.toml")
    body = report_compute(patch_id=patch.pk).body
    assert [hit["freeze"] for hit in body["frozen_surface_hits"]] == ["FRZ-014"]
    assert "unaccounted-skip" not in codes(body)  # the new skip is the frozen test

    other = freeze_toml("FRZ-020", test="tests/test_net.py::test_fetch", covers=('"src/net/**"',))
    ledger_sync(repository=repository, sha="2" * 40, raw=other, path="freeze_ledger.toml")
    body = report_compute(patch_id=patch.pk).body
    assert body["frozen_surface_hits"] == []
    assert "unaccounted-skip" in codes(body, "block")


def test_without_a_synced_ledger_there_are_no_freezes(repository, patch):
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, HEAD)
    body = report_compute(patch_id=patch.pk).body
    assert body["frozen_surface_hits"] == body["expired_freezes"] == []


def test_policy_severities_turn_blocks_into_warnings_or_off(repository, patch):
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, HEAD)
    policy_update(
        repository=repository,
        user=None,
        severities={"lost-tests": "warn", "unaccounted-skip": "off"},
    )
    report = report_compute(patch_id=patch.pk)
    assert codes(report.body, "warn") == ["lost-tests"]
    assert "unaccounted-skip" not in codes(report.body)
    assert report.verdict == "pass"


def test_policy_codes_unknown_to_the_rules_are_ignored(repository, patch):
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, HEAD)
    # Written past policy_update (which refuses it), e.g. by an older release.
    Policy.objects.filter(repository=repository).update(
        severities={"lost-tests": "off", "made-up": "warn"}
    )
    assert "lost-tests" not in codes(report_compute(patch_id=patch.pk).body)


def test_ledger_changed_in_the_patch_is_a_blocking_problem(repository):
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, BASE)
    flagged = PatchFactory(
        repository=repository, base_sha=BASE_SHA, head_sha=HEAD_SHA, ledger_changed=True
    )
    report = report_compute(patch_id=flagged.pk)
    assert codes(report.body, "block") == ["ledger-in-patch"]


def test_changing_the_policys_ledger_path_is_ledger_in_patch(repository):
    policy_update(repository=repository, user=None, ledger_path="ops/freezes.toml")
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, BASE)
    touching = PatchFactory(
        repository=repository,
        base_sha=BASE_SHA,
        head_sha=HEAD_SHA,
        changed=[{"status": "M", "path": "ops/freezes.toml"}],
    )
    body = report_compute(patch_id=touching.pk).body
    assert codes(body) == ["ledger-in-patch"]
    assert body["problems"][0]["items"] == ["ops/freezes.toml"]


def test_unchanged_evidence_and_no_problems_pass(repository):
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, BASE)
    clean = PatchFactory(repository=repository, base_sha=BASE_SHA, head_sha=HEAD_SHA)
    report = report_compute(patch_id=clean.pk)
    assert (report.status, report.verdict) == ("ready", "pass")


def test_placeholder_has_every_key_of_a_computed_report(repository, patch):
    placeholder = report_placeholder(patch)
    store_run(repository, BASE_SHA, BASE)
    store_run(repository, HEAD_SHA, HEAD)
    computed = report_compute(patch_id=patch.pk).body
    assert placeholder["status"] == placeholder["verdict"] == "pending"
    assert set(placeholder) == set(computed)
    assert set(placeholder["figures"]) == set(computed["figures"])


def test_report_of_a_deleted_patch_is_skipped_quietly(db):
    assert report_compute(patch_id=987654) is None
    compute_patch_report.delay(987654)  # the task too returns without error


def test_arriving_run_recomputes_the_reports_it_completes(
    repository, patch, django_capture_on_commit_callbacks
):
    store_run(repository, HEAD_SHA, HEAD)
    report_compute(patch_id=patch.pk)
    other_label = PatchFactory(
        repository=repository, base_sha=BASE_SHA, head_sha=HEAD_SHA, label="py312"
    )
    elsewhere = PatchFactory(base_sha=BASE_SHA, head_sha=HEAD_SHA)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        base = store_run(repository, BASE_SHA, BASE)
        enqueue_reports_for_run(base)

    # One report computation enqueued; the stored report then asks for today's snapshot.
    assert [c.func for c in callbacks] == [_send_report_task, _schedule]
    assert Report.objects.get(patch=patch).status == "ready"
    assert not Report.objects.filter(patch__in=[other_label, elsewhere]).exists()


def test_nothing_is_enqueued_before_commit(repository, patch, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        enqueue_reports_for_run(store_run(repository, BASE_SHA, BASE))
    assert len(callbacks) == 1
    assert not Report.objects.exists()


def test_results_are_read_in_a_bounded_number_of_queries(
    repository, patch, django_assert_max_num_queries
):
    many = {f"tests/test_bulk.py::test_{n}": "passed" for n in range(3000)}
    store_run(repository, BASE_SHA, many)
    store_run(repository, HEAD_SHA, many)
    with django_assert_max_num_queries(16):
        report = report_compute(patch_id=patch.pk)
    assert report.body["figures"]["borrowed"] == 3000
