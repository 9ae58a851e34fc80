import datetime

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core import mail
from django.urls import reverse

from evidence import visibility
from evidence.models import Team
from evidence.teams import staff_addresses, team_create, team_lead_addresses
from ledger.models import Owner
from ledger.reminders import reminders_send
from tests.factories import FreezeFactory, RepositoryFactory, UserFactory

TODAY = datetime.date(2026, 11, 28)


@pytest.fixture
def billing(db):
    return RepositoryFactory(slug="billing")


@pytest.fixture
def search(db):
    return RepositoryFactory(slug="search")


@pytest.fixture
def payments_lead(billing):
    """A lead: member of the team owning billing, not staff."""
    user = UserFactory(username="pat", email="pat@example.com")
    team_create(name="Payments", slug="payments", members=[user], repositories=[billing])
    return user


@pytest.fixture
def search_lead(search):
    user = UserFactory(username="sam", email="sam@example.com")
    team_create(name="Search", slug="search", members=[user], repositories=[search])
    return user


# --- who sees which repositories ------------------------------------------------------------


def visible(user) -> list[str]:
    return list(visibility.repositories(user).values_list("slug", flat=True))


def test_staff_see_every_repository(billing, search, staff):
    assert visible(staff) == ["billing", "search"]


def test_a_lead_sees_the_repositories_of_their_teams_only(payments_lead, search):
    assert visible(payments_lead) == ["billing"]


def test_a_repository_of_two_of_the_users_teams_comes_once(payments_lead, billing, search):
    team_create(name="Platform", slug="platform", members=[payments_lead], repositories=[billing])
    Team.objects.get(slug="payments").repositories.add(search)
    assert visible(payments_lead) == ["billing", "search"]
    assert visibility.repositories(payments_lead).count() == 2


def test_a_user_without_a_team_sees_nothing(billing, outsider):
    assert visible(outsider) == []


def test_anonymous_and_deactivated_users_see_nothing(payments_lead):
    assert visible(AnonymousUser()) == []
    payments_lead.is_active = False
    payments_lead.save()
    assert visible(payments_lead) == []


def test_leaving_a_team_hides_its_repositories(payments_lead):
    Team.objects.get(slug="payments").members.remove(payments_lead)
    assert visible(payments_lead) == []


# --- lead addresses ---------------------------------------------------------------------------


def test_team_lead_addresses_are_active_members_with_an_address(billing, search, payments_lead):
    team = Team.objects.get(slug="payments")
    team.members.add(
        UserFactory(username="noaddress", email=""),
        UserFactory(username="gone", email="gone@example.com", is_active=False),
        UserFactory(username="pat2", email="PAT@example.com"),  # the same mailbox as pat
    )
    assert team_lead_addresses([billing.pk, search.pk]) == {billing.pk: ["PAT@example.com"]}


def test_staff_addresses_are_active_staff_with_an_address(db):
    UserFactory(username="boss", email="boss@example.com", is_staff=True)
    UserFactory(username="retired", email="old@example.com", is_staff=True, is_active=False)
    UserFactory(username="member", email="member@example.com")
    assert staff_addresses() == ["boss@example.com"]


# --- the digest goes to the repository's team, staff still get everything --------------------


@pytest.fixture
def due_freezes(billing, search):
    Owner.objects.create(handle="team-payments", email="payments@example.com", is_team=True)
    FreezeFactory(repository=billing, freeze_id="FRZ-B", expires=TODAY - datetime.timedelta(1))
    FreezeFactory(repository=search, freeze_id="FRZ-S", expires=TODAY + datetime.timedelta(2))


def digest_to(address: str) -> str:
    [message] = [m for m in mail.outbox if "Digest" in m.subject and m.to == [address]]
    return message.body


def test_a_team_member_gets_the_digest_of_their_teams_repositories(
    due_freezes, payments_lead, search_lead
):
    reminders_send(today=TODAY)
    assert "FRZ-B" in digest_to("pat@example.com")
    assert "FRZ-S" not in digest_to("pat@example.com")
    assert "FRZ-S" in digest_to("sam@example.com")
    assert "FRZ-B" not in digest_to("sam@example.com")


def test_staff_get_the_digest_of_every_repository(due_freezes, payments_lead):
    UserFactory(username="boss", email="boss@example.com", is_staff=True)
    reminders_send(today=TODAY)
    assert "FRZ-B" in digest_to("boss@example.com")
    assert "FRZ-S" in digest_to("boss@example.com")


def test_a_member_whose_repositories_have_nothing_due_gets_no_digest(billing, search_lead):
    Owner.objects.create(handle="team-payments", email="payments@example.com", is_team=True)
    FreezeFactory(repository=billing, expires=TODAY - datetime.timedelta(1))
    reminders_send(today=TODAY)
    assert not [m for m in mail.outbox if m.to == ["sam@example.com"]]


def test_a_staff_member_of_a_team_gets_one_full_digest(due_freezes, payments_lead):
    payments_lead.is_staff = True
    payments_lead.save()
    reminders_send(today=TODAY)
    body = digest_to("pat@example.com")
    assert "FRZ-B" in body
    assert "FRZ-S" in body


def test_owner_reminders_reply_to_the_repository_leads_and_staff(due_freezes, search_lead):
    UserFactory(username="boss", email="boss@example.com", is_staff=True)
    reminders_send(today=TODAY)
    [reminder] = [m for m in mail.outbox if "FRZ-S" in m.subject and "Digest" not in m.subject]
    assert reminder.reply_to == ["sam@example.com", "boss@example.com"]


# --- admin -------------------------------------------------------------------------------------


def test_staff_manage_teams_in_the_admin(client, staff, payments_lead):
    client.force_login(staff)
    page = client.get(reverse("admin:evidence_team_changelist"))
    assert page.status_code == 200
    assert "Payments" in page.content.decode()
    team = Team.objects.get(slug="payments")
    assert client.get(reverse("admin:evidence_team_change", args=[team.pk])).status_code == 200
