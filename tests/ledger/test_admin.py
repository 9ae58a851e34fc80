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


def test_policy_audit_rows_are_read_only_in_the_admin(client, staff, repository):
    client.force_login(staff)
    assert client.get(reverse("admin:ledger_policychange_add")).status_code == 403
