import pytest
from django.urls import reverse

from ledger.models import Policy, PolicyChange


def test_policy_edited_in_the_admin_is_audited(client, staff, repository):
    client.force_login(staff)
    policy = Policy.objects.get(repository=repository)
    response = client.post(
        reverse("admin:ledger_policy_change", args=[policy.pk]),
        {
            "severities": '{"environment-drift": "block"}',
            "max_freeze_days": "10",
            "fixture_paths": '["tests/fixtures/**"]',
            "ledger_path": "freeze_ledger.toml",
        },
    )
    assert response.status_code == 302
    policy.refresh_from_db()
    assert policy.max_freeze_days == 10
    change = PolicyChange.objects.get()
    assert change.changed_by == staff
    assert change.after["severities"] == {"environment-drift": "block"}


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("severities", '{"no-such-code": "block"}', "no-such-code"),
        ("fixture_paths", '["src/*.py"]', "src/*.py"),
    ],
)
def test_what_the_rules_cannot_load_is_a_form_error_in_the_admin(
    client, staff, repository, field, value, fragment
):
    client.force_login(staff)
    policy = Policy.objects.get(repository=repository)
    form = {
        "severities": "{}",
        "max_freeze_days": "14",
        "fixture_paths": '["tests/fixtures/**"]',
        "ledger_path": "freeze_ledger.toml",
        field: value,
    }
    response = client.post(reverse("admin:ledger_policy_change", args=[policy.pk]), form)
    assert response.status_code == 200  # the form again, with the rules' reason
    assert fragment in response.content.decode()
    assert response.context["adminform"].form.errors[field]
    assert not PolicyChange.objects.exists()


def test_policy_audit_rows_are_read_only_in_the_admin(client, staff, repository):
    client.force_login(staff)
    assert client.get(reverse("admin:ledger_policychange_add")).status_code == 403
