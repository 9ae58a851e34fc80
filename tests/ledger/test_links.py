import datetime
import re

import pytest
import time_machine
from django.core import signing
from django.test import Client
from django.urls import reverse

from ledger.links import (
    SALT,
    LinkExpired,
    LinkMalformed,
    LinkTampered,
    link_read,
    link_token,
    link_url,
)
from ledger.models import FreezeAction
from tests.factories import FreezeFactory

OWNER = "payments@example.com"
SENT = datetime.datetime(2026, 11, 27, 9, 0, tzinfo=datetime.UTC)


@pytest.fixture
def freeze(db):
    return FreezeFactory(
        freeze_id="FRZ-042", reason="Gateway sandbox resets connections", compensating_check="x"
    )


@pytest.fixture
def client() -> Client:
    # Real browsers and mail scanners do not skip CSRF checks; neither does this client.
    return Client(enforce_csrf_checks=True)


def token_for(freeze, action: str = "acknowledge") -> str:
    return link_token(freeze=freeze, owner_email=OWNER, action=action)


def url_for(freeze, action: str = "acknowledge") -> str:
    return reverse("ledger:freeze-action", kwargs={"token": token_for(freeze, action)})


def csrf_of(response) -> str:
    return re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', response.content)[1].decode()


def confirm(client: Client, url: str, **data: str):
    page = client.get(url)
    assert page.status_code == 200, page.content
    return client.post(url, {"csrfmiddlewaretoken": csrf_of(page), **data})


def freeze_state(freeze) -> tuple:
    freeze.refresh_from_db()
    return (freeze.version, freeze.current, freeze.expires, freeze.reason, freeze.updated_at)


# --- the token ----------------------------------------------------------------------------


def test_a_token_names_freeze_owner_version_and_action(freeze):
    link = link_read(token_for(freeze, "fixed"))
    assert (link.freeze_pk, link.owner_email, link.freeze_version, link.action) == (
        freeze.pk,
        OWNER,
        1,
        "fixed",
    )
    assert link.nonce


def test_every_link_has_its_own_nonce(freeze):
    assert link_read(token_for(freeze)).nonce != link_read(token_for(freeze)).nonce


def test_links_are_absolute_on_the_site_url(freeze, settings):
    settings.SITE_URL = "https://freezedebt.example.org"
    assert link_url("abc").startswith("https://freezedebt.example.org/freezes/action/abc/")


def test_a_link_signed_for_another_purpose_is_tampered(freeze):
    other = signing.dumps({"f": freeze.pk, "o": OWNER, "v": 1, "a": "fixed", "n": "x"})
    with pytest.raises(LinkTampered):
        link_read(other)


@pytest.mark.parametrize("token", ["", "nonsense", "a:b", "a:b:c", "a:b:" + "!" * 43])
def test_shapes_that_were_never_a_token_are_malformed(token):
    with pytest.raises(LinkMalformed):
        link_read(token)


def test_a_cut_off_token_is_malformed_not_tampered(freeze):
    with pytest.raises(LinkMalformed):
        link_read(token_for(freeze)[:-5])


def test_a_correctly_signed_token_without_our_fields_is_malformed(db):
    with pytest.raises(LinkMalformed):
        link_read(signing.dumps({"f": 1}, salt=SALT))


def test_the_maximum_age_is_a_setting(freeze, settings):
    settings.FREEZEDEBT_LINK_MAX_AGE_DAYS = 2
    with time_machine.travel(SENT, tick=False):
        token = token_for(freeze)
    with time_machine.travel(SENT + datetime.timedelta(days=1), tick=False):
        link_read(token)
    with (
        time_machine.travel(SENT + datetime.timedelta(days=3), tick=False),
        pytest.raises(LinkExpired),
    ):
        link_read(token)


# --- GET confirms, POST acts --------------------------------------------------------------


@pytest.mark.parametrize("action", ["acknowledge", "renewal", "fixed"])
def test_get_shows_the_freeze_and_a_confirm_button_and_changes_nothing(client, freeze, action):
    before = freeze_state(freeze)
    for _ in range(3):  # a mail scanner, a link preview, the owner
        response = client.get(url_for(freeze, action))
        assert response.status_code == 200
    html = response.content.decode()
    assert "FRZ-042" in html
    assert "Gateway sandbox resets connections" in html
    assert '<form method="post"' in html
    assert 'type="submit"' in html
    assert "<script" not in html
    assert response["Cache-Control"].startswith("max-age=0")
    assert not FreezeAction.objects.exists()
    assert freeze_state(freeze) == before


def test_head_changes_nothing(client, freeze):
    assert client.head(url_for(freeze)).status_code == 200
    assert not FreezeAction.objects.exists()


def test_post_without_csrf_token_is_refused(client, freeze):
    response = client.post(url_for(freeze))
    assert response.status_code == 403
    assert not FreezeAction.objects.exists()


def test_post_with_csrf_records_the_acknowledgement(client, freeze):
    with time_machine.travel(SENT, tick=False):
        url = url_for(freeze)
        response = confirm(client, url)

    assert response.status_code == 200
    assert "payments@example.com acknowledged (I am on it)" in response.content.decode()
    action = FreezeAction.objects.get()
    assert (action.freeze, action.freeze_version, action.owner_email, action.action) == (
        freeze,
        1,
        OWNER,
        "acknowledge",
    )
    assert action.created_at == SENT
    assert action.nonce == link_read(url.split("/")[-2]).nonce


