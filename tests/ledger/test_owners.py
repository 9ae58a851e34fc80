import pytest
from django.test import Client
from django.urls import reverse

from evidence.teams import team_create
from ledger.models import Owner
from ledger.owners import owner_resolve, owners_resolve
from tests.factories import FreezeFactory, RepositoryFactory, UserFactory


@pytest.fixture
def lead_client(db) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(UserFactory(username="lead", email="lead@example.com", is_staff=True))
    return client


# --- resolving handles --------------------------------------------------------------------


def test_a_handle_resolves_to_its_directory_entry(db):
    Owner.objects.create(handle="team-payments", name="Payments", email="pay@example.com")
    owner = owner_resolve("team-payments")
    assert (owner.email, owner.name) == ("pay@example.com", "Payments")


def test_an_address_is_its_own_owner_and_anything_else_is_nobody(db):
    resolved = owners_resolve(["bob@example.com", "team-gone", "", "not an@address"])
    assert list(resolved) == ["bob@example.com"]
    assert resolved["bob@example.com"].email == "bob@example.com"


def test_handles_are_unique_in_the_directory(db):
    Owner.objects.create(handle="team-a", email="a@example.com")
    client = Client()
    client.force_login(UserFactory(username="lead", is_staff=True))
    response = client.post(
        reverse("ledger:owner-create"), {"handle": "team-a", "email": "other@example.com"}
    )
    assert response.status_code == 200
    assert b"already exists" in response.content
    assert Owner.objects.count() == 1


# --- the directory page -------------------------------------------------------------------


def test_only_leads_manage_the_directory(db, outsider):
    assert Client().get(reverse("ledger:owner-list")).status_code == 302  # to the login page
    client = Client()
    client.force_login(outsider)
    assert client.get(reverse("ledger:owner-list")).status_code == 403
    response = client.post(reverse("ledger:owner-create"), {"handle": "x", "email": "x@e.com"})
    assert response.status_code == 403
    assert not Owner.objects.exists()


def test_the_page_lists_owners_and_the_handles_that_name_nobody(lead_client):
    Owner.objects.create(handle="team-payments", email="pay@example.com", is_team=True)
    FreezeFactory(owner="team-payments")
    FreezeFactory(owner="team-gone")
    FreezeFactory(owner="team-gone")
    FreezeFactory(owner="carol@example.com")
    FreezeFactory(owner="team-retired", current=False)

    response = lead_client.get(reverse("ledger:owner-list"))

    html = response.content.decode()
    assert response.status_code == 200
    assert "pay@example.com" in html
    assert "<td><code>team-gone</code></td>\n            <td>2</td>" in html
    assert "/owners/new/?handle=team-gone" in html
    assert "carol@example.com" not in html
    assert "team-retired" not in html


def test_a_lead_adds_edits_and_removes_an_owner(lead_client):
    created = lead_client.post(
        reverse("ledger:owner-create"),
        {"handle": " team-gone ", "name": "Gone", "email": "gone@example.com", "is_team": "on"},
    )
    assert created.status_code == 302
    owner = Owner.objects.get()
    assert (owner.handle, owner.is_team) == ("team-gone", True)

    edited = lead_client.post(
        reverse("ledger:owner-update", args=[owner.pk]),
        {"handle": "team-gone", "name": "Gone", "email": "back@example.com"},
    )
    assert edited.status_code == 302
    owner.refresh_from_db()
    assert (owner.email, owner.is_team) == ("back@example.com", False)

    assert lead_client.get(reverse("ledger:owner-delete", args=[owner.pk])).status_code == 405
    assert lead_client.post(reverse("ledger:owner-delete", args=[owner.pk])).status_code == 302
    assert not Owner.objects.exists()


def test_the_add_form_starts_from_the_unowned_handle(lead_client):
    response = lead_client.get(reverse("ledger:owner-create") + "?handle=team-gone")
    assert b'value="team-gone"' in response.content


