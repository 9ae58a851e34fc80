"""Bodies that once answered 500 or left a run stuck: each is now a clear 4xx, or a rejected
run with its reason, and nothing is half-stored."""

import gzip
import io
import json

from evidence.models import Patch, Run
from ledger.models import LedgerVersion
from tests.evidence.bodies import MIXED, SHA
from tests.ledger.test_sync import freeze_toml

PATCH = {"ref": "PR-1", "base_sha": "b" * 40, "head_sha": "e" * 40}


def _bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def _error(response) -> dict:
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]


def _nested(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


def test_a_deeply_nested_analysis_is_400_not_500(api_client, evidence_token):
    body = json.dumps(PATCH)[:-1] + ', "analysis": ' + _nested(930) + "}"
    response = api_client.post(
        "/api/v1/patches", body, content_type="application/json", **_bearer(evidence_token)
    )
    assert response.status_code == 400
    assert "nested deeper than 64 levels" in _error(response)["message"]
    assert not Patch.objects.exists()


def test_a_deeply_nested_json_ledger_is_400_not_500(api_client, ledger_token):
    response = api_client.put(
        f"/api/v1/ledger?sha={'a' * 40}",
        ("[" + _nested(940) + "]").encode(),
        content_type="application/json",
        **_bearer(ledger_token),
    )
    assert response.status_code == 400
    assert "nested deeper" in json.dumps(_error(response))
    assert not LedgerVersion.objects.exists()


def test_a_patch_with_a_duplicate_key_is_400_naming_the_key(api_client, evidence_token):
    body = json.dumps(PATCH)[:-1] + ', "title": "one", "title": "two"}'
    response = api_client.post(
        "/api/v1/patches", body, content_type="application/json", **_bearer(evidence_token)
    )
    assert response.status_code == 400
    assert "'title' twice" in _error(response)["message"]
    assert not Patch.objects.exists()


def test_evidence_with_a_duplicate_key_is_rejected_naming_the_key(
    api_client, evidence_token, django_capture_on_commit_callbacks
):
    body = b'{"exit": 0, "records": [{"nodeid": "t.py::a", "when": "call", '
    body += b'"outcome": "passed", "outcome": "failed", "xfail": false}]}'
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(
            f"/api/v1/runs?sha={SHA}",
            body,
            content_type="application/json",
            **_bearer(evidence_token),
        )
    assert response.status_code == 202
    run = Run.objects.get()
    assert run.status == Run.Status.REJECTED
    assert "'outcome' twice" in run.reasons[0]["message"]


def test_a_5000_digit_exit_status_is_rejected_with_a_reason_not_left_received(
    api_client, evidence_token, django_capture_on_commit_callbacks
):
    body = b'{"exit": ' + b"7" * 5000 + b', "records": []}'
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(
            f"/api/v1/runs?sha={SHA}",
            body,
            content_type="application/json",
            **_bearer(evidence_token),
        )
    assert response.status_code == 202
    run = Run.objects.get()
    assert run.status == Run.Status.REJECTED
    [reason] = run.reasons
    assert "more than 1000 digits" in reason["message"]
    assert "sys." not in reason["message"]


# --- bodies as clients send them --------------------------------------------------------


def _raw(api_client, method, path, body: bytes, token, *, content_type, **environ):
    """A request whose body comes from its own stream, as a server hands it over."""
    return getattr(api_client, method)(
        path,
        CONTENT_TYPE=content_type,
        **{"wsgi.input": io.BytesIO(body)},
        **_bearer(token),
        **environ,
    )


def test_a_chunked_upload_is_read_whole_when_the_server_decodes_chunks(
    api_client, evidence_token, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = _raw(
            api_client,
            "post",
            f"/api/v1/runs?sha={SHA}",
            MIXED,
            evidence_token,
            content_type="application/json",
            HTTP_TRANSFER_ENCODING="chunked",
            **{"wsgi.input_terminated": True},
        )
    assert response.status_code == 202, response.content
    run = Run.objects.get()
    assert run.status == Run.Status.READY
    assert run.raw_size == len(MIXED)


def test_a_chunked_body_the_server_does_not_decode_is_411(api_client, evidence_token):
    response = _raw(
        api_client,
        "post",
        f"/api/v1/runs?sha={SHA}",
        MIXED,
        evidence_token,
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
    )
    assert response.status_code == 411
    assert "Content-Length" in _error(response)["message"]
    assert not Run.objects.exists()


def test_an_upload_shorter_than_its_content_length_is_refused_as_incomplete(
    api_client, evidence_token
):
    response = _raw(
        api_client,
        "post",
        f"/api/v1/runs?sha={SHA}",
        MIXED[:40],
        evidence_token,
        content_type="application/json",
        CONTENT_LENGTH=str(len(MIXED)),
    )
    assert response.status_code == 400
    assert f"after 40 of the {len(MIXED)} bytes" in _error(response)["message"]
    assert not Run.objects.exists()


def test_a_patch_shorter_than_its_content_length_is_refused_as_incomplete(
    api_client, evidence_token
):
    body = json.dumps(PATCH).encode()
    response = _raw(
        api_client,
        "post",
        "/api/v1/patches",
        body[:-1],
        evidence_token,
        content_type="application/json",
        CONTENT_LENGTH=str(len(body)),
    )
    assert response.status_code == 400
    assert "incomplete" in _error(response)["message"]
    assert not Patch.objects.exists()


def test_a_gzip_patch_is_read(api_client, evidence_token):
    response = api_client.post(
        "/api/v1/patches",
        gzip.compress(json.dumps(PATCH).encode()),
        content_type="application/json",
        HTTP_CONTENT_ENCODING="gzip",
        **_bearer(evidence_token),
    )
    assert response.status_code == 201, response.content
    assert Patch.objects.get().ref == "PR-1"


def test_a_gzip_ledger_is_read(api_client, ledger_token):
    response = api_client.put(
        f"/api/v1/ledger?sha={'a' * 40}",
        gzip.compress(freeze_toml().encode()),
        content_type="application/toml",
        HTTP_CONTENT_ENCODING="gzip",
        **_bearer(ledger_token),
    )
    assert response.status_code == 201, response.content
    assert LedgerVersion.objects.count() == 1


def test_another_encoding_on_a_patch_is_415_naming_it(api_client, evidence_token):
    response = api_client.post(
        "/api/v1/patches",
        json.dumps(PATCH).encode(),
        content_type="application/json",
        HTTP_CONTENT_ENCODING="br",
        **_bearer(evidence_token),
    )
    assert response.status_code == 415
    assert "'br'" in _error(response)["message"]
    assert not Patch.objects.exists()


def test_a_patch_declared_gzip_that_is_not_is_400(api_client, evidence_token):
    response = api_client.post(
        "/api/v1/patches",
        json.dumps(PATCH).encode(),
        content_type="application/json",
        HTTP_CONTENT_ENCODING="gzip",
        **_bearer(evidence_token),
    )
    assert response.status_code == 400
    assert "declared gzip" in _error(response)["message"]