def test_report_fixed_is_recorded(client, freeze):
    confirm(client, url_for(freeze, "fixed"))
    assert FreezeAction.objects.get().action == "fixed"


def test_a_renewal_request_needs_a_new_reason_and_does_not_change_the_freeze(client, freeze):
    before = freeze_state(freeze)
    url = url_for(freeze, "renewal")

    same = confirm(client, url, new_reason="  gateway sandbox RESETS connections ")
    assert same.status_code == 400
    assert b"This is the current reason" in same.content
    empty = confirm(client, url, new_reason="   ")
    assert empty.status_code == 400
    assert not FreezeAction.objects.exists()

    done = confirm(client, url, new_reason="Gateway fix ships 2026-12-10; need 10 more days")

    assert done.status_code == 200
    assert b"The freeze is unchanged until the ledger" in done.content
    action = FreezeAction.objects.get()
    assert action.action == "renewal"
    assert action.new_reason == "Gateway fix ships 2026-12-10; need 10 more days"
    assert freeze_state(freeze) == before


# --- links that no longer work ------------------------------------------------------------


def assert_error_page(response, status: int, heading: str, advice: str) -> None:
    html = response.content.decode()
    assert response.status_code == status
    assert f"<h1>{heading}</h1>" in html
    assert advice in html
    assert "Freeze Debt" in html  # the site's own layout
    assert not FreezeAction.objects.exists()


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_malformed_link_says_so(client, freeze, method):
    url = reverse("ledger:freeze-action", kwargs={"token": token_for(freeze)[:-5]})
    response = getattr(client, method)(url)
    if method == "post":
        # Refused before the link is read: no CSRF token.
        assert response.status_code == 403
        return
    assert_error_page(response, 400, "This link is incomplete", "copy the whole address")


def test_a_tampered_link_says_so(client, freeze):
    payload, timestamp, signature = token_for(freeze).split(":")
    forged = signing.dumps(
        {"f": freeze.pk, "o": "intruder@example.com", "v": 1, "a": "fixed", "n": "x"},
        salt=SALT,
        key="not-our-secret",
    )
    for token in [forged, f"{payload}:{timestamp}:{signature[::-1]}"]:
        response = client.get(reverse("ledger:freeze-action", kwargs={"token": token}))
        assert_error_page(response, 400, "This link was altered", "exactly as it appears")


def test_an_expired_link_says_so_on_get_and_post(client, freeze):
    with time_machine.travel(SENT, tick=False):
        url = url_for(freeze)
        page = client.get(url)
    with time_machine.travel(SENT + datetime.timedelta(days=15), tick=False):
        assert_error_page(client.get(url), 410, "This link has expired", "latest reminder")
        posted = client.post(url, {"csrfmiddlewaretoken": csrf_of(page)})
        assert_error_page(posted, 410, "This link has expired", "latest reminder")


def test_a_link_still_works_on_its_last_day(client, freeze):
    with time_machine.travel(SENT, tick=False):
        url = url_for(freeze)
    with time_machine.travel(SENT + datetime.timedelta(days=13, hours=23), tick=False):
        assert confirm(client, url).status_code == 200


@pytest.mark.parametrize("change", ["renewed", "retired", "deleted"])
def test_a_stale_link_says_the_freeze_changed(client, freeze, change):
    url = url_for(freeze)
    page = client.get(url)
    if change == "renewed":
        freeze.version += 1
        freeze.save()
    elif change == "retired":
        freeze.current = False
        freeze.version += 1
        freeze.save()
    else:
        freeze.delete()

    expected = ("This freeze has changed since the e-mail", "next reminder carries fresh links")
    assert_error_page(client.get(url), 410, *expected)
    # The page was opened before the change and confirmed after it: refused too.
    assert_error_page(client.post(url, {"csrfmiddlewaretoken": csrf_of(page)}), 410, *expected)


def test_a_used_link_says_so_and_records_nothing_more(client, freeze):
    url = url_for(freeze)
    page = client.get(url)
    token = csrf_of(page)
    assert client.post(url, {"csrfmiddlewaretoken": token}).status_code == 200

    again_get = client.get(url)
    again_post = client.post(url, {"csrfmiddlewaretoken": token})

    for response in [again_get, again_post]:
        assert response.status_code == 409
        assert "<h1>This link was already used</h1>" in response.content.decode()
        assert "use another link of the e-mail" in response.content.decode()
    assert FreezeAction.objects.count() == 1


def test_another_link_of_the_same_email_still_works_after_one_was_used(client, freeze):
    confirm(client, url_for(freeze, "acknowledge"))
    confirm(client, url_for(freeze, "fixed"))
    assert sorted(FreezeAction.objects.values_list("action", flat=True)) == [
        "acknowledge",
        "fixed",
    ]


def test_the_confirm_page_lets_browsers_send_the_origin_the_csrf_check_needs(client, freeze):
    # With "no-referrer", Chromium posts "Origin: null" and the CSRF check refuses the confirm;
    # the test client sends no Origin header, so only this guards it.
    html = client.get(url_for(freeze)).content.decode()
    assert '<meta name="referrer" content="same-origin">' in html
