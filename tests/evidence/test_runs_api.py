import gzip
import hashlib
import io
import json
import tracemalloc

import pytest
from django.db import OperationalError
from django.test import Client
from kombu.exceptions import OperationalError as BrokerError

from evidence import uploads
from evidence.ingest import runs_requeue_received
from evidence.models import Run, RunOutcomes, TestName, TestResult, UploadToken
from evidence.services import repository_create, token_create
from evidence.tasks import ingest_run
from tests.concurrency import at_once, races_need_postgresql
from tests.evidence.bodies import (
    BILLION_LAUGHS,
    JUNIT,
    JUNIT_BUCKETS,
    MIXED,
    MIXED_BUCKETS,
    SHA,
    evidence,
    gzip_bomb,
    gzipped,
    record,
)
from tests.evidence.stored_runs import stored_outcomes as _buckets
from tests.factories import FreezeFactory

RUNS = "/api/v1/runs"


def _bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def _post(client, token, body: bytes, *, content_type="application/json", query=None, **extra):
    params = {"sha": SHA} if query is None else query
    path = f"{RUNS}?" + "&".join(f"{key}={value}" for key, value in params.items())
    return client.post(path, body, content_type=content_type, **_bearer(token), **extra)


@pytest.fixture
def upload(api_client, evidence_token, django_capture_on_commit_callbacks):
    """POST a body with the repository's evidence token and run what the commit enqueued."""

    def send(body: bytes, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return _post(api_client, evidence_token, body, **kwargs)

    return send


def _error(response) -> dict:
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]


def _nothing_stored() -> None:
    assert not Run.objects.exists()
    assert not RunOutcomes.objects.exists()
    assert not TestName.objects.exists()
    assert not TestResult.objects.exists()


def test_a_database_outage_answers_503_with_retry_after_and_stores_nothing(
    upload, monkeypatch, caplog
):
    # The CI client retries a 503 (not a 500): the upload is sent again once the database is
    # back, so an outage loses no run (section 11).
    def database_down(**_kwargs):
        raise OperationalError("connection to server at 10.0.0.7 refused")

    monkeypatch.setattr("evidence.api.run_receive", database_down)
    response = upload(MIXED)
    assert response.status_code == 503
    error = _error(response)
    assert error["code"] == "unavailable"
    assert "10.0.0.7" not in response.content.decode()
    assert int(response["Retry-After"]) > 0
    assert "database unavailable" in caplog.text
    _nothing_stored()


# --- accepted uploads -----------------------------------------------------------------------


def test_json_upload_is_stored_then_parsed_into_one_bucket_per_node_id(upload, repository):
    response = upload(MIXED, query={"sha": SHA, "branch": "main", "label": "py311"})

    assert response.status_code == 202
    body = response.json()
    run = Run.objects.get()
    assert body == {
        "id": run.pk,
        "status": "received",
        "url": f"/api/v1/runs/{run.pk}",
        "reasons": [],
        "records": 0,
    }
    assert response["Location"] == f"/api/v1/runs/{run.pk}"
    assert (run.sha, run.branch, run.label, run.attempt) == (SHA, "main", "py311", 1)
    assert run.status == Run.Status.READY
    assert _buckets(run) == MIXED_BUCKETS
    assert (run.passed, run.failed, run.skipped, run.xfail) == (2, 1, 1, 1)
    assert run.exit_code == 1
    assert run.meta == {"python": "3.11.7", "branch": "main"}
    assert run.parsed_at is not None
    # The upload is kept as it came, gzip-compressed, and identified by its content.
    assert gzip.decompress(bytes(run.raw)) == MIXED
    assert run.raw_size == len(MIXED)
    assert run.content_sha256 == hashlib.sha256(MIXED).hexdigest()
    assert run.content_type == "application/json"


