"""The server commands (upload, patch, ledger push) against a real local HTTP server.

The fake server answers from a script: for each (method, path) a list of answers, the last of
which repeats. Time is a fake clock, so polling and retry backoff never wait for real.
"""

from __future__ import annotations

import gzip
import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from freezedebt_ci.cli import main
from freezedebt_ci.commands import server as server_commands
from freezedebt_ci.commands.upload import GZIP_ABOVE
from freezedebt_ci.transport import (
    Client,
    TransportError,
    is_plain_http_to_remote,
    retry_after_seconds,
)

TOKEN = "fdk_abcd1234_s3cr3t-token-value-0123456789"
BASE = "1111111111111111111111111111111111111111"
HEAD = "2222222222222222222222222222222222222222"


# -- the fake server ---------------------------------------------------------------------------


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class FakeServer:
    def __init__(self) -> None:
        self.script: dict[tuple[str, str], list[Reply]] = {}
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urllib.parse.urlsplit(self.path)
                seen = Seen(
                    self.command,
                    parts.path,
                    dict(urllib.parse.parse_qsl(parts.query)),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                reply = fake.next_reply(seen)
                if reply.delay:
                    time.sleep(reply.delay)
                if isinstance(reply.body, bytes):
                    payload = reply.body
                    content_type = "text/html"
                else:
                    payload = json.dumps(reply.body).encode() if reply.body is not None else b""
                    content_type = "application/json"
                self.send_response(reply.status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # the client hung up on a slow answer; that is the point of the test

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def add(self, method: str, path: str, *replies: Reply) -> None:
        self.script[(method, path)] = list(replies)

    def next_reply(self, seen: Seen) -> Reply:
        with self.lock:
            self.seen.append(seen)
            replies = self.script.get((seen.method, seen.path))
            if not replies:
                error = {"code": "not_found", "message": "Not found.", "details": {}}
                return Reply(404, {"error": error})
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def requests(self, method: str | None = None, path: str | None = None) -> list[Seen]:
        return [
            s
            for s in self.seen
            if (method is None or s.method == method) and (path is None or s.path == path)
        ]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.httpd.shutdown()
        fake.httpd.server_close()


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.t += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(
        server_commands, "CLOCK", server_commands.Clock(now=fake.now, sleep=fake.sleep)
    )
    return fake


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FREEZEDEBT_URL", "FREEZEDEBT_TOKEN", "FREEZEDEBT_LABEL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def error(status: int, code: str, message: str, details: Any = None, **headers: str) -> Reply:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return Reply(status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def run_reply(status: int, run_status: str, **extra: Any) -> Reply:
    return Reply(
        status,
        {"id": 7, "status": run_status, "url": "/api/v1/runs/7", "reasons": [], **extra},
    )


def report(verdict: str = "block") -> dict[str, Any]:
    ready = verdict != "pending"
    problems = []
    if verdict == "block":
        problems = [
            {
                "code": "frozen-surface",
                "severity": "block",
                "message": "src/pricing/rounding.py is guarded only by frozen FRZ-014",
                "items": ["src/pricing/rounding.py"],
            }
        ]
    elif verdict == "pending":
        problems = [
            {
                "code": "base-missing",
                "severity": "block",
                "message": "no run of the base commit yet",
                "items": [BASE],
            }
        ]
    return {
        "format": "freezedebt-report/1",
        "status": "ready" if ready else "pending",
        "verdict": verdict,
        "today": "2026-11-30",
        "figures": {
            "base": {"passed": 412, "failed": 0, "skipped": 1, "xfail": 0},
            "head": {"passed": 414, "failed": 0, "skipped": 1, "xfail": 0},
            "net_executed_delta": 2,
            "earned": 2,
            "borrowed": 412,
        },
        "new_skips": [],
        "retired_skips": [],
        "lost": [],
        "new_xfails": [],
        "frozen_surface_hits": [
            {
                "freeze": "FRZ-014",
                "test": "tests/test_pricing.py::test_rounding_boundary",
                "paths": ["src/pricing/rounding.py"],
                "compensated": verdict != "block",
            }
        ],
        "expired_freezes": [],
        "per_file": [
            {
                "file": "tests/test_pricing.py",
                "base_passed": 10,
                "head_passed": 12,
                "delta": 2,
                "new_skips": 0,
                "retired_skips": 0,
                "lost": 0,
            }
        ],
        "problems": problems,
    }


def no_token_anywhere(*texts: str) -> None:
    for text in texts:
        assert TOKEN not in text
        assert "s3cr3t" not in text


EVIDENCE = {
    "exit": 0,
    "records": [
        {"nodeid": "tests/test_a.py::test_x", "when": "call", "outcome": "passed", "xfail": False}
    ],
}
JUNIT = (
    b'\xef\xbb\xbf  \n<?xml version="1.0"?><testsuite><testcase classname="t" name="x"/>'
    b"</testsuite>"
)


@pytest.fixture
def evidence(tmp_path: Path) -> Path:
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(EVIDENCE), encoding="utf-8")
    return path


def upload(server: FakeServer, path: Path, *extra: str) -> int:
    return main(["upload", "--url", server.url, "--token", TOKEN, "--sha", HEAD, *extra, str(path)])


# -- upload ------------------------------------------------------------------------------------


def test_upload_sends_the_evidence_and_polls_until_ready(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/runs", run_reply(202, "received"))
    server.add(
        "GET",
        "/api/v1/runs/7",
        run_reply(200, "received"),
        run_reply(200, "received"),
        run_reply(200, "ready", records=3),
    )
    code = upload(server, evidence, "--branch", "main", "--label", "py311", "--attempt", "2")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "run 7 ready (3 records)" in out
    [post] = server.requests("POST")
    assert post.query == {"sha": HEAD, "branch": "main", "label": "py311", "attempt": "2"}
    assert post.headers["authorization"] == f"Bearer {TOKEN}"
    assert post.headers["content-type"] == "application/json"
    assert "content-encoding" not in post.headers
    assert post.headers["user-agent"].startswith("freezedebt-ci/")
    assert post.body == evidence.read_bytes()
    gets = server.requests("GET")
    assert len(gets) == 3
    assert all(g.headers["authorization"] == f"Bearer {TOKEN}" for g in gets)
    assert len(clock.sleeps) == 3  # one pause before each poll, none after ready
    assert clock.sleeps[0] <= clock.sleeps[1] <= clock.sleeps[2] <= server_commands.POLL_MAX
    no_token_anywhere(out, err)


def test_upload_omits_query_options_not_given(
    server: FakeServer, clock: FakeClock, evidence: Path
) -> None:
    server.add("POST", "/api/v1/runs", run_reply(202, "ready"))
    assert upload(server, evidence) == 0
    assert server.requests("POST")[0].query == {"sha": HEAD}
    assert server.requests("GET") == []  # ready at once: nothing to poll


def test_upload_gzips_large_evidence(server: FakeServer, clock: FakeClock, tmp_path: Path) -> None:
    records = [
        {"nodeid": f"tests/test_big.py::test_{i}", "when": "call", "outcome": "passed"}
        for i in range(20000)
    ]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"exit": 0, "records": records}), encoding="utf-8")
    assert path.stat().st_size > GZIP_ABOVE
    server.add("POST", "/api/v1/runs", run_reply(202, "ready"))
    assert upload(server, path) == 0
    [post] = server.requests("POST")
    assert post.headers["content-encoding"] == "gzip"
    assert post.headers["content-type"] == "application/json"
    assert len(post.body) < path.stat().st_size
    assert gzip.decompress(post.body) == path.read_bytes()


