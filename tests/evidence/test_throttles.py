"""The upload throttle and the refused-token count: atomic across clients, and never in the
way of an upload or a patch when the cache is down."""

import json
import os
import socket
import uuid

import pytest
import redis
import time_machine
from django.test import RequestFactory, override_settings

from evidence.authentication import TokenPrincipal
from evidence.models import Patch, Run
from evidence.throttles import UploadTokenRateThrottle
from tests.concurrency import at_once
from tests.evidence.bodies import MIXED, SHA

TOKEN_URL = "/api/v1/token"


def _bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _redis_cache(url: str) -> dict:
    from config.dsn import parse_cache_url

    # A prefix of its own: the counts of one test run never meet another's.
    return {"default": {**parse_cache_url(url), "KEY_PREFIX": f"fd-test-{uuid.uuid4().hex}"}}


UNREACHABLE_CACHE = _redis_cache(f"redis://127.0.0.1:{_closed_port()}/0")


def test_upload_is_accepted_while_the_cache_is_unreachable(
    api_client, evidence_token, django_capture_on_commit_callbacks
):
    with (
        override_settings(CACHES=UNREACHABLE_CACHE),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = api_client.post(
            f"/api/v1/runs?sha={SHA}",
            MIXED,
            content_type="application/json",
            **_bearer(evidence_token),
        )
    assert response.status_code == 202, response.content
    assert Run.objects.get().status == Run.Status.READY


def test_patch_is_declared_while_the_cache_is_unreachable(api_client, evidence_token):
    body = json.dumps({"ref": "PR-1", "base_sha": "b" * 40, "head_sha": "e" * 40})
    with override_settings(CACHES=UNREACHABLE_CACHE):
        response = api_client.post(
            "/api/v1/patches", body, content_type="application/json", **_bearer(evidence_token)
        )
    assert response.status_code == 201, response.content
    assert Patch.objects.count() == 1


def _redis_url() -> str:
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError:
        pytest.skip(f"no Redis at {url} (set REDIS_URL)")
    return url


def test_upload_throttle_lets_exactly_the_limit_through_under_concurrency(repository):
    """16 clients on one token at once: the count is one atomic increment per request, so
    no two requests read the same count (the read-modify-write let 138 of 120 through)."""
    principal = TokenPrincipal(
        token_id=1, prefix="abcd1234", scope="evidence", repository=repository
    )
    request = RequestFactory().post("/api/v1/runs")
    request.user = principal

    def client() -> int:
        return sum(UploadTokenRateThrottle().allow_request(request, view=None) for _ in range(12))

    cache = _redis_cache(_redis_url())
    # The clock stands still, so all 192 requests fall in one window.
    with (
        override_settings(CACHES=cache, FREEZEDEBT_UPLOADS_PER_MINUTE=60),
        time_machine.travel("2026-11-30 12:00:10Z", tick=False),
    ):
        allowed = sum(at_once(*[client] * 16))
    assert allowed == 60


@override_settings(FREEZEDEBT_BAD_TOKENS_PER_MINUTE=3)
def test_refused_tokens_are_counted_per_address_then_answered_429(api_client, evidence_token):
    wrong = evidence_token[:-4] + "0000"
    for _ in range(3):
        response = api_client.get(TOKEN_URL, REMOTE_ADDR="192.0.2.7", **_bearer(wrong))
        assert response.status_code == 401
    response = api_client.get(TOKEN_URL, REMOTE_ADDR="192.0.2.7", **_bearer(wrong))
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "throttled"
    assert int(response["Retry-After"]) >= 1
    # Another address is not held back, nor is the right token from the same one.
    assert api_client.get(TOKEN_URL, REMOTE_ADDR="192.0.2.8", **_bearer(wrong)).status_code == 401
    ok = api_client.get(TOKEN_URL, REMOTE_ADDR="192.0.2.7", **_bearer(evidence_token))
    assert ok.status_code == 200