def test_a_team_member_is_a_lead_and_manages_the_directory(db):
    member = UserFactory(username="tess")
    team_create(name="Platform", slug="platform", members=[member])
    client = Client()
    client.force_login(member)
    assert client.get(reverse("ledger:owner-list")).status_code == 200


# --- whose entries a lead manages ---------------------------------------------------------


@pytest.fixture
def two_teams(db):
    """A lead of "platform" (repository web); "billing" (repository payments) is another
    team's, with an entry for its owner and a handle that names nobody yet."""
    web, payments = RepositoryFactory(slug="web"), RepositoryFactory(slug="payments")
    lead = UserFactory(username="pat")
    team_create(name="Platform", slug="platform", members=[lead], repositories=[web])
    team_create(name="Billing", slug="billing", repositories=[payments])
    FreezeFactory(repository=web, freeze_id="FRZ-web", owner="team-web")
    FreezeFactory(repository=payments, freeze_id="FRZ-pay", owner="team-billing")
    FreezeFactory(repository=payments, freeze_id="FRZ-pay-2", owner="team-billing-new")
    billing = Owner.objects.create(handle="team-billing", email="billing@example.com")
    client = Client()
    client.force_login(lead)
    return client, billing


def test_a_lead_cannot_redirect_another_teams_reminders(two_teams):
    client, billing = two_teams
    update = reverse("ledger:owner-update", args=[billing.pk])
    assert client.get(update).status_code == 404
    response = client.post(update, {"handle": "team-billing", "email": "me@example.com"})
    assert response.status_code == 404
    assert client.post(reverse("ledger:owner-delete", args=[billing.pk])).status_code == 404
    billing.refresh_from_db()
    assert billing.email == "billing@example.com"
    # Nor claim a handle of theirs that names nobody yet, nor rename their own to one.
    response = client.post(
        reverse("ledger:owner-create"), {"handle": "team-billing-new", "email": "me@example.com"}
    )
    assert response.status_code == 200
    assert b"repositories you do not lead" in response.content
    assert not Owner.objects.filter(handle="team-billing-new").exists()


def test_a_lead_sees_and_manages_only_their_repositories_handles(two_teams):
    client, _ = two_teams
    page = client.get(reverse("ledger:owner-list")).content.decode()
    assert "team-billing" not in page  # neither the entry nor the unowned handle
    assert "team-web" in page  # their own unowned handle
    for handle in ("team-web", "team-not-in-any-ledger"):
        response = client.post(
            reverse("ledger:owner-create"), {"handle": handle, "email": f"{handle}@example.com"}
        )
        assert response.status_code == 302, response.content
    mine = Owner.objects.get(handle="team-web")
    response = client.post(
        reverse("ledger:owner-update", args=[mine.pk]),
        {"handle": "team-billing-new", "email": "x@example.com"},
    )
    assert response.status_code == 200
    assert Owner.objects.get(pk=mine.pk).handle == "team-web"
    assert client.post(reverse("ledger:owner-delete", args=[mine.pk])).status_code == 302


def test_staff_manage_every_entry(two_teams, staff):
    _, billing = two_teams
    client = Client()
    client.force_login(staff)
    response = client.post(
        reverse("ledger:owner-update", args=[billing.pk]),
        {"handle": "team-billing", "email": "finance@example.com"},
    )
    assert response.status_code == 302
    billing.refresh_from_db()
    assert billing.email == "finance@example.com"


def test_the_directory_forms_need_their_csrf_token(two_teams):
    _, billing = two_teams
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory(username="root", is_staff=True))
    create = client.post(reverse("ledger:owner-create"), {"handle": "x", "email": "x@e.com"})
    update = client.post(
        reverse("ledger:owner-update", args=[billing.pk]),
        {"handle": "team-billing", "email": "x@e.com"},
    )
    delete = client.post(reverse("ledger:owner-delete", args=[billing.pk]))
    assert (create.status_code, update.status_code, delete.status_code) == (403, 403, 403)
    billing.refresh_from_db()
    assert (billing.email, Owner.objects.count()) == ("billing@example.com", 1)
