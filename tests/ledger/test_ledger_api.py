import json

import pytest
from django.test import override_settings

from ledger.models import Freeze, FreezeEvent, LedgerVersion
from tests.factories import FreezeFactory, RepositoryFactory
from tests.ledger.test_sync import freeze_toml

LEDGER_URL = "/api/v1/ledger"
FREEZES_URL = "/api/v1/freezes"


def put(api_client, token, body, *, sha="a" * 40, content_type="application/toml"):
    url = f"{LEDGER_URL}?sha={sha}" if sha else LEDGER_URL
    data = body.encode() if isinstance(body, str) else body
    return api_client.put(
        url, data, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def error(response) -> dict:
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]


def nothing_stored() -> bool:
    return not (
        LedgerVersion.objects.exists() or Freeze.objects.exists() or FreezeEvent.objects.exists()
    )


def test_ledger_token_syncs_the_ledger_and_gets_the_events(api_client, ledger_token):
    response = put(api_client, ledger_token, freeze_toml())
    assert response.status_code == 201
    body = response.json()
    assert body["version"] == LedgerVersion.objects.get().pk
    assert [(e["kind"], e["freeze"], e["silent"], e["chain"]) for e in body["events"]] == [
        ("opened", "FRZ-014", False, 0)
    ]
    assert body["events"][0]["before"] is None
    assert body["events"][0]["after"]["covers"] == ["src/pricing/**"]


def test_renewal_is_reported_silent_with_its_chain(api_client, ledger_token):
    put(api_client, ledger_token, freeze_toml())
    response = put(api_client, ledger_token, freeze_toml(expires="2026-12-10"), sha="b" * 40)
    assert response.status_code == 201
    [event] = response.json()["events"]
    assert (event["kind"], event["silent"], event["chain"]) == ("renewed", True, 1)


def test_same_ledger_for_the_same_commit_answers_200_unchanged(api_client, ledger_token):
    first = put(api_client, ledger_token, freeze_toml()).json()
    again = put(api_client, ledger_token, freeze_toml())
    assert again.status_code == 200
    assert again.json() == {"version": first["version"], "events": [], "invalid": [], "expired": []}
    assert LedgerVersion.objects.count() == 1


def test_the_commit_is_stored_lower_case_and_matched_so(api_client, ledger_token):
    put(api_client, ledger_token, freeze_toml(), sha="ABCDEF1")
    assert LedgerVersion.objects.get().sha == "abcdef1"
    assert put(api_client, ledger_token, freeze_toml(), sha="abcdef1").status_code == 200


def test_other_ledger_for_a_stored_commit_is_409(api_client, ledger_token):
    put(api_client, ledger_token, freeze_toml())
    response = put(api_client, ledger_token, freeze_toml(expires="2026-12-10"))
    assert response.status_code == 409
    assert error(response)["code"] == "conflict"
    assert LedgerVersion.objects.count() == 1


def test_bad_toml_is_400_with_the_readers_problems_and_nothing_stored(api_client, ledger_token):
    response = put(api_client, ledger_token, '[[freeze]]\nid = "FRZ-1"\ncovers = [\n')
    assert response.status_code == 400
    details = error(response)["details"]
    [problem] = details["ledger"]
    assert set(problem) == {"path", "message"}
    assert problem["message"].startswith("invalid TOML")
    assert nothing_stored()


def test_structural_faults_are_listed_with_where_they_are(api_client, ledger_token):
    body = '[[freeze]]\nid = "FRZ-1"\ncovers = ["/abs/path"]\nexpires = "soon"\n'
    response = put(api_client, ledger_token, body)
    assert response.status_code == 400
    paths = [p["path"] for p in error(response)["details"]["ledger"]]
    assert paths == ["freeze[0].covers[0]", "freeze[0].expires"]
    assert nothing_stored()


