"""Sign-in throttling: per account and per address, on the site's and the admin's form."""

import pytest
from django.test import override_settings

from tests.factories import UserFactory

PASSWORD = "right-horse-battery"
PAGES = ["/accounts/login/", "/admin/login/"]


@pytest.fixture
def person(db):
    user = UserFactory(username="finley", is_staff=True)
    user.set_password(PASSWORD)
    user.save()
    return user


def _sign_in(client, page, username, password, address="192.0.2.10"):
    return client.post(page, {"username": username, "password": password}, REMOTE_ADDR=address)


def _signed_in(client) -> bool:
    return "_auth_user_id" in client.session


@override_settings(FREEZEDEBT_LOGIN_FAILURES=5)
@pytest.mark.parametrize("page", PAGES)
def test_after_the_failures_allowed_even_the_right_password_is_refused(client, person, page):
    for _ in range(5):
        assert _sign_in(client, page, "finley", "wrong").status_code == 200
    response = _sign_in(client, page, "finley", PASSWORD)
    assert response.status_code == 200
    assert "Too many failed sign-ins" in response.content.decode()
    assert not _signed_in(client)
    # Another account is not held back by this one's failures.
    other = UserFactory(username="robin", is_staff=True)
    other.set_password(PASSWORD)
    other.save()
    assert _sign_in(client, page, "robin", PASSWORD).status_code == 302


@override_settings(FREEZEDEBT_LOGIN_FAILURES=100, FREEZEDEBT_LOGIN_FAILURES_PER_ADDRESS=3)
def test_failures_are_counted_per_address_across_accounts(client, person):
    for name in ("a", "b", "c"):
        _sign_in(client, "/accounts/login/", name, "wrong")
    response = _sign_in(client, "/accounts/login/", "finley", PASSWORD)
    assert "Too many failed sign-ins" in response.content.decode()
    assert not _signed_in(client)
    # The same account from another address signs in.
    assert _sign_in(client, "/accounts/login/", "finley", PASSWORD, "192.0.2.99").status_code == 302


def test_the_right_password_after_a_few_failures_signs_in(client, person):
    for _ in range(2):
        _sign_in(client, "/accounts/login/", "finley", "wrong")
    assert _sign_in(client, "/accounts/login/", "finley", PASSWORD).status_code == 302
    assert _signed_in(client)