def test_upload_sends_gzipped_junit_as_it_is(
    server: FakeServer, clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "junit.xml.gz"
    path.write_bytes(gzip.compress(JUNIT))
    server.add("POST", "/api/v1/runs", run_reply(202, "ready"))
    assert upload(server, path, "--label", "junit") == 0
    [post] = server.requests("POST")
    assert post.headers["content-encoding"] == "gzip"
    assert post.headers["content-type"] == "application/xml"
    assert post.body == path.read_bytes()


def test_upload_detects_plain_junit_by_content(
    server: FakeServer, clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "results.dat"  # the name says nothing; the first byte does
    path.write_bytes(JUNIT)
    server.add("POST", "/api/v1/runs", run_reply(202, "ready"))
    assert upload(server, path) == 0
    [post] = server.requests("POST")
    assert post.headers["content-type"] == "application/xml"
    assert "content-encoding" not in post.headers
    assert post.body == JUNIT


def test_upload_repeated_reports_the_existing_run(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/runs", run_reply(200, "ready", records=1))
    assert upload(server, evidence) == 0
    out = capsys.readouterr().out
    assert "already uploaded as run 7" in out
    assert "run 7 ready (1 record)" in out


def test_upload_rejected_prints_the_reasons_and_exits_2(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reasons = [
        {"path": "$.records[0].outcome", "message": "expected passed, failed or skipped"},
        {"path": "$.exit", "message": "expected an integer"},
    ]
    server.add("POST", "/api/v1/runs", run_reply(202, "received"))
    server.add("GET", "/api/v1/runs/7", run_reply(200, "rejected", reasons=reasons))
    assert upload(server, evidence) == 2
    err = capsys.readouterr().err
    assert "run 7 rejected" in err
    assert "$.records[0].outcome: expected passed, failed or skipped" in err
    assert "$.exit: expected an integer" in err


def test_upload_rejected_shows_at_most_fifty_reasons(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reasons = [{"path": f"$.records[{n}].outcome", "message": "bad"} for n in range(100)]
    server.add("POST", "/api/v1/runs", run_reply(202, "received"))
    server.add("GET", "/api/v1/runs/7", run_reply(200, "rejected", reasons=reasons))
    assert upload(server, evidence) == 2
    err = capsys.readouterr().err
    assert "$.records[49].outcome: bad" in err
    assert "$.records[50]" not in err


def test_upload_still_received_at_the_bound_exits_3(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/runs", run_reply(202, "received"))
    server.add("GET", "/api/v1/runs/7", run_reply(200, "received"))
    assert upload(server, evidence, "--wait", "10") == 3
    assert sum(clock.sleeps) == pytest.approx(10)
    assert "still being processed after 10 s" in capsys.readouterr().err


def test_upload_wait_0_does_not_poll(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/runs", run_reply(202, "received"))
    assert upload(server, evidence, "--wait", "0") == 0
    assert server.requests("GET") == []
    assert "not waiting" in capsys.readouterr().out


def test_upload_takes_url_and_token_from_the_environment(
    server: FakeServer, clock: FakeClock, evidence: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FREEZEDEBT_URL", server.url + "/")
    monkeypatch.setenv("FREEZEDEBT_TOKEN", TOKEN + "\n")  # as read from a file
    server.add("POST", "/api/v1/runs", run_reply(202, "ready"))
    assert main(["upload", "--sha", HEAD, str(evidence)]) == 0
    assert server.requests("POST")[0].headers["authorization"] == f"Bearer {TOKEN}"


def test_upload_under_a_path_prefix_follows_the_servers_urls(
    server: FakeServer, clock: FakeClock, evidence: Path
) -> None:
    server.add(
        "POST",
        "/fd/api/v1/runs",
        Reply(202, {"id": 7, "status": "received", "url": "/fd/api/v1/runs/7"}),
    )
    server.add("GET", "/fd/api/v1/runs/7", run_reply(200, "ready"))
    code = main(
        ["upload", "--url", server.url + "/fd", "--token", TOKEN, "--sha", HEAD, str(evidence)]
    )
    assert code == 0
    assert [s.path for s in server.seen] == ["/fd/api/v1/runs", "/fd/api/v1/runs/7"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--url", "http://127.0.0.1:9"], "no token: pass --token or set FREEZEDEBT_TOKEN"),
        (["--token", TOKEN], "no server address: pass --url or set FREEZEDEBT_URL"),
        (["--url", "ftp://example.com", "--token", TOKEN], "http(s)://host"),
        (["--url", "http://127.0.0.1:9", "--token", "fdk_a b"], "token contains spaces"),
    ],
)
def test_upload_usage_errors_exit_2_before_any_request(
    argv: list[str], message: str, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["upload", "--sha", HEAD, *argv, str(evidence)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "fdk_a b" not in err


def test_upload_rejects_a_bad_sha_and_an_empty_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    with pytest.raises(SystemExit) as exit_info:
        main(["upload", "--url", "http://127.0.0.1:9", "--token", TOKEN, "--sha", "", "x.json"])
    assert exit_info.value.code == 2
    code = main(
        ["upload", "--url", "http://127.0.0.1:9", "--token", TOKEN, "--sha", HEAD, str(empty)]
    )
    assert code == 2
    assert "is empty" in capsys.readouterr().err


# -- transport: retries and errors -------------------------------------------------------------


def test_retries_503_then_succeeds(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add(
        "POST",
        "/api/v1/runs",
        error(503, "unavailable", "The service cannot answer right now; retry later."),
        Reply(502, b"<html>bad gateway</html>"),
        run_reply(202, "ready"),
    )
    assert upload(server, evidence) == 0, capsys.readouterr().err
    posts = server.requests("POST")
    assert len(posts) == 3
    assert all(p.body == evidence.read_bytes() for p in posts)
    assert len(clock.sleeps) == 2
    assert 0.25 <= clock.sleeps[0] < 0.5 <= clock.sleeps[1] < 1.0  # backoff with jitter


def test_429_honours_retry_after(server: FakeServer, clock: FakeClock, evidence: Path) -> None:
    server.add(
        "POST",
        "/api/v1/runs",
        error(429, "throttled", "Too many requests; retry in 7 s.", Retry_After="7"),
        run_reply(202, "ready"),
    )
    assert upload(server, evidence) == 0
    assert len(server.requests("POST")) == 2
    assert clock.sleeps == [7.0]


def test_gives_up_after_five_tries(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/runs", error(503, "unavailable", "Down for maintenance."))
    assert upload(server, evidence) == 2
    assert len(server.requests("POST")) == 5
    assert len(clock.sleeps) == 4
    assert clock.sleeps == sorted(clock.sleeps)
    err = capsys.readouterr().err
    assert "server answered 503 (unavailable): Down for maintenance." in err
    assert "gave up after 5 tries" in err


@pytest.mark.parametrize(
    ("status", "code"), [(400, "malformed"), (401, "not_authenticated"), (409, "conflict")]
)
def test_client_errors_are_not_retried(
    status: int,
    code: str,
    server: FakeServer,
    clock: FakeClock,
    evidence: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    details = {"sha": ["Enter a valid commit sha."]} if status == 400 else {}
    server.add("POST", "/api/v1/runs", error(status, code, f"refused with {code}", details))
    assert upload(server, evidence) == 2
    assert len(server.requests("POST")) == 1
    assert clock.sleeps == []
    out, err = capsys.readouterr()
    assert f"server answered {status} ({code}): refused with {code}" in err
    if status == 400:
        assert "sha: Enter a valid commit sha." in err
    if status == 401:
        assert "check the token" in err
    no_token_anywhere(out, err)


def test_server_error_without_json_is_reported_not_retried(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/runs", Reply(500, b"<h1>Server Error</h1>"))
    assert upload(server, evidence) == 2
    assert len(server.requests("POST")) == 1
    assert "server answered 500 (http-500): Internal Server Error" in capsys.readouterr().err


def test_redirects_are_not_followed(
    server: FakeServer, clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/runs", Reply(302, None, {"Location": "http://evil.example/"}))
    assert upload(server, evidence) == 2
    assert len(server.seen) == 1
    assert "redirects" in capsys.readouterr().err


def test_a_refused_connection_is_retried_then_reported(
    clock: FakeClock, evidence: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = main(
        [
            "upload",
            "--url",
            f"http://127.0.0.1:{port}",
            "--token",
            TOKEN,
            "--sha",
            HEAD,
            str(evidence),
        ]
    )
    assert code == 2
    assert len(clock.sleeps) == 4
    err = capsys.readouterr().err
    assert f"cannot reach http://127.0.0.1:{port}" in err
    no_token_anywhere(err)


def test_a_slow_answer_times_out_and_is_retried(
    server: FakeServer, clock: FakeClock, evidence: Path
) -> None:
    server.add(
        "POST",
        "/api/v1/runs",
        Reply(202, {"id": 7, "status": "ready"}, delay=1.0),
        run_reply(202, "ready"),
    )
    assert upload(server, evidence, "--timeout", "0.2") == 0
    assert len(server.requests("POST")) == 2


def test_client_unit_behaviour() -> None:
    sleeps: list[float] = []
    client = Client("https://fd.example.com/base/", TOKEN, sleep=sleeps.append)
    assert TOKEN not in repr(client)
    assert client.resolve("/api/v1/runs/3") == "https://fd.example.com/base/api/v1/runs/3"
    assert client.resolve("/base/api/v1/runs/3") == "https://fd.example.com/base/api/v1/runs/3"
    assert client.resolve("https://fd.example.com/base/x") == "https://fd.example.com/base/x"
    with pytest.raises(TransportError, match="not sending the token"):
        client.resolve("https://elsewhere.example.com/api/v1/runs/3")
    assert is_plain_http_to_remote("http://fd.example.com")
    assert not is_plain_http_to_remote("http://127.0.0.1:8000")
    assert not is_plain_http_to_remote("https://fd.example.com")
    assert retry_after_seconds("12") == 12.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


# -- patch -------------------------------------------------------------------------------------


def patch_reply(status: int = 201, patch_status: str = "pending") -> Reply:
    return Reply(
        status,
        {
            "id": 17,
            "report_url": "/api/v1/patches/17/report",
            "page_url": "/r/shop/patches/17/",
            "status": patch_status,
        },
    )


def patch(server: FakeServer, *extra: str) -> int:
    return main(
        [
            "patch",
            "--url",
            server.url,
            "--token",
            TOKEN,
            "--ref",
            "PR-123",
            "--base-sha",
            BASE,
            "--head-sha",
            HEAD,
            *extra,
        ]
    )


CHANGED = "M\tsrc/pricing/rounding.py\nR087\tsrc/old.py\tsrc/new.py\nA\ttests/test_new.py\n"


@pytest.fixture
def changed(tmp_path: Path) -> Path:
    path = tmp_path / "changed.txt"
    path.write_text(CHANGED, encoding="utf-8")
    return path


def test_patch_declares_waits_and_blocks(
    server: FakeServer,
    clock: FakeClock,
    changed: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    analysis = tmp_path / "analysis.json"
    analysis.write_text(json.dumps({"format": "freezedebt-analysis/1", "files": []}))
    summary = tmp_path / "summary.md"
    server.add("POST", "/api/v1/patches", patch_reply())
    server.add(
        "GET",
        "/api/v1/patches/17/report",
        Reply(200, report("pending")),
        Reply(200, report("block")),
    )
    code = patch(
        server,
        "--changed",
        str(changed),
        "--analysis",
        str(analysis),
        "--title",
        "Round half-even",
        "--pr-url",
        "https://git.example.com/shop/pull/123",
        "--author",
        "ada",
        "--summary",
        str(summary),
    )
    out, err = capsys.readouterr()
    assert code == 1, err
    [post] = server.requests("POST")
    assert post.headers["content-type"] == "application/json"
    assert post.headers["authorization"] == f"Bearer {TOKEN}"
    assert post.json() == {
        "ref": "PR-123",
        "base_sha": BASE,
        "head_sha": HEAD,
        "changed": CHANGED.splitlines(),
        "title": "Round half-even",
        "url": "https://git.example.com/shop/pull/123",
        "author": "ada",
        "analysis": {"format": "freezedebt-analysis/1", "files": []},
    }
    assert len(server.requests("GET")) == 2
    assert "verdict: BLOCK" in out
    assert "frozen-surface" in out
    text = summary.read_text(encoding="utf-8")
    assert "**block**" in text
    assert "FRZ-014" in text
    assert f"[The report on Freeze Debt]({server.url}/r/shop/patches/17/)" in text
    no_token_anywhere(out, err, text)


def test_patch_pass_with_json_prints_the_report(
    server: FakeServer, clock: FakeClock, changed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/patches", patch_reply(200, "ready"))
    server.add("GET", "/api/v1/patches/17/report", Reply(200, report("pass")))
    assert patch(server, "--changed", str(changed), "--json") == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == report("pass")
    assert "already declared" in err
    assert clock.sleeps == []
    assert "title" not in server.requests("POST")[0].json()


def test_patch_still_pending_at_the_bound_exits_3(
    server: FakeServer,
    clock: FakeClock,
    changed: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary = tmp_path / "summary.md"
    server.add("POST", "/api/v1/patches", patch_reply())
    server.add("GET", "/api/v1/patches/17/report", Reply(200, report("pending")))
    assert patch(server, "--changed", str(changed), "--wait", "30", "--summary", str(summary)) == 3
    assert sum(clock.sleeps) == pytest.approx(30)
    assert max(clock.sleeps) <= server_commands.POLL_MAX
    out, err = capsys.readouterr()
    assert "verdict: PENDING" in out
    assert "still pending after 30 s" in err
    assert "pending" in summary.read_text(encoding="utf-8")


def test_patch_sends_its_label(server: FakeServer, clock: FakeClock, changed: Path) -> None:
    server.add("POST", "/api/v1/patches", patch_reply(201, "ready"))
    server.add("GET", "/api/v1/patches/17/report", Reply(200, report("pass")))
    assert patch(server, "--changed", str(changed), "--label", "py311") == 0
    assert server.requests("POST")[0].json()["label"] == "py311"


def test_upload_and_patch_read_one_label_variable(
    server: FakeServer,
    clock: FakeClock,
    changed: Path,
    evidence: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FREEZEDEBT_LABEL", "py312")
    server.add("POST", "/api/v1/runs", run_reply(202, "ready"))
    server.add("POST", "/api/v1/patches", patch_reply(201, "ready"))
    server.add("GET", "/api/v1/patches/17/report", Reply(200, report("pass")))
    assert upload(server, evidence) == 0
    assert patch(server, "--changed", str(changed)) == 0
    assert server.requests("POST", "/api/v1/runs")[0].query["label"] == "py312"
    assert server.requests("POST", "/api/v1/patches")[0].json()["label"] == "py312"
    # the option wins over the variable
    assert patch(server, "--changed", str(changed), "--label", "py311") == 0
    assert server.requests("POST", "/api/v1/patches")[1].json()["label"] == "py311"


def test_patch_pending_says_why_in_the_servers_words(
    server: FakeServer,
    clock: FakeClock,
    changed: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    why = (
        "no ready run of the base commit 111111111111 with no label yet; "
        "base runs exist with 'py311'"
    )
    summary = tmp_path / "summary.md"
    server.add("POST", "/api/v1/patches", patch_reply())
    server.add(
        "GET", "/api/v1/patches/17/report", Reply(200, {**report("pending"), "pending_reason": why})
    )
    assert patch(server, "--changed", str(changed), "--wait", "5", "--summary", str(summary)) == 3
    out, err = capsys.readouterr()
    assert f"still pending after 5 s ({why})" in err
    assert f"pending            : {why}" in out
    assert f"The report is pending: {why}." in summary.read_text(encoding="utf-8")


def test_patch_link_and_url_are_different_things(
    server: FakeServer, clock: FakeClock, changed: Path
) -> None:
    server.add("POST", "/api/v1/patches", patch_reply(201, "ready"))
    server.add("GET", "/api/v1/patches/17/report", Reply(200, report("pass")))
    assert patch(server, "--changed", str(changed), "--link", "https://pr.example/1") == 0
    assert server.requests("POST")[0].json()["url"] == "https://pr.example/1"


def test_patch_invalid_changed_file_exits_2_without_a_request(
    server: FakeServer, clock: FakeClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "changed.txt"
    bad.write_text("M\tsrc/ok.py\nX\tsrc/what.py\nM\t../outside.py\n", encoding="utf-8")
    assert patch(server, "--changed", str(bad)) == 2
    err = capsys.readouterr().err
    assert "line 2: unknown status 'X'" in err
    assert "line 3" in err
    assert server.seen == []


def test_patch_analysis_must_be_a_json_object(
    server: FakeServer, clock: FakeClock, changed: Path, tmp_path: Path
) -> None:
    analysis = tmp_path / "analysis.json"
    analysis.write_text("[1, 2]")
    assert patch(server, "--changed", str(changed), "--analysis", str(analysis)) == 2
    assert server.seen == []


def test_patch_conflict_is_reported(
    server: FakeServer, clock: FakeClock, changed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add(
        "POST", "/api/v1/patches", error(409, "conflict", "PR-123 was declared with other shas.")
    )
    assert patch(server, "--changed", str(changed)) == 2
    assert len(server.seen) == 1
    assert "409 (conflict): PR-123 was declared with other shas." in capsys.readouterr().err


def test_patch_bad_report_answer_exits_2(
    server: FakeServer, clock: FakeClock, changed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.add("POST", "/api/v1/patches", patch_reply())
    server.add("GET", "/api/v1/patches/17/report", Reply(200, {"hello": "world"}))
    assert patch(server, "--changed", str(changed)) == 2
    assert "expected a report" in capsys.readouterr().err


def _git(repo: Path, *args: str) -> str:
    git = shutil.which("git")
    assert git is not None
    done = subprocess.run(
        [git, "-c", "user.name=Test", "-c", "user.email=test@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "src" / "rounding.py").write_text("def round_half(x):\n    return round(x)\n")
    (root / "src" / "old_name.py").write_text("".join(f"line {i}\n" for i in range(40)))
    (root / "src" / "gone.py").write_text("x = 1\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base")
    base = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", "-b", "feature")
    (root / "src" / "rounding.py").write_text("def round_half(x):\n    return round(x, 2)\n")
    _git(root, "mv", "src/old_name.py", "src/new_name.py")
    _git(root, "rm", "-q", "src/gone.py")
    (root / "tests" / "test_café.py").write_text("def test_x():\n    pass\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "head")
    head = _git(root, "rev-parse", "HEAD")
    monkeypatch.chdir(root)
    return root, base, head


def test_patch_computes_changed_paths_with_git(
    server: FakeServer, clock: FakeClock, repo: tuple[Path, str, str]
) -> None:
    _, base, head = repo
    server.add("POST", "/api/v1/patches", patch_reply(201, "ready"))
    server.add("GET", "/api/v1/patches/17/report", Reply(200, report("pass")))
    code = main(
        [
            "patch",
            "--url",
            server.url,
            "--token",
            TOKEN,
            "--ref",
            "PR-9",
            "--base-sha",
            base,
            "--head-sha",
            head,
        ]
    )
    assert code == 0
    sent = server.requests("POST")[0].json()
    assert (sent["base_sha"], sent["head_sha"]) == (base, head)
    assert sorted(sent["changed"]) == sorted(
        [
            "D\tsrc/gone.py",
            "M\tsrc/rounding.py",
            "R100\tsrc/old_name.py\tsrc/new_name.py",
            'A\t"tests/test_caf\\303\\251.py"',
        ]
    )


def test_patch_says_clearly_when_git_fails(
    server: FakeServer,
    clock: FakeClock,
    repo: tuple[Path, str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, base, _ = repo
    missing = "abcdef0" * 5 + "abcde"
    code = main(
        [
            "patch",
            "--url",
            server.url,
            "--token",
            TOKEN,
            "--ref",
            "PR-9",
            "--base-sha",
            base,
            "--head-sha",
            missing,
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert f"git diff --name-status -M {base}...{missing} failed" in err
    assert "--changed FILE" in err
    assert server.seen == []


# -- ledger push -------------------------------------------------------------------------------

LEDGER_TOML = """\
[[freeze]]
id = "FRZ-014"
test = "tests/test_pricing.py::test_rounding_boundary"
covers = ["src/pricing/rounding.py"]
owner = "team-pricing"
opened = 2026-11-20
expires = 2026-12-01
reason = "timeout talking to the rates service"
"""


def test_ledger_push_sends_toml(
    server: FakeServer, clock: FakeClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "freeze_ledger.toml"
    path.write_text(LEDGER_TOML, encoding="utf-8")
    events = [
        {"kind": "opened", "freeze": "FRZ-014", "silent": False, "chain": 0},
        {"kind": "renewed", "freeze": "FRZ-009", "silent": True, "chain": 2},
    ]
    server.add("PUT", "/api/v1/ledger", Reply(201, {"version": 4, "events": events}))
    code = main(["ledger", "push", str(path), "--sha", HEAD, "--url", server.url, "--token", TOKEN])
    out, err = capsys.readouterr()
    assert code == 0, err
    [put] = server.seen
    assert put.query == {"sha": HEAD}
    assert put.headers["content-type"] == "application/toml"
    assert put.headers["authorization"] == f"Bearer {TOKEN}"
    assert put.body == path.read_bytes()
    assert "ledger version 4 stored (2 events)" in out
    assert "opened FRZ-014" in out
    assert "renewed FRZ-009 (silent renewal" in out


def test_ledger_push_prints_every_invalid_and_expired_freeze(
    server: FakeServer, clock: FakeClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "freeze_ledger.toml"
    path.write_text(LEDGER_TOML, encoding="utf-8")
    answer = {
        "version": 5,
        "events": [],
        "invalid": [
            {"freeze": "FRZ-014", "problems": ["expires before it was opened"]},
            {"freeze": "FRZ-020", "problems": ["missing required field 'reason'", "x"]},
        ],
        "expired": [{"freeze": "FRZ-014", "expires": "2025-12-01"}],
    }
    server.add("PUT", "/api/v1/ledger", Reply(201, answer))
    code = main(["ledger", "push", str(path), "--sha", HEAD, "--url", server.url, "--token", TOKEN])
    out, err = capsys.readouterr()
    assert code == 0, err  # stored: the default branch's ledger is the truth
    assert out.splitlines()[1:] == [
        "invalid freeze FRZ-014: expires before it was opened",
        "invalid freeze FRZ-020: missing required field 'reason'; x",
        "expired freeze FRZ-014: expired on 2025-12-01",
    ]


def test_ledger_push_json_unchanged(
    server: FakeServer, clock: FakeClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "freeze_ledger.json"
    path.write_text(json.dumps([{"id": "FRZ-1"}]), encoding="utf-8")
    server.add("PUT", "/api/v1/ledger", Reply(200, {"version": 4, "events": []}))
    assert (
        main(["ledger", "push", str(path), "--sha", HEAD, "--url", server.url, "--token", TOKEN])
        == 0
    )
    assert server.seen[0].headers["content-type"] == "application/json"
    assert "ledger unchanged" in capsys.readouterr().out


def test_ledger_push_with_an_evidence_token_is_refused(
    server: FakeServer, clock: FakeClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "freeze_ledger.toml"
    path.write_text(LEDGER_TOML, encoding="utf-8")
    server.add(
        "PUT", "/api/v1/ledger", error(403, "permission_denied", "This token lacks scope ledger.")
    )
    assert (
        main(["ledger", "push", str(path), "--sha", HEAD, "--url", server.url, "--token", TOKEN])
        == 2
    )
    assert len(server.seen) == 1
    err = capsys.readouterr().err
    assert "403 (permission_denied)" in err
    assert "ledger-scoped token" in err
    no_token_anywhere(err)


def test_every_command_shows_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["upload", "--help"], ["patch", "--help"], ["ledger", "push", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        assert "example" in out
        assert "freezedebt-ci " + argv[0] in out
    with pytest.raises(SystemExit):
        main(["patch", "--help"])
    assert "--link URL, --pr-url URL" in capsys.readouterr().out


def test_patch_analyze_runs_the_analysis_of_base_and_head_and_sends_it(
    server: FakeServer, clock: FakeClock, repo: tuple[Path, str, str]
) -> None:
    _, base, head = repo
    server.add("POST", "/api/v1/patches", patch_reply(201, "ready"))
    server.add("GET", "/api/v1/patches/17/report", Reply(200, report("pass")))
    code = main(
        [
            *("patch", "--url", server.url, "--token", TOKEN, "--ref", "PR-9"),
            *("--base-sha", base, "--head-sha", head, "--analyze"),
        ]
    )
    assert code == 0
    analysis = server.requests("POST")[0].json()["analysis"]
    assert analysis["format"] == "freezedebt-analysis/1"
    assert analysis["head"] == head
    assert "src/rounding.py" in {f["path"] for f in analysis["files"]}


def test_patch_analyze_and_analysis_exclude_each_other(
    server: FakeServer, clock: FakeClock, changed: Path, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exc:
        patch(server, "--changed", str(changed), "--analysis", "a.json", "--analyze")
    assert exc.value.code == 2
    assert server.seen == []


def test_patch_analysis_of_another_format_exits_2_without_a_request(
    server: FakeServer, clock: FakeClock, changed: Path, tmp_path: Path
) -> None:
    analysis = tmp_path / "analysis.json"
    analysis.write_text(json.dumps({"format": "freezedebt-report/1"}))
    assert patch(server, "--changed", str(changed), "--analysis", str(analysis)) == 2
    assert server.seen == []


def test_ledger_push_also_sends_the_fixture_lock_and_oracle_map_as_their_bytes(
    server: FakeServer,
    clock: FakeClock,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("freeze_ledger.toml").write_text(LEDGER_TOML, encoding="utf-8")
    Path("fixtures.lock").write_bytes(b"# freezedebt-fixture-lock/1\r\n")
    Path("oracle_map.json").write_text('{"features": {}}', encoding="utf-8")
    server.add("PUT", "/api/v1/ledger", Reply(201, {"version": 4, "events": []}))
    server.add(
        "PUT", "/api/v1/governance/fixture-lock", Reply(201, {"version": 5, "sha256": "ab" * 32})
    )
    server.add(
        "PUT", "/api/v1/governance/oracle-map", Reply(200, {"version": 6, "sha256": "cd" * 32})
    )
    code = main(
        [
            *("ledger", "push", "freeze_ledger.toml", "--sha", HEAD),
            *("--fixture-lock", "fixtures.lock", "--oracle-map", "oracle_map.json"),
            *("--url", server.url, "--token", TOKEN),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    ledger, lock, oracle = server.seen
    assert ledger.query == {"sha": HEAD}
    assert lock.query == {"sha": HEAD, "path": "fixtures.lock"}
    assert lock.body == b"# freezedebt-fixture-lock/1\r\n"  # as is: its sha256 is compared
    assert oracle.query == {"sha": HEAD, "path": "oracle_map.json"}
    assert "fixture-lock stored: version 5" in out
    assert "oracle-map unchanged: version 6" in out


# -- ways in and back --------------------------------------------------------------------------


def test_patch_output_and_summary_link_to_the_report_page(
    server: FakeServer,
    clock: FakeClock,
    changed: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    declared = {
        "id": 17,
        "report_url": "/api/v1/patches/17/report",
        "page_url": "/r/shop/patches/17/",
        "status": "ready",
    }
    server.add("POST", "/api/v1/patches", Reply(201, declared))
    server.add("GET", "/api/v1/patches/17/report", Reply(200, report("block")))
    summary = tmp_path / "summary.md"
    assert patch(server, "--changed", str(changed), "--summary", str(summary)) == 1
    out, err = capsys.readouterr()
    page = f"{server.url}/r/shop/patches/17/"
    assert f"report page        : {page}" in out
    assert f"declared as #17: {page}" in err
    assert f"[The report on Freeze Debt]({page})" in summary.read_text(encoding="utf-8")
    # with --json, stdout is the report alone; the link goes to stderr
    assert patch(server, "--changed", str(changed), "--json") == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == report("block")
    assert page in err


@pytest.mark.parametrize(
    ("command", "scope"),
    [("upload", "--scope evidence"), ("ledger", "--scope ledger")],
)
def test_a_wrong_scope_names_the_command_that_makes_the_right_token(
    server: FakeServer,
    clock: FakeClock,
    evidence: Path,
    command: str,
    scope: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    refused = error(403, "permission_denied", "This token has the 'x' scope.")
    server.add("POST", "/api/v1/runs", refused)
    server.add("PUT", "/api/v1/ledger", refused)
    if command == "upload":
        assert upload(server, evidence) == 2
    else:
        evidence.write_text(LEDGER_TOML, encoding="utf-8")
        args = ["ledger", "push", str(evidence), "--sha", HEAD, "--url", server.url]
        assert main([*args, "--token", TOKEN]) == 2
    err = capsys.readouterr().err
    assert f"python manage.py create_token SLUG {scope}" in err


@pytest.mark.parametrize("status", [200, 404, 405])
def test_a_url_with_a_page_path_says_so_instead_of_printing_html(
    server: FakeServer,
    clock: FakeClock,
    evidence: Path,
    status: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    html = b"<!DOCTYPE html><html><head><title>Overview</title></head><body>...</body></html>"
    server.add("POST", "/dashboard/api/v1/runs", Reply(status, html))
    url = server.url + "/dashboard/"
    code = main(["upload", "--url", url, "--token", TOKEN, "--sha", HEAD, str(evidence)])
    assert code == 2
    err = capsys.readouterr().err
    assert "answered" in err and "with an HTML page, not the Freeze Debt API" in err
    assert f"/dashboard looks like the path of a page or of the API: try --url {server.url}" in err
    assert "<title>" not in err