def test_json_ledger_is_accepted_as_application_json(api_client, ledger_token):
    body = json.dumps({"tests/test_net.py::test_fetch": {"covers": ["src/net/**"], "owner": "ana"}})
    response = put(api_client, ledger_token, body, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["events"][0]["freeze"] == "tests/test_net.py::test_fetch"


def test_evidence_token_cannot_sync_the_ledger(api_client, evidence_token):
    response = put(api_client, evidence_token, freeze_toml())
    assert response.status_code == 403
    assert "ledger" in error(response)["message"]
    assert nothing_stored()


def test_ledger_sync_needs_a_token(api_client, db):
    response = api_client.put(
        f"{LEDGER_URL}?sha={'a' * 40}", freeze_toml().encode(), content_type="application/toml"
    )
    assert response.status_code == 401


@pytest.mark.parametrize("sha", [None, "", "not a sha", "a" * 65])
def test_missing_or_malformed_sha_is_400(api_client, ledger_token, sha):
    response = put(api_client, ledger_token, freeze_toml(), sha=sha)
    assert response.status_code == 400
    assert "sha" in error(response)["details"]
    assert nothing_stored()


def test_empty_body_is_refused_rather_than_retiring_every_freeze(api_client, ledger_token):
    put(api_client, ledger_token, freeze_toml())
    response = put(api_client, ledger_token, "  \n", sha="b" * 40)
    assert response.status_code == 400
    assert Freeze.objects.get().current


def test_body_not_utf8_is_400(api_client, ledger_token):
    response = put(api_client, ledger_token, b"\xff\xfe[[freeze]]")
    assert response.status_code == 400
    assert error(response)["details"]["ledger"][0]["message"] == "is not valid UTF-8"


@override_settings(FREEZEDEBT_MAX_LEDGER_BYTES=64)
def test_oversized_ledger_is_413(api_client, ledger_token):
    response = put(api_client, ledger_token, freeze_toml())
    assert response.status_code == 413
    assert nothing_stored()


def test_other_content_types_are_415(api_client, ledger_token):
    response = put(api_client, ledger_token, freeze_toml(), content_type="application/xml")
    assert response.status_code == 415
    assert nothing_stored()


def test_ledger_is_stored_under_the_policys_ledger_path(api_client, repository, ledger_token):
    from ledger.services import policy_update

    policy_update(repository=repository, user=None, ledger_path="ops/freezes.toml")
    put(api_client, ledger_token, freeze_toml())
    assert LedgerVersion.objects.get().path == "ops/freezes.toml"


# --- GET /api/v1/freezes --------------------------------------------------------------------


def test_staff_list_the_current_freezes_of_a_repository(client, staff, repository):
    FreezeFactory(repository=repository, freeze_id="FRZ-001")
    FreezeFactory(repository=repository, freeze_id="FRZ-002", current=False)
    FreezeFactory(freeze_id="FRZ-900")  # another repository
    client.force_login(staff)
    response = client.get(FREEZES_URL, {"repository": repository.slug})
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1
    [item] = body["results"]
    assert (item["repository"], item["id"], item["current"]) == ("acme-shop", "FRZ-001", True)
    assert item["covers"] == ["src/net/**"]

    retired = client.get(FREEZES_URL, {"repository": repository.slug, "include_retired": "true"})
    assert [f["id"] for f in retired.json()["results"]] == ["FRZ-001", "FRZ-002"]


def test_freezes_are_paginated(client, staff, repository):
    for number in range(3):
        FreezeFactory(repository=repository, freeze_id=f"FRZ-{number}")
    client.force_login(staff)
    page = client.get(FREEZES_URL, {"page_size": 2}).json()
    assert (page["count"], len(page["results"])) == (3, 2)
    assert page["next"]


def test_outsider_sees_no_freezes_and_no_repository(client, outsider, repository):
    FreezeFactory(repository=repository)
    client.force_login(outsider)
    assert client.get(FREEZES_URL).json()["count"] == 0
    response = client.get(FREEZES_URL, {"repository": repository.slug})
    assert response.status_code == 404
    # Unknown and invisible look the same.
    assert client.get(FREEZES_URL, {"repository": "no-such-repo"}).status_code == 404


def test_upload_tokens_cannot_list_freezes(api_client, evidence_token):
    response = api_client.get(FREEZES_URL, HTTP_AUTHORIZATION=f"Bearer {evidence_token}")
    assert response.status_code == 403


def test_anonymous_cannot_list_freezes(client, db):
    RepositoryFactory()
    response = client.get(FREEZES_URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_stored_ledger_answers_with_every_invalid_and_expired_freeze(api_client, ledger_token):
    # A date in the past year: expired, and expiring before it was opened.
    body = freeze_toml("FRZ-1", opened="2026-11-20", expires="2025-11-27") + freeze_toml(
        "FRZ-2", reason="assert total == 3"
    )
    response = put(api_client, ledger_token, body)
    assert response.status_code == 201
    answer = response.json()
    assert answer["invalid"] == [
        {"freeze": "FRZ-1", "problems": ["expires before it was opened"]},
        {
            "freeze": "FRZ-2",
            "problems": ["reason is an assertion message, not an environmental signal"],
        },
    ]
    assert answer["expired"] == [{"freeze": "FRZ-1", "expires": "2025-11-27"}]
    assert LedgerVersion.objects.count() == 1  # stored all the same


def test_a_misspelt_field_is_refused_with_its_line_and_nothing_stored(api_client, ledger_token):
    body = freeze_toml("FRZ-1").replace("expires =", "expirse =")
    response = put(api_client, ledger_token, body)
    assert response.status_code == 400
    (problem,) = error(response)["details"]["ledger"]
    line = body.splitlines().index("expirse = 2026-12-04") + 1
    assert problem == {
        "path": "freeze[0].expirse",
        "message": f"unknown field 'expirse': did you mean 'expires'? (line {line})",
    }
    assert not LedgerVersion.objects.exists()
