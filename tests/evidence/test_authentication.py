import pytest
from django.test import override_settings

from evidence import visibility
from evidence.authentication import TokenPrincipal
from evidence.models import UploadToken
from evidence.services import token_create, token_revoke
from tests.factories import RepositoryFactory

TOKEN_URL = "/api/v1/token"


def _bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def _error_code(response) -> str:
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]["code"]


def test_token_endpoint_names_the_repository_and_scope(api_client, repository, evidence_token):
    response = api_client.get(TOKEN_URL, **_bearer(evidence_token))
    assert response.status_code == 200
    assert response.json() == {
        "repository": "acme-shop",
        "scope": "evidence",
        "prefix": evidence_token[: len("fdk_") + 8],
        "name": "ci",
    }


def test_ledger_token_is_recognised_with_its_scope(api_client, ledger_token):
    response = api_client.get(TOKEN_URL, **_bearer(ledger_token))
    assert response.status_code == 200
    assert response.json()["scope"] == "ledger"


def test_two_live_tokens_of_one_repository_both_work(api_client, repository):
    _, first = token_create(repository=repository, scope="evidence", name="old")
    _, second = token_create(repository=repository, scope="evidence", name="new")
    assert api_client.get(TOKEN_URL, **_bearer(first)).json()["name"] == "old"
    assert api_client.get(TOKEN_URL, **_bearer(second)).json()["name"] == "new"


def test_revoking_one_token_leaves_the_other_working(api_client, repository):
    old, first = token_create(repository=repository, scope="evidence")
    _, second = token_create(repository=repository, scope="evidence")
    token_revoke(prefix=old.prefix)
    assert api_client.get(TOKEN_URL, **_bearer(first)).status_code == 401
    assert api_client.get(TOKEN_URL, **_bearer(second)).status_code == 200


def test_revoked_token_is_a_401_in_the_error_shape(api_client, repository):
    token, plain = token_create(repository=repository, scope="evidence")
    token_revoke(prefix=token.prefix)
    response = api_client.get(TOKEN_URL, **_bearer(plain))
    assert response.status_code == 401
    assert _error_code(response) == "authentication_failed"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_unknown_token_is_a_401(api_client, db):
    response = api_client.get(TOKEN_URL, **_bearer("fdk_zzzzzzzz_" + "a" * 43))
    assert response.status_code == 401
    assert _error_code(response) == "authentication_failed"


def test_wrong_secret_is_a_401(api_client, evidence_token):
    forged = evidence_token[:-1] + ("a" if evidence_token[-1] != "a" else "b")
    assert api_client.get(TOKEN_URL, **_bearer(forged)).status_code == 401


def test_missing_credentials_are_a_401_not_authenticated(api_client, db):
    response = api_client.get(TOKEN_URL)
    assert response.status_code == 401
    assert _error_code(response) == "not_authenticated"


@pytest.mark.parametrize("header", ["Bearer", "Bearer a b", "Token fdk_abc"])
def test_malformed_or_foreign_authorization_is_a_401(api_client, db, header):
    response = api_client.get(TOKEN_URL, HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert _error_code(response) in {"authentication_failed", "not_authenticated"}


def test_logged_in_user_cannot_use_an_upload_token_endpoint(api_client, staff):
    api_client.force_login(staff)
    response = api_client.get(TOKEN_URL)
    assert response.status_code == 401


@pytest.mark.urls("tests.urls")
def test_token_of_the_wrong_scope_is_a_403(api_client, evidence_token):
    response = api_client.put("/api/v1/test/ledger-only", **_bearer(evidence_token))
    assert response.status_code == 403
    assert _error_code(response) == "permission_denied"
    assert "'evidence' scope" in response.json()["error"]["message"]


@pytest.mark.urls("tests.urls")
def test_token_of_the_right_scope_is_let_through(api_client, ledger_token):
    response = api_client.put("/api/v1/test/ledger-only", **_bearer(ledger_token))
    assert response.status_code == 200
    assert response.json() == {"repository": "acme-shop"}


def test_use_is_recorded_on_the_token(api_client, repository, evidence_token):
    token = UploadToken.objects.get()
    assert token.last_used_at is None
    api_client.get(TOKEN_URL, **_bearer(evidence_token))
    token.refresh_from_db()
    assert token.last_used_at is not None


@override_settings(FREEZEDEBT_UPLOADS_PER_MINUTE=2)
def test_too_many_requests_from_one_token_are_a_429_with_retry_after(
    api_client, repository, evidence_token
):
    for _ in range(2):
        assert api_client.get(TOKEN_URL, **_bearer(evidence_token)).status_code == 200
    response = api_client.get(TOKEN_URL, **_bearer(evidence_token))
    assert response.status_code == 429
    assert _error_code(response) == "throttled"
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= 60
    assert response.json()["error"]["details"]["retry_after"] == retry_after


@override_settings(FREEZEDEBT_UPLOADS_PER_MINUTE=1)
def test_throttle_counts_each_token_separately(api_client, repository):
    _, first = token_create(repository=repository, scope="evidence")
    _, second = token_create(repository=repository, scope="evidence")
    assert api_client.get(TOKEN_URL, **_bearer(first)).status_code == 200
    assert api_client.get(TOKEN_URL, **_bearer(first)).status_code == 429
    assert api_client.get(TOKEN_URL, **_bearer(second)).status_code == 200


def test_token_principal_sees_its_own_repository_through_the_api_only(repository):
    RepositoryFactory()
    token, _ = token_create(repository=repository, scope="evidence")
    principal = TokenPrincipal.from_token(token)
    assert principal.repository == repository
    assert principal.is_authenticated
    assert not principal.is_staff
    assert list(visibility.repositories(principal, tokens=True)) == [repository]
    assert not visibility.repositories(principal).exists()
    assert not visibility.sees_every_repository(principal)
    assert str(principal) == f"token fdk_{token.prefix}"


@pytest.mark.parametrize(
    ("token", "says"),
    [
        ("fdk_abcd1234", "an upload token reads fdk_<8 letters or digits>_<secret>"),
        ("fdk_abcd1234_short", "an upload token reads fdk_<8 letters or digits>_<secret>"),
        ("fdp_abc_" + "a" * 43, "a personal token reads fdp_<8 letters or digits>_<secret>"),
        ("ghp_" + "a" * 36, "Freeze Debt tokens start with fdk_ (upload tokens) or fdp_"),
    ],
)
def test_a_malformed_token_is_called_malformed(api_client, db, token, says):
    response = api_client.get(TOKEN_URL, **_bearer(token))
    assert response.status_code == 401
    message = response.json()["error"]["message"]
    assert message.startswith("Malformed token: ")
    assert says in message
    assert token not in message


@pytest.mark.urls("tests.urls")
def test_a_wrong_scope_names_the_command_that_makes_the_right_token(api_client, evidence_token):
    response = api_client.put("/api/v1/test/ledger-only", **_bearer(evidence_token))
    slug = UploadToken.objects.get().repository.slug
    assert response.json()["error"]["message"].endswith(
        f"A server admin makes one with: python manage.py create_token {slug} --scope ledger"
    )