def test_extras_are_stored_with_the_result_of_a_tracked_test(upload, repository):
    tracked = ["tests/test_cart.py::test_discount", "tests/test_net.py::test_fetch"]
    tracked.append("tests/test_flaky.py::test_retry")
    for nodeid in tracked:
        FreezeFactory(repository=repository, nodeid=nodeid)
    upload(MIXED)
    results = {
        result.test.nodeid: result for result in TestResult.objects.select_related("test").all()
    }
    discount = results["tests/test_cart.py::test_discount"]
    assert (discount.duration, discount.signature) == (1.5, "ab12cd34")
    assert results["tests/test_net.py::test_fetch"].freeze == "FRZ-014"
    assert results["tests/test_flaky.py::test_retry"].duration is None


def test_uppercase_sha_is_stored_in_lowercase(upload):
    upload(MIXED, query={"sha": SHA.upper()})
    assert Run.objects.get().sha == SHA


@pytest.mark.django_db(transaction=True)
def test_answer_already_says_ready_when_tasks_run_in_process(api_client):
    repository = repository_create(slug="eager")
    _, token = token_create(repository=repository, scope=UploadToken.Scope.EVIDENCE)
    response = _post(api_client, token, MIXED)
    assert response.status_code == 202
    assert response.json()["status"] == "ready"
    assert response.json()["records"] == 5


def test_junit_upload_maps_testcases_to_buckets(upload):
    response = upload(JUNIT, content_type="application/xml")
    assert response.status_code == 202
    run = Run.objects.get()
    assert run.status == Run.Status.READY
    assert run.content_type == "application/xml"
    assert _buckets(run) == JUNIT_BUCKETS
    assert run.exit_code == 1


def test_text_xml_with_a_utf8_charset_is_accepted(upload):
    response = upload(JUNIT, content_type="text/xml; charset=UTF-8")
    assert response.status_code == 202
    assert Run.objects.get().status == Run.Status.READY


def test_gzip_upload_keeps_the_client_bytes_and_hashes_the_content(upload):
    sent = gzipped(MIXED)
    response = upload(sent, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 202
    run = Run.objects.get()
    assert bytes(run.raw) == sent
    assert run.raw_size == len(MIXED)
    assert run.content_sha256 == hashlib.sha256(MIXED).hexdigest()
    assert _buckets(run) == MIXED_BUCKETS


def test_the_body_is_streamed_not_loaded_under_djangos_form_limit(upload, settings):
    # request.body would refuse anything over DATA_UPLOAD_MAX_MEMORY_SIZE.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 64
    response = upload(MIXED)
    assert response.status_code == 202


# --- repeated uploads and attempts ----------------------------------------------------------


def test_repeating_an_upload_returns_the_stored_run_with_200(upload):
    first = upload(MIXED)
    again = upload(MIXED)
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["status"] == "ready"
    assert Run.objects.count() == 1


def test_the_same_content_gzipped_counts_as_the_same_upload(upload):
    first = upload(MIXED)
    again = upload(gzipped(MIXED), HTTP_CONTENT_ENCODING="gzip")
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]


def test_other_content_for_the_same_attempt_is_a_409_and_changes_nothing(upload):
    first = upload(MIXED)
    other = upload(evidence([record("tests/test_cart.py::test_total")]))
    assert other.status_code == 409
    error = _error(other)
    assert error["code"] == "conflict"
    assert str(first.json()["id"]) in error["message"]
    assert Run.objects.count() == 1
    assert _buckets(Run.objects.get()) == MIXED_BUCKETS


def test_a_new_attempt_is_a_new_run_and_the_latest_one_counts(upload, repository):
    first = upload(MIXED, query={"sha": SHA, "label": "py311", "attempt": 1})
    second = upload(
        evidence([record("tests/test_cart.py::test_total")]),
        query={"sha": SHA, "label": "py311", "attempt": 2},
    )
    assert (first.status_code, second.status_code) == (202, 202)
    latest = Run.objects.latest_attempt(repository=repository, sha=SHA, label="py311")
    assert latest.pk == second.json()["id"]
    assert latest.attempt == 2


def test_labels_tell_parallel_jobs_of_one_commit_apart(upload):
    upload(MIXED, query={"sha": SHA, "label": "py311"})
    other = upload(JUNIT, content_type="application/xml", query={"sha": SHA, "label": "py312"})
    assert other.status_code == 202
    assert Run.objects.count() == 2


