import pytest
from django.contrib import admin
from django.urls import reverse

from evidence.models import UploadToken
from evidence.services import token_create
from tests.factories import FreezeEventFactory, ReportFactory, TestResultFactory


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


def test_every_model_of_the_apps_is_registered():
    from django.apps import apps

    # The admin cannot show a model whose primary key spans several columns (Django refuses to
    # register it); a run's results are read from the run's upload and the read API.
    unregistrable = {"TestResult"}
    for label in ("evidence", "ledger"):
        for model in apps.get_app_config(label).get_models():
            if model.__name__ in unregistrable:
                assert model._meta.pk.__class__.__name__ == "CompositePrimaryKey"
                continue
            assert admin.site.is_registered(model), model.__name__


def test_every_changelist_and_change_page_opens_for_staff(admin_client, repository):
    FreezeEventFactory(freeze__repository=repository)
    TestResultFactory(run__repository=repository)
    ReportFactory(patch__repository=repository)
    token_create(repository=repository, scope="evidence")
    for model in admin.site._registry:
        if model._meta.app_label not in {"evidence", "ledger"}:
            continue
        changelist = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert admin_client.get(changelist).status_code == 200, changelist
        instance = model.objects.first()
        if instance is not None:
            change = reverse(
                f"admin:{model._meta.app_label}_{model._meta.model_name}_change",
                args=[instance.pk],
            )
            assert admin_client.get(change).status_code == 200, change


def test_token_pages_show_the_prefix_never_the_digest(admin_client, repository):
    token, plain = token_create(repository=repository, scope="evidence")
    pages = [
        reverse("admin:evidence_uploadtoken_changelist"),
        reverse("admin:evidence_uploadtoken_change", args=[token.pk]),
        reverse("admin:evidence_repository_change", args=[repository.pk]),
    ]
    for url in pages:
        page = admin_client.get(url).content.decode()
        assert token.display_prefix in page, url
        assert token.digest not in page, url
        assert plain not in page, url


def test_tokens_cannot_be_added_through_the_admin(admin_client):
    assert admin_client.get(reverse("admin:evidence_uploadtoken_add")).status_code == 403


def test_admin_action_revokes_tokens(admin_client, repository):
    token, _ = token_create(repository=repository, scope="evidence")
    response = admin_client.post(
        reverse("admin:evidence_uploadtoken_changelist"),
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert UploadToken.objects.live().count() == 0


def test_what_only_the_service_writes_is_read_only_in_the_admin(admin_client, repository):
    # Freezes, ledger versions and events come from the ledger file; reports from the rules.
    event = FreezeEventFactory(freeze__repository=repository)
    report = ReportFactory(patch__repository=repository)
    for instance in (event.freeze, event.ledger_version, event, report):
        meta = instance._meta
        change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[instance.pk])
        assert admin_client.get(change).status_code == 200  # still shown
        assert admin_client.post(change, {}).status_code == 403
        add = reverse(f"admin:{meta.app_label}_{meta.model_name}_add")
        assert admin_client.get(add).status_code == 403
    patch_page = admin_client.get(reverse("admin:evidence_patch_change", args=[report.patch.pk]))
    assert 'name="report-0-verdict"' not in patch_page.content.decode()
