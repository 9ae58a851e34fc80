"""The committed schema says what the endpoints do, and the endpoints refuse what it forbids."""

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.factories import UserFactory

SCHEMA = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml").read_text(encoding="utf-8")
)
LISTS = ["/api/v1/repositories", "/api/v1/patches", "/api/v1/freezes", "/api/v1/debt"]


def _operation(path: str, method: str) -> dict:
    return SCHEMA["paths"][path][method]


def _parameter(operation: dict, name: str) -> dict:
    return next(p for p in operation["parameters"] if p["name"] == name)


def test_the_bodies_of_uploads_and_ledger_syncs_are_required():
    assert _operation("/api/v1/runs", "post")["requestBody"]["required"] is True
    assert _operation("/api/v1/ledger", "put")["requestBody"]["required"] is True


def test_the_ledger_sha_has_the_sha_pattern():
    sha = _parameter(_operation("/api/v1/ledger", "put"), "sha")
    assert sha["schema"]["pattern"] == "^[0-9a-fA-F]{7,64}$"


def test_a_changed_path_may_not_be_empty_nor_absolute():
    changed = SCHEMA["components"]["schemas"]["PatchDeclarationRequest"]["properties"]["changed"]
    line, *objects = changed["oneOf"][0]["items"]["oneOf"]
    for item in objects:
        path = item["properties"]["path"]
        assert path["minLength"] == 1
        assert not re.search(path["pattern"], "/etc/passwd")
    assert not re.search(line["pattern"], "M\t/etc/passwd")
    assert re.search(line["pattern"], "R087\tsrc/old.py\tsrc/new.py")


@pytest.mark.parametrize("path", LISTS)
def test_list_endpoints_document_their_404_and_400(path):
    responses = _operation(path, "get")["responses"]
    assert {"400", "404"} <= set(responses)


@pytest.fixture
def person(client, db):
    client.force_login(UserFactory(username="reader"))
    return client


@pytest.mark.parametrize("page_size", ["null", "0", "-1", "", "2.5"])
@pytest.mark.parametrize("path", LISTS)
def test_a_page_size_that_is_no_whole_number_is_400(person, path, page_size):
    response = person.get(path, {"page_size": page_size})
    assert response.status_code == 400
    assert "page_size" in response.json()["error"]["details"]


def test_a_page_past_the_last_is_the_documented_404(person):
    assert person.get("/api/v1/repositories", {"page": "9"}).status_code == 404


@pytest.mark.parametrize("name", ["start", "end"])
def test_an_empty_date_is_400_not_the_default(person, name):
    response = person.get("/api/v1/debt", {name: ""})
    assert response.status_code == 400
    assert name in response.json()["error"]["details"]


def test_include_retired_takes_only_true_or_false(person):
    assert person.get("/api/v1/freezes", {"include_retired": "yes"}).status_code == 400
    assert person.get("/api/v1/freezes", {"include_retired": "true"}).status_code == 200


@pytest.mark.parametrize("value", [0, 1, "true", "yes"])
def test_ledger_changed_takes_only_a_json_boolean(api_client, evidence_token, value):
    body = {"ref": "PR-1", "base_sha": "b" * 40, "head_sha": "e" * 40, "ledger_changed": value}
    response = api_client.post(
        "/api/v1/patches",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {evidence_token}",
    )
    assert response.status_code == 400
    assert "ledger_changed" in response.json()["error"]["details"]


def test_an_empty_attempt_is_400_not_the_first(api_client, evidence_token):
    response = api_client.post(
        f"/api/v1/runs?sha={'a' * 40}&attempt=",
        b'{"exit": 0, "records": []}',
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {evidence_token}",
    )
    assert response.status_code == 400
    assert "attempt" in response.json()["error"]["details"]


# --- what schemathesis found: the endpoint refused or took what the schema said otherwise -----


def _declare(api_client, token, **fields):
    body = {"ref": "PR-1", "base_sha": "b" * 40, "head_sha": "e" * 40, **fields}
    return api_client.post(
        "/api/v1/patches",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("label", 0),
        ("title", True),
        ("author", "  " + "x" * 199),  # over 200 before trimming, as the schema counts
        ("title", "a\ud800b"),
        ("ref", "\u001d"),
        ("url", "http://exa\u001dmple.com"),
        ("url", "javascript:alert(1)"),
        ("changed", [{"path": "src/a.py", "old_path": {}}]),
        ("changed", [{"path": "src/a.py", "status": "C"}]),
    ],
)
def test_what_the_schema_forbids_is_400(api_client, evidence_token, field, value):
    response = _declare(api_client, evidence_token, **{field: value})
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["details"]


def test_a_path_with_a_group_separator_stays_one_path(api_client, evidence_token):
    # str.splitlines() broke lines at \x1c-\x1e and \x85, which git never does.
    response = _declare(api_client, evidence_token, changed=["M\tsrc/a\u001eb.py"])
    assert response.status_code == 201, response.content


def test_a_long_url_with_a_long_host_name_is_a_link_like_any(api_client, evidence_token):
    url = "https://" + ".".join(["a" * 63] * 5) + "/pull/1"
    assert _declare(api_client, evidence_token, url=url).status_code == 201


def test_a_json_ledger_may_be_a_map_or_a_list():
    body = _operation("/api/v1/ledger", "put")["requestBody"]["content"]["application/json"]
    assert {shape["type"] for shape in body["schema"]["oneOf"]} == {"object", "array"}
