"""A strict Content-Security-Policy on every page, and nothing a signed-in person saw cached."""

from django.urls import reverse

from config.headers import CONTENT_SECURITY_POLICY
from tests.dashboards.test_pages import login
from tests.dashboards.test_pages import world as world  # a fixture


def test_pages_carry_a_policy_without_unsafe_inline(client, world):
    login(client, world["lead"])
    response = client.get(reverse("dashboards:index"))
    policy = response["Content-Security-Policy"]
    assert policy == CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy


def test_signed_in_pages_are_private_and_not_stored(client, world):
    login(client, world["lead"])
    for name in ("dashboards:index",):
        response = client.get(reverse(name))
        assert response.status_code == 200
        assert response["Cache-Control"] == "private, no-store"
    page = client.get(reverse("dashboards:repository", args=["billing"]))
    assert page["Cache-Control"] == "private, no-store"


def test_api_answers_to_a_token_are_private(api_client, evidence_token):
    response = api_client.get("/api/v1/token", HTTP_AUTHORIZATION=f"Bearer {evidence_token}")
    assert response["Cache-Control"] == "private, no-store"


def test_the_sign_in_page_is_not_marked_private(client, db):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert response.get("Cache-Control") != "private, no-store"
    assert "Content-Security-Policy" in response


def test_no_page_has_a_style_attribute_or_inline_script(client, world):
    login(client, world["lead"])
    for url in (reverse("dashboards:index"), reverse("dashboards:repository", args=["billing"])):
        html = client.get(url).content.decode()
        assert " style=" not in html
        assert "<script>" not in html
