"""Personal API tokens (evidence/personal_tokens.py, PersonalTokenAuthentication): a person
reads the API as themselves; a personal token never uploads, and an upload token is never a
person."""

import datetime
import hashlib
import re
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from evidence import personal_tokens, tokens
from evidence.models import Patch, PersonalToken, Run
from evidence.personal_tokens import personal_token_create, personal_token_revoke
from evidence.services import token_create
from ledger.models import LedgerVersion
from tests.factories import FreezeFactory, PatchFactory, RepositoryFactory, RunFactory, UserFactory

PERSONAL_SHAPE = re.compile(r"fdp_[a-z0-9]{8}_[A-Za-z0-9_-]{43}")
SHA = "a" * 40


def bearer(plain: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {plain}"}


def error_code(response) -> str:
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]["code"]


@pytest.fixture
def world(repository):
    """Two repositories, each with a run, a patch and a freeze."""
    billing = RepositoryFactory(slug="billing")
    objects = {}
    for repo in (repository, billing):
        objects[repo.slug] = {
            "run": RunFactory(repository=repo),
            "patch": PatchFactory(repository=repo),
            "freeze": FreezeFactory(repository=repo),
        }
    return objects


def read_urls(world) -> dict[str, str]:
    shop = world["acme-shop"]
    return {
        "repositories": "/api/v1/repositories",
        "patches": "/api/v1/patches",
        "freezes": "/api/v1/freezes",
        "run": f"/api/v1/runs/{shop['run'].pk}",
        "report": f"/api/v1/patches/{shop['patch'].pk}/report",
    }


READS = ["repositories", "patches", "freezes", "run", "report"]


@pytest.fixture
def staff_token(staff) -> str:
    return personal_token_create(user=staff, name="laptop")[1]


@pytest.fixture
def outsider_token(outsider) -> str:
    return personal_token_create(user=outsider)[1]


# --- the token itself ------------------------------------------------------------------------


def test_personal_token_has_its_own_recognisable_marker(staff):
    token, plain = personal_token_create(user=staff)
    assert PERSONAL_SHAPE.fullmatch(plain)
    assert plain.startswith(f"fdp_{token.prefix}_")
    assert token.display_prefix == f"fdp_{token.prefix}"
    assert not tokens.looks_like_token(plain)  # not an upload token's fdk_


def test_personal_token_is_stored_only_as_its_sha256_digest(staff):
    token, plain = personal_token_create(user=staff)
    secret = plain.split("_", 2)[2]
    token.refresh_from_db()
    assert token.digest == hashlib.sha256(plain.encode()).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM evidence_personaltoken")
        stored = repr(cursor.fetchall())
    assert plain not in stored
    assert secret not in stored
    assert token.prefix in stored


def test_the_two_kinds_of_token_never_verify_as_each_other(staff, repository):
    _, personal = personal_token_create(user=staff)
    _, upload = token_create(repository=repository, scope="evidence")
    assert personal_tokens.verify(personal) is not None
    assert tokens.verify(personal) is None
    assert personal_tokens.verify(upload) is None
    # The same secret under the other marker is just a wrong token.
    assert personal_tokens.verify("fdp_" + upload[len("fdk_") :]) is None


def test_revoking_is_idempotent_and_keeps_the_first_time(staff):
    token, _ = personal_token_create(user=staff)
    first = personal_token_revoke(prefix=token.display_prefix).revoked_at
    again = personal_token_revoke(prefix=token.prefix).revoked_at
    assert first is not None
    assert again == first


def test_revoking_an_unknown_prefix_raises(db):
    with pytest.raises(PersonalToken.DoesNotExist):
        personal_token_revoke(prefix="fdp_zzzzzzzz")


# --- the read endpoints ----------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", READS)
def test_anonymous_reads_are_a_401_with_a_bearer_challenge(api_client, world, endpoint):
    response = api_client.get(read_urls(world)[endpoint])
    assert response.status_code == 401
    assert error_code(response) == "not_authenticated"
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.parametrize("endpoint", READS)
def test_staff_personal_token_reads_every_endpoint(api_client, world, staff_token, endpoint):
    response = api_client.get(read_urls(world)[endpoint], **bearer(staff_token))
    assert response.status_code == 200


