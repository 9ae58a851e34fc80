import pytest
from django.core.exceptions import ValidationError

from ledger import services
from ledger.models import Policy, PolicyChange
from ledger.services import policy_update
from tests.factories import RepositoryFactory


def test_policy_change_is_audited_with_who_before_and_after(repository, staff):
    policy = policy_update(
        repository=repository,
        user=staff,
        severities={"fixture-touched": "block"},
        max_freeze_days=7,
    )
    assert (policy.severities, policy.max_freeze_days) == ({"fixture-touched": "block"}, 7)
    change = PolicyChange.objects.get()
    assert change.repository == repository
    assert change.changed_by == staff
    assert change.before["max_freeze_days"] == 14
    assert change.before["severities"] == {}
    assert change.after["max_freeze_days"] == 7
    assert change.after["severities"] == {"fixture-touched": "block"}
    assert change.after["ledger_path"] == "freeze_ledger.toml"


def test_each_change_gets_its_own_audit_row(repository, staff):
    policy_update(repository=repository, user=staff, max_freeze_days=7)
    policy_update(repository=repository, user=None, ledger_path="ops/freezes.toml")
    before_second = PolicyChange.objects.order_by("pk").last()
    assert before_second.before["max_freeze_days"] == 7
    assert before_second.changed_by is None
    assert PolicyChange.objects.count() == 2


def test_saving_the_same_values_writes_no_audit_row(repository, staff):
    policy_update(repository=repository, user=staff, max_freeze_days=14)
    assert not PolicyChange.objects.exists()


def test_policy_is_unchanged_when_the_audit_row_cannot_be_written(repository, staff, monkeypatch):
    def broken_create(**kwargs):
        raise RuntimeError("audit store unavailable")

    monkeypatch.setattr(services.PolicyChange.objects, "create", broken_create)
    with pytest.raises(RuntimeError):
        policy_update(repository=repository, user=staff, max_freeze_days=3)
    assert Policy.objects.get(repository=repository).max_freeze_days == 14


@pytest.mark.parametrize(
    "changes",
    [
        {"severities": {"head-failed": "maybe"}},
        {"severities": {"Head Failed": "warn"}},
        {"severities": ["head-failed"]},
        {"max_freeze_days": 0},
        {"fixture_paths": "tests/fixtures/**"},
        {"fixture_paths": ["/etc/passwd"]},
        {"fixture_paths": [""]},
        {"ledger_path": ""},
        {"verdict": "pass"},
    ],
)
def test_invalid_changes_are_refused_and_nothing_is_stored(repository, staff, changes):
    with pytest.raises(ValidationError):
        policy_update(repository=repository, user=staff, **changes)
    policy = Policy.objects.get(repository=repository)
    assert policy.max_freeze_days == 14
    assert policy.severities == {}
    assert not PolicyChange.objects.exists()


def test_every_severity_word_is_accepted(repository, staff):
    severities = {"head-failed": "block", "environment-drift": "warn", "fixture-touched": "off"}
    policy = policy_update(repository=repository, user=staff, severities=severities)
    assert Policy.objects.get(pk=policy.pk).severities == severities


def test_a_repository_without_a_policy_row_gets_one(db, staff):
    repository = RepositoryFactory()
    assert not Policy.objects.filter(repository=repository).exists()
    policy_update(repository=repository, user=staff, max_freeze_days=10)
    assert Policy.objects.get(repository=repository).max_freeze_days == 10
    assert PolicyChange.objects.get().before["max_freeze_days"] == 14


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"severities": {"made-up": "warn"}}, "severities"),
        ({"fixture_paths": ["tests/*.py"]}, "fixture_paths"),
        ({"ledger_path": "ops/*.toml"}, "ledger_path"),
    ],
)
def test_settings_the_shared_rules_cannot_load_are_refused(repository, staff, changes, field):
    # Stored, they would make every report of the repository fail.
    with pytest.raises(ValidationError) as raised:
        policy_update(repository=repository, user=staff, **changes)
    assert set(raised.value.message_dict) == {field}
    assert not PolicyChange.objects.exists()