@races_need_postgresql("concurrent uploads")
@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_uploads_store_one_run():
    repository = repository_create(slug="racing")
    _, token = token_create(repository=repository, scope=UploadToken.Scope.EVIDENCE)
    threads_count = 20

    def send() -> tuple[int, int]:
        response = _post(Client(), token, MIXED)
        return response.status_code, response.json()["id"]

    answers = at_once(*[send] * threads_count)

    run = Run.objects.get()
    assert {run_id for _, run_id in answers} == {run.pk}
    statuses = sorted(code for code, _ in answers)
    assert statuses.count(202) == 1
    assert statuses.count(200) == threads_count - 1
    assert run.status == Run.Status.READY
    assert _buckets(run) == MIXED_BUCKETS


# --- evidence that cannot be used: stored, then rejected with reasons -----------------------

REJECTED = {
    "malformed JSON": (b'{"exit": 0, "records": [}', "application/json", "invalid JSON"),
    "truncated JSON": (MIXED[: len(MIXED) // 2], "application/json", "truncated"),
    "wrong types": (
        b'{"exit": "0", "records": [{"nodeid": 7, "outcome": "passed"}]}',
        "application/json",
        "integer",
    ),
    "invalid UTF-8": (b'{"exit": 0, "records": [], "meta": {"x": "\xff\xfe"}}', None, "UTF-8"),
    "not an object": (b"[1, 2, 3]", "application/json", "JSON object"),
    "billion laughs": (BILLION_LAUGHS, "application/xml", "document type"),
    "over-long node id": (evidence([record("t.py::" + "x" * 5000)]), None, "longer than"),
    "NUL in a node id": (evidence([record("t.py::test_\x00nul")]), None, "NUL"),
    "lone surrogate in a node id": (
        b'{"exit": 0, "records": [{"nodeid": "t.py::\\ud800", "outcome": "passed"}]}',
        None,
        "Unicode",
    ),
    "NaN in meta": (b'{"exit": 0, "records": [], "meta": {"duration": NaN}}', None, "NaN"),
    "exit status out of range": (evidence([], exit=2**40), None, "range"),
}


@pytest.mark.parametrize("case", REJECTED.values(), ids=REJECTED.keys())
def test_unusable_evidence_is_rejected_with_reasons_and_no_results(upload, case):
    body, content_type, fragment = case
    response = upload(body, content_type=content_type or "application/json")
    assert response.status_code == 202
    run = Run.objects.get()
    assert run.status == Run.Status.REJECTED
    assert run.parsed_at is not None
    assert run.reasons
    assert all(set(reason) == {"path", "message"} for reason in run.reasons)
    assert any(fragment in reason["message"] for reason in run.reasons), run.reasons
    assert not RunOutcomes.objects.exists()
    assert not TestResult.objects.exists()
    assert not TestName.objects.exists()


def test_too_many_records_is_rejected(upload, settings):
    settings.FREEZEDEBT_MAX_RECORDS = 3
    upload(evidence([record(f"t.py::test_{n}") for n in range(4)]))
    run = Run.objects.get()
    assert run.status == Run.Status.REJECTED
    assert run.reasons == [
        {"path": "$.records", "message": "4 records exceed the limit of 3"},
    ]
    assert not TestName.objects.exists()


def test_rejected_run_is_readable_with_its_reasons(upload, api_client, evidence_token):
    upload(b'{"exit": 0, "records": [')
    run = Run.objects.get()
    response = api_client.get(f"{RUNS}/{run.pk}", **_bearer(evidence_token))
    assert response.json()["status"] == "rejected"
    assert response.json()["reasons"][0]["path"].startswith("line 1")


def test_at_most_50_reasons_are_kept(upload):
    upload(evidence([record(f"t.py::test_{n}", "exploded") for n in range(80)]))
    run = Run.objects.get()
    assert run.status == Run.Status.REJECTED
    assert len(run.reasons) == 50
    assert run.reasons[0]["path"] == "$.records[0].outcome"


# --- refused requests: 4xx, nothing stored --------------------------------------------------


def test_gzip_garbage_is_a_400(upload):
    response = upload(b"\x1f\x8b\x08\x00garbage-not-deflate", HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 400
    error = _error(response)
    assert error["code"] == "malformed"
    assert "gzip" in error["message"]
    _nothing_stored()


def test_plain_body_declared_gzip_is_a_400(upload):
    response = upload(MIXED, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 400
    _nothing_stored()


def test_truncated_gzip_is_a_400(upload):
    sent = gzipped(MIXED)
    response = upload(sent[: len(sent) - 12], HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 400
    assert "truncated" in _error(response)["message"]
    _nothing_stored()


def test_gzip_bomb_is_a_413_after_inflating_no_more_than_the_cap(upload, settings):
    settings.FREEZEDEBT_MAX_DECOMPRESSED_BYTES = 1 << 20
    bomb = gzip_bomb(256 << 20)
    assert len(bomb) < 1 << 20  # passes the compressed limit with room to spare

    tracemalloc.start()
    try:
        response = upload(bomb, HTTP_CONTENT_ENCODING="gzip")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert response.status_code == 413
    error = _error(response)
    assert error["code"] == "payload_too_large"
    assert "decompressed" in error["message"]
    # Refused while inflating: nowhere near the 256 MiB the bomb expands to was held.
    assert peak < 16 << 20
    _nothing_stored()


def test_body_over_the_upload_limit_is_a_413(upload, settings):
    settings.FREEZEDEBT_MAX_UPLOAD_BYTES = 100
    response = upload(MIXED)
    assert response.status_code == 413
    assert "upload limit" in _error(response)["message"]
    _nothing_stored()


def test_plain_body_over_the_decompressed_limit_is_a_413(upload, settings):
    settings.FREEZEDEBT_MAX_DECOMPRESSED_BYTES = 100
    response = upload(MIXED)
    assert response.status_code == 413
    _nothing_stored()


def test_empty_body_is_a_400(upload):
    response = upload(b"")
    assert response.status_code == 400
    assert "empty" in _error(response)["message"]
    _nothing_stored()


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/octet-stream"]
)
def test_other_content_types_are_a_415(upload, content_type):
    response = upload(MIXED, content_type=content_type)
    assert response.status_code == 415
    error = _error(response)
    assert error["code"] == "unsupported_media_type"
    assert "application/json" in error["message"]
    _nothing_stored()


def test_a_charset_other_than_utf8_is_a_415(upload):
    response = upload(MIXED, content_type="application/json; charset=latin-1")
    assert response.status_code == 415
    assert "UTF-8" in _error(response)["message"]
    _nothing_stored()


@pytest.mark.parametrize("encoding", ["br", "deflate", "gzip, gzip"])
def test_other_content_encodings_are_a_415(upload, encoding):
    response = upload(MIXED, HTTP_CONTENT_ENCODING=encoding)
    assert response.status_code == 415
    assert "Content-Encoding" in _error(response)["message"]
    _nothing_stored()


BAD_QUERIES = {
    "missing sha": ({}, "sha"),
    "short sha": ({"sha": "abc12"}, "sha"),
    "non-hex sha": ({"sha": "z" * 40}, "sha"),
    "over-long sha": ({"sha": "a" * 65}, "sha"),
    "attempt zero": ({"sha": SHA, "attempt": 0}, "attempt"),
    "attempt not a number": ({"sha": SHA, "attempt": "two"}, "attempt"),
    "attempt too large": ({"sha": SHA, "attempt": 2**31}, "attempt"),
    "label too long": ({"sha": SHA, "label": "x" * 101}, "label"),
    "branch too long": ({"sha": SHA, "branch": "b" * 256}, "branch"),
}


@pytest.mark.parametrize("case", BAD_QUERIES.values(), ids=BAD_QUERIES.keys())
def test_bad_query_parameters_are_a_400_naming_the_field(upload, case):
    query, field = case
    response = upload(MIXED, query=query)
    assert response.status_code == 400
    error = _error(response)
    assert error["code"] == "invalid"
    assert set(error["details"]) == {field}
    _nothing_stored()


# --- who may upload and read ----------------------------------------------------------------


def test_upload_without_a_token_is_a_401(api_client, repository):
    response = api_client.post(f"{RUNS}?sha={SHA}", MIXED, content_type="application/json")
    assert response.status_code == 401
    _nothing_stored()


def test_ledger_token_may_not_upload_runs(api_client, ledger_token):
    response = _post(api_client, ledger_token, MIXED)
    assert response.status_code == 403
    assert "evidence" in _error(response)["message"]
    _nothing_stored()


def test_logged_in_user_cannot_upload_without_a_token(api_client, staff):
    api_client.force_login(staff)
    response = api_client.post(f"{RUNS}?sha={SHA}", MIXED, content_type="application/json")
    # A session is no upload credential: the same answer as no credentials at all.
    assert response.status_code == 401
    assert _error(response)["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")
    _nothing_stored()


def test_uploads_are_throttled_per_token(upload, settings):
    settings.FREEZEDEBT_UPLOADS_PER_MINUTE = 2
    assert upload(MIXED).status_code == 202
    assert upload(MIXED).status_code == 200
    response = upload(MIXED)
    assert response.status_code == 429
    assert _error(response)["code"] == "throttled"


def test_run_reads_back_with_its_counts_for_a_token_of_its_repository(
    upload, api_client, evidence_token
):
    run_id = upload(MIXED, query={"sha": SHA, "branch": "main", "label": "py311"}).json()["id"]
    response = api_client.get(f"{RUNS}/{run_id}", **_bearer(evidence_token))
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == run_id
    assert body["status"] == "ready"
    assert body["url"] == f"/api/v1/runs/{run_id}"
    assert body["records"] == 5
    assert body["reasons"] == []
    assert (body["repository"], body["sha"], body["branch"], body["label"], body["attempt"]) == (
        "acme-shop",
        SHA,
        "main",
        "py311",
        1,
    )
    assert body["counts"] == {"passed": 2, "failed": 1, "skipped": 1, "xfail": 1}
    assert body["exit_code"] == 1
    assert body["meta"] == {"python": "3.11.7", "branch": "main"}
    assert body["size"] == len(MIXED)


def test_evidence_token_of_another_repository_gets_404(upload, api_client):
    run_id = upload(MIXED).json()["id"]
    elsewhere = repository_create(slug="elsewhere")
    _, foreign = token_create(repository=elsewhere, scope=UploadToken.Scope.EVIDENCE)
    response = api_client.get(f"{RUNS}/{run_id}", **_bearer(foreign))
    assert response.status_code == 404
    assert _error(response)["code"] == "not_found"


def test_ledger_token_may_not_read_runs(upload, api_client, ledger_token):
    run_id = upload(MIXED).json()["id"]
    assert api_client.get(f"{RUNS}/{run_id}", **_bearer(ledger_token)).status_code == 403


def test_staff_read_any_run_and_outsiders_none(upload, api_client, staff, outsider):
    run_id = upload(MIXED).json()["id"]
    api_client.force_login(staff)
    assert api_client.get(f"{RUNS}/{run_id}").status_code == 200
    api_client.force_login(outsider)
    assert api_client.get(f"{RUNS}/{run_id}").status_code == 404


def test_anonymous_read_is_a_401(upload, client):
    run_id = upload(MIXED).json()["id"]
    assert client.get(f"{RUNS}/{run_id}").status_code == 401


def test_unknown_run_is_a_404(api_client, evidence_token):
    assert api_client.get(f"{RUNS}/999999", **_bearer(evidence_token)).status_code == 404


# --- an accepted upload is never lost -------------------------------------------------------


def test_upload_with_the_broker_down_is_accepted_and_swept_later(upload, monkeypatch):
    def broker_down(*args, **kwargs):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    with monkeypatch.context() as patched:
        patched.setattr(ingest_run, "delay", broker_down)
        response = upload(MIXED)
    assert response.status_code == 202
    run = Run.objects.get()
    assert run.status == Run.Status.RECEIVED

    Run.objects.filter(pk=run.pk).update(created_at=run.created_at.replace(year=2020))
    assert runs_requeue_received() == [run.pk]
    run.refresh_from_db()
    assert run.status == Run.Status.READY
    assert _buckets(run) == MIXED_BUCKETS


# --- the stream reader ----------------------------------------------------------------------


class _Chunked(io.BytesIO):
    """A body with no declared length: only the reader's own count can stop it."""


def test_reader_stops_an_undeclared_body_at_the_upload_limit():
    with pytest.raises(uploads.UploadError) as raised:
        uploads.read_body(
            _Chunked(bytes(1 << 20)),
            coding=uploads.IDENTITY,
            max_bytes=1000,
            max_decompressed=1 << 30,
        )
    assert raised.value.kind == uploads.UploadError.TOO_LARGE


def test_reader_reads_concatenated_gzip_members():
    body = gzipped(b'{"exit": 0, ') + b"\x00\x00" + gzipped(b'"records": []}')
    received = uploads.read_body(
        io.BytesIO(body), coding=uploads.GZIP, max_bytes=1 << 20, max_decompressed=1 << 20
    )
    assert received.sha256 == hashlib.sha256(b'{"exit": 0, "records": []}').hexdigest()
    assert received.raw == body


def test_reader_refuses_bytes_after_the_gzip_stream():
    with pytest.raises(uploads.UploadError) as raised:
        uploads.read_body(
            io.BytesIO(gzipped(MIXED) + b"trailing"),
            coding=uploads.GZIP,
            max_bytes=1 << 20,
            max_decompressed=1 << 20,
        )
    assert raised.value.kind == uploads.UploadError.MALFORMED


def test_reader_inflates_highly_compressed_content_exactly():
    content = b"a" * (3 << 20) + b"end"
    received = uploads.read_body(
        io.BytesIO(gzipped(content)),
        coding=uploads.GZIP,
        max_bytes=1 << 20,
        max_decompressed=4 << 20,
    )
    assert received.size == len(content)
    assert received.sha256 == hashlib.sha256(content).hexdigest()


# --- the evidence's own sha ---------------------------------------------------------------

OTHER_SHA = "9" * 40


def plugin_evidence(meta_sha: str, *, meta_first: bool = True) -> bytes:
    """Evidence as the plugin writes it: meta before the records (or, meta_first=False, after)."""
    records = [record("tests/test_a.py::test_x")]
    meta = {"sha": meta_sha, "python": "3.12.1"}
    document = (
        {"format": "freezedebt-evidence/1", "exit": 0, "meta": meta, "records": records}
        if meta_first
        else {"exit": 0, "records": records, "meta": meta}
    )
    return json.dumps(document).encode()


@pytest.mark.parametrize("encode", [lambda body: body, gzipped], ids=["plain", "gzip"])
def test_evidence_made_at_another_commit_is_a_409_naming_both_shas(upload, encode):
    extra = {"HTTP_CONTENT_ENCODING": "gzip"} if encode is gzipped else {}
    response = upload(encode(plugin_evidence(OTHER_SHA)), **extra)
    assert response.status_code == 409
    body = _error(response)
    assert body["code"] == "conflict"
    assert OTHER_SHA in body["message"] and SHA in body["message"]
    assert body["details"] == {"sha": SHA, "meta_sha": OTHER_SHA}
    _nothing_stored()


def test_evidence_of_the_same_commit_abbreviated_either_way_is_accepted(upload):
    assert upload(plugin_evidence(SHA)).status_code == 202
    assert upload(plugin_evidence(SHA[:12]), query={"sha": SHA, "attempt": 2}).status_code == 202
    response = upload(plugin_evidence(SHA), query={"sha": SHA[:10], "attempt": 3})
    assert response.status_code == 202
    assert Run.objects.filter(status=Run.Status.READY).count() == 3


def test_evidence_whose_meta_follows_the_records_is_rejected_when_parsed(upload):
    response = upload(plugin_evidence(OTHER_SHA, meta_first=False))
    assert response.status_code == 202
    run = Run.objects.get()
    assert run.status == Run.Status.REJECTED
    assert run.reasons == [
        {
            "path": "$.meta.sha",
            "message": f"the evidence was made at commit {OTHER_SHA}, not at the run's sha {SHA}",
        }
    ]
    assert not TestResult.objects.exists()