def test_staff_personal_token_sees_every_repository(api_client, world, staff_token):
    def listed(url, key):
        body = api_client.get(url, **bearer(staff_token)).json()
        return sorted(item[key] for item in body["results"])

    assert listed("/api/v1/repositories", "slug") == ["acme-shop", "billing"]
    assert listed("/api/v1/patches", "repository") == ["acme-shop", "billing"]
    assert listed("/api/v1/freezes", "repository") == ["acme-shop", "billing"]
    billing_run = world["billing"]["run"].pk
    assert api_client.get(f"/api/v1/runs/{billing_run}", **bearer(staff_token)).status_code == 200


@pytest.mark.parametrize("endpoint", ["repositories", "patches", "freezes"])
def test_personal_token_of_a_user_with_no_team_lists_nothing(
    api_client, world, outsider_token, endpoint
):
    response = api_client.get(read_urls(world)[endpoint], **bearer(outsider_token))
    assert response.status_code == 200
    assert response.json()["count"] == 0
    assert response.json()["results"] == []


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/patches?repository=acme-shop",
        "/api/v1/freezes?repository=acme-shop",
        "run",
        "report",
    ],
)
def test_personal_token_of_a_user_with_no_team_finds_nothing(
    api_client, world, outsider_token, url
):
    url = read_urls(world).get(url, url)
    response = api_client.get(url, **bearer(outsider_token))
    assert response.status_code == 404
    assert error_code(response) == "not_found"


@pytest.mark.parametrize("endpoint", READS)
def test_revoked_personal_token_is_a_401(api_client, world, staff, endpoint):
    token, plain = personal_token_create(user=staff)
    personal_token_revoke(prefix=token.prefix)
    response = api_client.get(read_urls(world)[endpoint], **bearer(plain))
    assert response.status_code == 401
    assert error_code(response) == "authentication_failed"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_personal_token_of_an_inactive_user_is_a_401(api_client, world, staff, staff_token):
    staff.is_active = False
    staff.save()
    response = api_client.get("/api/v1/repositories", **bearer(staff_token))
    assert response.status_code == 401


def test_forged_personal_token_is_a_401(api_client, world, staff_token):
    forged = staff_token[:-1] + ("a" if staff_token[-1] != "a" else "b")
    response = api_client.get("/api/v1/repositories", **bearer(forged))
    assert response.status_code == 401
    assert error_code(response) == "authentication_failed"


def test_personal_token_needs_no_session_and_sets_none(api_client, world, staff_token):
    response = api_client.get("/api/v1/repositories", **bearer(staff_token))
    assert response.status_code == 200
    assert "sessionid" not in response.cookies


@pytest.mark.parametrize("endpoint", ["repositories", "patches", "freezes"])
def test_upload_token_is_never_a_person(api_client, world, evidence_token, endpoint):
    response = api_client.get(read_urls(world)[endpoint], **bearer(evidence_token))
    assert response.status_code == 403
    assert error_code(response) == "permission_denied"


# --- upload endpoints refuse personal tokens -------------------------------------------------


def test_personal_token_cannot_upload_a_run(api_client, repository, staff_token):
    response = api_client.post(
        f"/api/v1/runs?sha={SHA}",
        b'{"exit": 0, "records": []}',
        content_type="application/json",
        **bearer(staff_token),
    )
    assert response.status_code == 403
    assert error_code(response) == "permission_denied"
    assert "upload token" in response.json()["error"]["message"]
    assert not Run.objects.exists()


def test_personal_token_cannot_declare_a_patch(api_client, repository, staff_token):
    response = api_client.post(
        "/api/v1/patches",
        {"ref": "PR-1", "base_sha": SHA, "head_sha": "b" * 40},
        format="json",
        **bearer(staff_token),
    )
    assert response.status_code == 403
    assert error_code(response) == "permission_denied"
    assert not Patch.objects.exists()


def test_personal_token_cannot_sync_the_ledger(api_client, repository, staff_token):
    response = api_client.put(
        f"/api/v1/ledger?sha={SHA}",
        b'[[freeze]]\nid = "FRZ-1"\n',
        content_type="application/toml",
        **bearer(staff_token),
    )
    assert response.status_code == 403
    assert error_code(response) == "permission_denied"
    assert not LedgerVersion.objects.exists()


def test_personal_token_is_not_an_upload_token_on_the_token_endpoint(
    api_client, repository, staff_token
):
    response = api_client.get("/api/v1/token", **bearer(staff_token))
    assert response.status_code == 403
    assert "upload token" in response.json()["error"]["message"]


