"""The database down: pages and API answer 503 with Retry-After, and the admins get no mail
for it; other server errors are mailed once, not once per request."""

from contextlib import contextmanager

import pytest
from django.core import mail
from django.db import OperationalError
from django.test import Client
from django.urls import reverse

from config import errormail, health
from tests.factories import UserFactory


@pytest.fixture
def admins(settings):
    settings.ADMINS = [("Admin", "admin@example.com")]


@contextmanager
def database_down():
    """Every query fails inside, as with PostgreSQL stopped."""

    def refuse(*args, **kwargs):
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("django.db.backends.utils.CursorWrapper.execute", refuse)
        yield


@pytest.fixture
def browser(db):
    # As a browser: an error page, not the exception re-raised into the test.
    client = Client(raise_request_exception=False)
    client.force_login(UserFactory(username="lead"))
    return client


def test_a_page_answers_503_with_retry_after_while_the_database_is_down(browser, admins):
    with database_down():
        response = browser.get(reverse("dashboards:index"))
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "unavailable" in response.content.decode()
    assert mail.outbox == []


def test_the_api_answers_503_while_the_database_is_down(browser, admins):
    with database_down():
        response = browser.get("/api/v1/repositories")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"
    assert response["Retry-After"] == "5"
    assert mail.outbox == []


def test_health_probes_of_a_database_outage_mail_nobody(client, db, monkeypatch, admins):
    class DownConnection:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", DownConnection())
    for _ in range(5):
        assert client.get("/healthz").status_code == 503
    assert mail.outbox == []


@pytest.mark.urls("tests.urls")
def test_a_repeated_server_error_is_mailed_once(db, admins, monkeypatch):
    monkeypatch.setattr(errormail, "_local_until", {})
    client = Client(raise_request_exception=False)
    for _ in range(5):
        assert client.get("/api/v1/test/boom").status_code == 500
    assert len(mail.outbox) == 1
    assert "/api/v1/test/boom" in mail.outbox[0].subject
