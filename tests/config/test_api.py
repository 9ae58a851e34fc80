import json

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from django.test import Client, override_settings
from rest_framework import exceptions

from config.api import exception_handler

pytestmark = pytest.mark.urls("tests.urls")


def _error(response) -> dict:
    body = json.loads(response.content)
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return body["error"]


def test_unknown_api_path_answers_json_not_found(client):
    response = client.get("/api/v1/no-such-endpoint")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert _error(response)["code"] == "not_found"


def test_unknown_page_outside_the_api_stays_html(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert "application/json" not in response["Content-Type"]


def test_unexpected_api_failure_answers_json_500(db):
    client = Client(raise_request_exception=False)
    response = client.get("/api/v1/test/boom")
    assert response.status_code == 500
    error = _error(response)
    assert error["code"] == "server_error"
    assert "unexpected" not in error["message"]


def test_invalid_input_lists_field_errors(api_client):
    response = api_client.post("/api/v1/test/echo", {"ref": "x" * 11}, format="json")
    assert response.status_code == 400
    error = _error(response)
    assert error["code"] == "invalid"
    assert set(error["details"]) == {"ref", "count"}


def test_malformed_json_is_a_400_malformed(api_client):
    response = api_client.post("/api/v1/test/echo", b'{"ref": ', content_type="application/json")
    assert response.status_code == 400
    assert _error(response)["code"] == "malformed"


def test_wrong_content_type_is_a_415(api_client):
    response = api_client.post("/api/v1/test/echo", b"ref=x", content_type="text/plain")
    assert response.status_code == 415
    assert _error(response)["code"] == "unsupported_media_type"


@override_settings(FREEZEDEBT_MAX_JSON_BYTES=32)
def test_json_body_over_the_limit_is_a_413(api_client):
    body = json.dumps({"ref": "PR-1", "count": 1, "padding": "x" * 64})
    response = api_client.post("/api/v1/test/echo", body, content_type="application/json")
    assert response.status_code == 413
    assert _error(response)["code"] == "payload_too_large"


def test_json_body_at_the_limit_is_accepted(api_client, settings):
    body = json.dumps({"ref": "PR-1", "count": 12345678})
    settings.FREEZEDEBT_MAX_JSON_BYTES = len(body)
    response = api_client.post("/api/v1/test/echo", body, content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"ref": "PR-1", "count": 12345678}


def test_conflict_is_a_409_with_the_raised_message(api_client):
    response = api_client.post("/api/v1/test/conflict")
    assert response.status_code == 409
    error = _error(response)
    assert error["code"] == "conflict"
    assert error["message"] == "Run 7 already holds other content for this attempt."


def test_method_not_allowed_keeps_its_code(api_client):
    response = api_client.delete("/api/v1/test/echo")
    assert response.status_code == 405
    assert _error(response)["code"] == "method_not_allowed"


def test_throttled_rounds_retry_after_up_to_whole_seconds():
    response = exception_handler(exceptions.Throttled(wait=0.2), {})
    assert response.status_code == 429
    assert response["Retry-After"] == "1"
    assert response.data["error"]["code"] == "throttled"
    assert response.data["error"]["details"] == {"retry_after": 1}


def test_validation_errors_from_services_answer_like_serializer_errors():
    error = DjangoValidationError({"slug": ["Use lowercase letters."]})
    response = exception_handler(error, {})
    assert response.status_code == 400
    assert response.data["error"]["code"] == "invalid"
    assert response.data["error"]["details"] == {"slug": ["Use lowercase letters."]}


def test_unhandled_exceptions_are_left_to_django():
    assert exception_handler(ValueError("bug"), {}) is None