def test_revoked_personal_token_on_an_upload_endpoint_is_a_401(api_client, repository, staff):
    token, plain = personal_token_create(user=staff)
    personal_token_revoke(prefix=token.prefix)
    response = api_client.post(
        f"/api/v1/runs?sha={SHA}", b"{}", content_type="application/json", **bearer(plain)
    )
    assert response.status_code == 401


# --- last use --------------------------------------------------------------------------------


@time_machine.travel(datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC), tick=False)
def test_use_is_recorded_on_the_personal_token(api_client, world, staff):
    token, plain = personal_token_create(user=staff)
    assert token.last_used_at is None
    api_client.get("/api/v1/repositories", **bearer(plain))
    token.refresh_from_db()
    assert token.last_used_at == timezone.now()


def test_a_refused_upload_is_not_recorded_as_a_use(api_client, repository, staff):
    token, plain = personal_token_create(user=staff)
    api_client.post(
        f"/api/v1/runs?sha={SHA}", b"{}", content_type="application/json", **bearer(plain)
    )
    token.refresh_from_db()
    assert token.last_used_at is None


# --- commands and admin ----------------------------------------------------------------------


def _call(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_personal_token_prints_a_working_token_once(api_client, world, staff):
    output = _call("create_personal_token", "staff", "--name", "laptop")
    plain = output.strip().splitlines()[-1]
    token = personal_tokens.verify(plain)
    assert token is not None
    assert (token.user, token.name) == (staff, "laptop")
    assert output.count(plain) == 1
    assert api_client.get("/api/v1/repositories", **bearer(plain)).json()["count"] == 2


def test_create_personal_token_for_an_unknown_user_fails(db):
    with pytest.raises(CommandError, match="No user"):
        _call("create_personal_token", "nobody")
    assert not PersonalToken.objects.exists()


def test_create_personal_token_refuses_an_inactive_user(db):
    UserFactory(username="gone", is_active=False)
    with pytest.raises(CommandError, match="inactive"):
        _call("create_personal_token", "gone")


@pytest.mark.parametrize("form", ["display", "whole", "bare"])
def test_revoke_token_revokes_a_personal_token(staff, form):
    token, plain = personal_token_create(user=staff)
    name = {"display": token.display_prefix, "whole": plain, "bare": token.prefix}[form]
    output = _call("revoke_token", name)
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert personal_tokens.verify(plain) is None
    assert token.display_prefix in output
    assert plain not in output


def test_revoke_token_of_a_personal_prefix_leaves_upload_tokens_alone(staff, repository):
    upload, upload_plain = token_create(repository=repository, scope="evidence")
    personal, _ = personal_token_create(user=staff)
    _call("revoke_token", personal.display_prefix)
    assert tokens.verify(upload_plain) == upload


def test_revoke_token_asks_for_the_marker_when_a_bare_prefix_names_both(staff, repository):
    upload, _ = token_create(repository=repository, scope="evidence")
    personal, _ = personal_token_create(user=staff)
    PersonalToken.objects.filter(pk=personal.pk).update(prefix=upload.prefix)
    with pytest.raises(CommandError, match=r"fdk_.* or fdp_"):
        _call("revoke_token", upload.prefix)
    assert not PersonalToken.objects.filter(revoked_at__isnull=False).exists()


def test_revoke_token_of_an_unknown_personal_prefix_fails(db):
    with pytest.raises(CommandError, match="No personal token"):
        _call("revoke_token", "fdp_zzzzzzzz")


def test_admin_shows_the_prefix_never_the_digest_and_cannot_add(client, staff):
    token, plain = personal_token_create(user=staff)
    client.force_login(staff)
    for url in [
        reverse("admin:evidence_personaltoken_changelist"),
        reverse("admin:evidence_personaltoken_change", args=[token.pk]),
    ]:
        page = client.get(url).content.decode()
        assert token.display_prefix in page, url
        assert token.digest not in page, url
        assert plain not in page, url
    assert client.get(reverse("admin:evidence_personaltoken_add")).status_code == 403


def test_admin_revokes_selected_personal_tokens(client, staff):
    token, _ = personal_token_create(user=staff)
    client.force_login(staff)
    client.post(
        reverse("admin:evidence_personaltoken_changelist"),
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    token.refresh_from_db()
    assert token.revoked_at is not None
