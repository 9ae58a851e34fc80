import datetime
import re

import pytest
from django.core import mail
from django.test import Client

from ledger.models import FreezeAction, Owner
from ledger.reminders import reminders_send
from tests.factories import FreezeFactory, UserFactory

LINK = re.compile(r"http://testserver/freezes/action/[^\s\"<>]+/")


@pytest.fixture
def lead(db):
    return UserFactory(username="lead", email="lead@example.com", is_staff=True)


@pytest.fixture
def freeze(db):
    Owner.objects.create(
        handle="team-payments", name="Payments", email="payments@example.com", is_team=True
    )
    return FreezeFactory(
        freeze_id="FRZ-042",
        nodeid="tests/test_net.py::test_fetch_retries",
        covers=["src/net/**", "src/retry.py"],
        owner="team-payments",
        expires=datetime.date(2026, 11, 30),
        reason="Gateway's sandbox resets <TLS> connections",
        compensating_check="nightly contract test against the gateway",
    )


@pytest.fixture
def reminder(freeze, lead) -> mail.EmailMultiAlternatives:
    reminders_send(today=datetime.date(2026, 11, 27))
    [message] = [m for m in mail.outbox if m.to == ["payments@example.com"]]
    return message


def html_of(message: mail.EmailMultiAlternatives) -> str:
    [(html, mimetype)] = message.alternatives
    assert mimetype == "text/html"
    return html


def test_the_reminder_is_a_real_email_with_sender_and_reply_to_the_leads(
    reminder, freeze, settings
):
    assert reminder.from_email == settings.DEFAULT_FROM_EMAIL
    assert reminder.reply_to == ["lead@example.com"]
    slug = freeze.repository.slug
    assert reminder.subject == f"[Freeze Debt] {slug}: freeze FRZ-042 expires in 3 days"
    message = reminder.message()
    assert message.get_content_type() == "multipart/alternative"
    assert message["Reply-To"] == "lead@example.com"


def test_the_text_part_carries_the_freeze_and_one_absolute_link_per_action(reminder):
    text = reminder.body
    for expected in [
        "Hello Payments,",
        "expires in 3 days (2026-11-30)",
        "tests/test_net.py::test_fetch_retries",
        # Plain text is not HTML-escaped.
        "Gateway's sandbox resets <TLS> connections",
        "src/net/**, src/retry.py",
        "nightly contract test against the gateway",
        "work for 14 days",
    ]:
        assert expected in text
    links = LINK.findall(text)
    assert len(links) == 3
    assert "I am on it" in text
    assert "Request a renewal" in text
    assert "Report it fixed" in text


def test_the_html_part_carries_the_same_content_escaped_and_the_same_links(reminder):
    html = html_of(reminder)
    assert "Gateway&#x27;s sandbox resets &lt;TLS&gt; connections" in html
    assert "<code>src/net/**</code>, <code>src/retry.py</code>" in html
    assert "nightly contract test against the gateway" in html
    hrefs = re.findall(r'href="(http://testserver/freezes/action/[^"]+)"', html)
    assert hrefs == LINK.findall(reminder.body)


def _csrf(response) -> str:
    return re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', response.content)[1].decode()


def test_following_the_acknowledge_link_from_the_email_records_it_on_confirm(reminder, freeze):
    acknowledge = LINK.findall(reminder.body)[0]
    client = Client(enforce_csrf_checks=True)

    page = client.get(acknowledge)
    assert page.status_code == 200
    assert b"Acknowledge freeze FRZ-042" in page.content
    assert b"tests/test_net.py::test_fetch_retries" in page.content
    assert not FreezeAction.objects.exists()

    done = client.post(acknowledge, {"csrfmiddlewaretoken": _csrf(page)})

    assert done.status_code == 200
    assert b"Recorded" in done.content
    action = FreezeAction.objects.get()
    assert (action.freeze, action.freeze_version, action.action, action.owner_email) == (
        freeze,
        1,
        "acknowledge",
        "payments@example.com",
    )


def test_the_next_digest_shows_the_answer_and_the_renewal_request(reminder, freeze):
    renewal = LINK.findall(reminder.body)[1]
    client = Client(enforce_csrf_checks=True)
    page = client.get(renewal)
    client.post(
        renewal,
        {"csrfmiddlewaretoken": _csrf(page), "new_reason": "Gateway fix ships on 2026-12-10"},
    )
    mail.outbox.clear()

    reminders_send(today=datetime.date(2026, 11, 28))

    [digest] = mail.outbox
    assert digest.to == ["lead@example.com"]
    assert "0 unacknowledged" in digest.subject
    assert "requested a renewal by payments@example.com" in digest.body
    assert "Proposed reason: Gateway fix ships on 2026-12-10" in digest.body
    assert "Gateway fix ships on 2026-12-10" in html_of(digest)
    freeze.refresh_from_db()
    assert freeze.expires == datetime.date(2026, 11, 30)


def test_the_reminder_and_the_digest_link_to_the_freeze_page_on_the_site_url(
    freeze, lead, settings
):
    settings.SITE_URL = "https://freezedebt.example.org"
    reminders_send(today=datetime.date(2026, 11, 27))
    page = f"https://freezedebt.example.org/r/{freeze.repository.slug}/freezes/FRZ-042/"
    [reminder] = [m for m in mail.outbox if m.to == ["payments@example.com"]]
    assert f"Freeze page:        {page}" in reminder.body
    assert f'<a href="{page}">' in html_of(reminder)
    assert "localhost" not in reminder.body + html_of(reminder)
    [digest] = [m for m in mail.outbox if m.to == ["lead@example.com"]]
    assert f"  {page}" in digest.body
    assert f'<a href="{page}">' in html_of(digest)
