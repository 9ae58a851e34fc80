"""Commands that talk to a Freeze Debt server: ``upload``, ``patch`` and ``ledger push``.

Results go to standard output, progress and errors to standard error (so ``patch --json``
prints nothing but the report). Exit codes are those of :mod:`freezedebt_ci.cli`: 0 pass or
done, 1 block, 2 usage, input, rejected or transport error, 3 still pending when ``--wait``
ran out.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .analysis import FORMAT as ANALYSIS_FORMAT
from .changes import parse_name_status, read_name_status
from .cli import EXIT_ERROR, EXIT_PASS, EXIT_PENDING, UsageError, emit_report
from .compression import is_gzip, maybe_gunzip
from .errors import InputError
from .transport import (
    Answer,
    Client,
    TransportError,
    check_base_url,
    check_token,
    detail_lines,
    is_plain_http_to_remote,
)

ENV_URL = "FREEZEDEBT_URL"
ENV_TOKEN = "FREEZEDEBT_TOKEN"  # noqa: S105 - a variable name, not a secret
#: The job label ``upload`` and ``patch`` both use when ``--label`` is not given.
ENV_LABEL = "FREEZEDEBT_LABEL"
#: Evidence larger than this is gzipped before it is sent.
GZIP_ABOVE = 1 << 20
#: Polling starts this often and slows down to at most POLL_MAX seconds between requests.
POLL_FIRST, POLL_MAX = 1.0, 5.0
_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
_T = TypeVar("_T")


@dataclass
class Clock:
    """Time as the commands see it; tests swap :data:`CLOCK` for one that does not wait."""

    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


CLOCK = Clock()


# -- argument types ----------------------------------------------------------------------------


def _sha(value: str) -> str:
    if not _SHA.match(value):
        raise argparse.ArgumentTypeError(
            f"expected a commit sha (7 to 64 hex digits), got {value!r}"
        )
    return value


def _attempt(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1, got {value!r}")
    return number


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not (0 <= seconds < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 or more), got {value!r}")
    return seconds


def _nonempty(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("expected a non-empty value")
    return value.strip()


def _label(args: argparse.Namespace) -> str | None:
    """``--label``, else ``FREEZEDEBT_LABEL``, else none: one variable set for a CI job gives
    its upload and its patch the same label."""
    if args.label:
        return str(args.label)
    value = os.environ.get(ENV_LABEL, "").strip()
    return value or None


# -- shared plumbing ---------------------------------------------------------------------------


def _client(args: argparse.Namespace) -> Client:
    """A client for ``--url``/``--token`` (or their environment variables)."""
    url = args.url or os.environ.get(ENV_URL, "")
    token = args.token or os.environ.get(ENV_TOKEN, "")
    if not url.strip():
        raise UsageError(f"no server address: pass --url or set {ENV_URL}")
    if not token.strip():
        raise UsageError(f"no token: pass --token or set {ENV_TOKEN}")
    try:
        url = check_base_url(url)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        token = check_token(token)
    except ValueError as exc:  # the message never quotes the token
        raise UsageError(str(exc)) from None
    if is_plain_http_to_remote(url):
        print(
            f"freezedebt-ci: warning: the token goes unencrypted to {url}; use https",
            file=sys.stderr,
        )
    return Client(url, token, timeout=args.timeout, sleep=lambda s: CLOCK.sleep(s))


#: What a 403 (a token of the wrong scope) means for each command.
SCOPE_HINTS = {
    "evidence": "upload and patch take an evidence-scoped token "
    "(on the server: python manage.py create_token SLUG --scope evidence)",
    "ledger": "ledger push takes a ledger-scoped token, for the default branch's CI only "
    "(on the server: python manage.py create_token SLUG --scope ledger)",
}


def _guarded(
    handler: Callable[[argparse.Namespace], int], *, scope: str | None = None
) -> Callable[[argparse.Namespace], int]:
    """Run a command, turning a transport failure into a message on stderr and exit 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except TransportError as exc:
            _print_error(exc, scope=scope)
            return EXIT_ERROR

    return run


# Error details and rejection reasons printed at most (the server keeps up to 100 reasons).
MAX_SHOWN_LINES = 50


def _print_error(exc: TransportError, *, scope: str | None = None) -> None:
    print(f"freezedebt-ci: {exc}", file=sys.stderr)
    for line in exc.detail_lines()[:MAX_SHOWN_LINES]:
        print(f"  {line}", file=sys.stderr)
    hint = {
        401: f"check the token (--token or {ENV_TOKEN})",
        403: "the token lacks the scope this needs"
        + (f": {SCOPE_HINTS[scope]}" if scope in SCOPE_HINTS else ""),
        413: "the body is larger than the server accepts",
    }.get(exc.status or 0)
    if hint:
        print(f"freezedebt-ci: {hint}", file=sys.stderr)


def _read_bytes(path: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError.single(path, "", f"cannot be read ({exc.strerror})") from None
    if not data or (len(data) <= 4096 and not data.strip()):
        raise InputError.single(path, "", "is empty")
    return data


def _object(answer: Answer, what: str, *keys: str) -> dict[str, Any]:
    """The answer as a JSON object holding ``keys``; a bad-response error otherwise."""
    data = answer.data
    if not isinstance(data, dict) or any(key not in data for key in keys):
        raise TransportError(
            answer.status,
            "bad-response",
            f"expected {what} with {', '.join(keys)}, got {json.dumps(data)[:200]}",
        )
    return data


def _poll(first: _T, fetch: Callable[[], _T], done: Callable[[_T], bool], wait: float) -> _T:
    """Fetch again until ``done`` or ``wait`` seconds passed; the last value either way."""
    deadline = CLOCK.now() + wait
    interval = POLL_FIRST
    current = first
    while not done(current):
        remaining = deadline - CLOCK.now()
        if remaining <= 0:
            break
        CLOCK.sleep(min(interval, remaining))
        interval = min(interval * 1.5, POLL_MAX)
        current = fetch()
    return current


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1 << 20:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1 << 20):.1f} MiB"


def _add_server_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("server")
    group.add_argument(
        "--url",
        metavar="URL",
        help=f"address of the Freeze Debt server, e.g. https://freezedebt.example.com "
        f"(default: ${ENV_URL})",
    )
    group.add_argument(
        "--token",
        metavar="TOKEN",
        help=f"upload token of the repository (default: ${ENV_TOKEN}; prefer the variable, "
        "as command lines are visible to other processes)",
    )
    group.add_argument(
        "--timeout",
        type=_seconds,
        default=60.0,
        metavar="SECONDS",
        help="network timeout of each request (default: %(default)g); transient failures "
        "are retried up to 5 times with backoff",
    )


# -- upload ------------------------------------------------------------------------------------


def _peek(data: bytes, source: str) -> bytes:
    """The first few KiB of the document, gunzipped when it is gzip."""
    if not is_gzip(data):
        return data[:4096]
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[: 1 << 16], 4096)
    except zlib.error as exc:
        raise InputError.single(source, "", f"not valid gzip data ({exc})") from None


def evidence_content_type(data: bytes, *, source: str = "evidence") -> str:
    """``application/xml`` for JUnit XML (first non-space byte ``<``), else JSON."""
    head = _peek(data, source).removeprefix(b"\xef\xbb\xbf").lstrip()
    return "application/xml" if head[:1] == b"<" else "application/json"


def evidence_body(data: bytes) -> tuple[bytes, str | None]:
    """The body to send and its Content-Encoding: gzip as given, gzipped when large."""
    if is_gzip(data):
        return data, "gzip"
    if len(data) > GZIP_ABOVE:
        return gzip.compress(data, compresslevel=6, mtime=0), "gzip"
    return data, None


def _run_status(data: dict[str, Any]) -> str:
    status = data.get("status")
    if status not in ("received", "ready", "rejected"):
        raise TransportError(None, "bad-response", f"unknown run status {status!r}")
    return str(status)


def _cmd_upload(args: argparse.Namespace) -> int:
    client = _client(args)
    data = _read_bytes(args.evidence)
    content_type = evidence_content_type(data, source=args.evidence)
    body, encoding = evidence_body(data)
    answer = client.request(
        "POST",
        "/api/v1/runs",
        query={
            "sha": args.sha,
            "branch": args.branch,
            "label": _label(args),
            "attempt": args.attempt,
        },
        body=body,
        content_type=content_type,
        content_encoding=encoding,
    )
    run = _object(answer, "a run", "id", "status")
    run_id = run["id"]
    given_url = run.get("url")
    run_url = given_url if isinstance(given_url, str) else f"/api/v1/runs/{run_id}"
    sent = _size(len(body)) + (" gzip" if encoding else "")
    if answer.status == 200:
        print(f"{args.evidence} was already uploaded as run {run_id}")
    else:
        print(f"uploaded {args.evidence} ({sent}) as run {run_id}")

    def fetch() -> dict[str, Any]:
        return _object(client.request("GET", run_url), "a run", "id", "status")

    if args.wait > 0:
        run = _poll(run, fetch, lambda r: _run_status(r) != "received", args.wait)
    status = _run_status(run)
    if status == "ready":
        records = run.get("records", run.get("record_count"))
        plural = "" if records == 1 else "s"
        counted = f" ({records} record{plural})" if isinstance(records, int) else ""
        print(f"run {run_id} ready{counted}")
        return EXIT_PASS
    if status == "rejected":
        reasons = run.get("reasons") or []
        print(
            f"freezedebt-ci: run {run_id} rejected: the server could not use the evidence",
            file=sys.stderr,
        )
        for line in detail_lines(reasons)[:MAX_SHOWN_LINES]:
            print(f"  {line}", file=sys.stderr)
        return EXIT_ERROR
    if args.wait <= 0:
        print(f"run {run_id} received; not waiting for it (--wait 0)")
        return EXIT_PASS
    print(
        f"freezedebt-ci: run {run_id} is still being processed after {args.wait:g} s; "
        f"the server keeps it and finishes later ({client.resolve(run_url)})",
        file=sys.stderr,
    )
    return EXIT_PENDING


UPLOAD_EXAMPLE = f"""example:
  export {ENV_URL}=https://freezedebt.example.com {ENV_TOKEN}=fdk_...
  pytest --evidence-out evidence.json
  freezedebt-ci upload --sha "$(git rev-parse HEAD)" --branch main --label py311 evidence.json

The evidence is sent as application/json, or application/xml for JUnit XML; files over
1 MiB are gzipped, files already gzipped are sent as they are.
exit status: 0 ready, 2 rejected (reasons on stderr), usage or transport error,
3 still being processed when --wait ran out"""


# -- patch -------------------------------------------------------------------------------------


def changed_from_git(base: str, head: str, *, cwd: str | None = None) -> str:
    """``git diff --name-status -M BASE...HEAD`` in the current checkout."""
    command = [
        "git",
        "-c",
        "core.quotePath=true",
        "diff",
        "--name-status",
        "-M",
        "--no-color",
        "--no-ext-diff",
        f"{base}...{head}",
        "--",
    ]
    shown = f"git diff --name-status -M {base}...{head}"
    try:
        # A fixed argv; the shas were checked to be hex digits, so none reads as an option.
        done = subprocess.run(  # noqa: S603
            command, cwd=cwd, capture_output=True, check=False, timeout=300
        )
    except FileNotFoundError:
        raise UsageError(
            f"cannot run git to compute the changed paths; pass --changed FILE "
            f"with the output of {shown}"
        ) from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"{shown} took longer than 300 s; pass --changed FILE") from None
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise UsageError(
            f"{shown} failed ({error[0] if error else f'exit status {done.returncode}'}); "
            "run it in a checkout holding both commits (a shallow clone needs fetch-depth 0) "
            "or pass --changed FILE"
        )
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:  # pragma: no cover - core.quotePath keeps the output ASCII
        raise UsageError(f"{shown} printed something other than UTF-8") from None


def _changed_lines(args: argparse.Namespace) -> list[str]:
    if args.changed:
        text = read_name_status(args.changed)
        source = args.changed
    else:
        text = changed_from_git(args.base_sha, args.head_sha)
        source = f"git diff --name-status -M {args.base_sha}...{args.head_sha}"
    parse_name_status(text, source=source)  # raises InputError with the line of each problem
    return [line for line in text.splitlines() if line.strip()]


def read_analysis(path: str) -> dict[str, Any]:
    """An analysis file (``freezedebt-ci analyze --out``; gzip ok) as a JSON object."""
    data = _read_bytes(path)
    try:
        document = json.loads(maybe_gunzip(data, source=path, limit=64 << 20))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError.single(path, "", f"is not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise InputError.single(path, "$", "expected a JSON object")
    if document.get("format") != ANALYSIS_FORMAT:
        raise InputError.single(path, "$.format", f"expected {ANALYSIS_FORMAT!r}")
    return document


def analyze_checkout(base: str, head: str, *, repo: Path | None = None) -> dict[str, Any]:
    """``freezedebt-ci analyze --base BASE --head HEAD`` of the checkout (the current
    directory), as the patch command sends it."""
    from .analysis import Options, analyze

    print(f"analyzing {base[:12]}...{head[:12]}", file=sys.stderr)
    return analyze(Options(repo=repo or Path.cwd(), base=base, head=head))


_REPORT_LISTS = (
    "new_skips",
    "retired_skips",
    "lost",
    "new_xfails",
    "frozen_surface_hits",
    "expired_freezes",
    "per_file",
    "problems",
)


def _report(answer: Answer) -> dict[str, Any]:
    """The report of an answer, checked enough that the summaries can be written."""
    report = _object(answer, "a report", "status", "verdict")
    if not isinstance(report["status"], str) or not isinstance(report["verdict"], str):
        raise TransportError(answer.status, "bad-response", "report status/verdict not text")
    for key in _REPORT_LISTS:
        report.setdefault(key, [])
    report.setdefault("today", "")
    report.setdefault("figures", {})
    return report


def _cmd_patch(args: argparse.Namespace) -> int:
    client = _client(args)
    payload: dict[str, Any] = {
        "ref": args.ref,
        "base_sha": args.base_sha,
        "head_sha": args.head_sha,
        "changed": _changed_lines(args),
    }
    fields = (
        ("title", args.title),
        ("url", args.link),
        ("author", args.author),
        ("label", _label(args)),
    )
    for key, value in fields:
        if value:
            payload[key] = value
    if args.analysis:
        payload["analysis"] = read_analysis(args.analysis)
    elif args.analyze:
        payload["analysis"] = analyze_checkout(args.base_sha, args.head_sha)
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    answer = client.request("POST", "/api/v1/patches", body=body, content_type="application/json")
    patch = _object(answer, "a patch", "id", "report_url")
    report_url = str(patch["report_url"])
    page = patch.get("page_url")
    page_url = client.resolve(page) if isinstance(page, str) and page.startswith("/") else None
    print(
        f"patch {args.ref} {'already declared' if answer.status == 200 else 'declared'} "
        f"as #{patch['id']}" + (f": {page_url}" if page_url else ""),
        file=sys.stderr,
    )

    def fetch() -> dict[str, Any]:
        return _report(client.request("GET", report_url))

    report = fetch()
    if report["status"] != "ready" and args.wait > 0:
        print(f"waiting for the report (up to {args.wait:g} s)", file=sys.stderr)
        report = _poll(report, fetch, lambda r: r["status"] == "ready", args.wait)
    if report["status"] != "ready":
        why = report.get("pending_reason")
        if not isinstance(why, str) or not why:
            why = "a run of the base or head commit is missing or still being processed"
        print(
            f"freezedebt-ci: the report is still {report['status']} after {args.wait:g} s ({why})",
            file=sys.stderr,
        )
    try:
        return emit_report(report, as_json=args.json, summary=args.summary, page_url=page_url)
    except (KeyError, TypeError, ValueError) as exc:
        raise TransportError(
            answer.status, "bad-response", f"the report lacks what a summary needs ({exc!r})"
        ) from None


PATCH_EXAMPLE = f"""example:
  export {ENV_URL}=https://freezedebt.example.com {ENV_TOKEN}=fdk_...
  freezedebt-ci patch --ref PR-123 --base-sha "$BASE_SHA" --head-sha "$HEAD_SHA" \\
      --title "Round prices half-even" --link https://git.example.com/shop/pull/123 \\
      --analysis analysis.json --summary "$GITHUB_STEP_SUMMARY"

--url is the server's address; the patch's own web address goes in --link (or --pr-url).
--label picks the runs compared when jobs upload under labels (a CI matrix): set
FREEZEDEBT_LABEL once for a job and its upload and patch agree.
Without --changed, the changed paths come from git diff --name-status -M BASE...HEAD run
in the current checkout, which must hold both commits.
exit status: 0 pass, 1 block, 2 usage or transport error, 3 still pending when --wait ran out"""


# -- ledger push -------------------------------------------------------------------------------


def ledger_content_type(text: bytes) -> str:
    """``application/json`` for a JSON ledger (the same test the ledger reader uses)."""
    stripped = text.removeprefix(b"\xef\xbb\xbf").lstrip()
    after = stripped[1:].lstrip()[:1]
    if stripped[:1] == b"{" or (stripped[:1] == b"[" and after in (b"{", b"]")):
        return "application/json"
    return "application/toml"


def _describe_event(event: Any) -> str:
    if not isinstance(event, dict):
        return str(event)
    kind = event.get("kind", "event")
    freeze = event.get("freeze") or event.get("freeze_id") or ""
    extra = []
    if event.get("silent"):
        extra.append("silent renewal: the reason did not change")
    if kind == "renewed" and isinstance(event.get("chain"), int):
        extra.append(f"renewal #{event['chain']}")
    return f"{kind} {freeze}".strip() + (f" ({'; '.join(extra)})" if extra else "")


def _cmd_ledger_push(args: argparse.Namespace) -> int:
    client = _client(args)
    data = maybe_gunzip(_read_bytes(args.file), source=args.file, limit=64 << 20)
    answer = client.request(
        "PUT",
        "/api/v1/ledger",
        query={"sha": args.sha},
        body=data,
        content_type=ledger_content_type(data),
    )
    stored = _object(answer, "a ledger version", "version")
    events = stored.get("events") or []
    if answer.status == 200:
        print(f"ledger unchanged: the server already holds it as version {stored['version']}")
    else:
        print(f"ledger version {stored['version']} stored ({len(events)} events)")
    for event in events if isinstance(events, list) else []:
        print(f"  {_describe_event(event)}")
    # Stored all the same (the default branch's ledger is the truth), but said out loud: a
    # mistake in the ledger otherwise shows only as blocked patches later.
    for item in _list_of_objects(stored.get("invalid")):
        problems = item.get("problems")
        why = "; ".join(map(str, problems)) if isinstance(problems, list) else "invalid"
        print(f"invalid freeze {item.get('freeze')}: {why}")
    for item in _list_of_objects(stored.get("expired")):
        print(f"expired freeze {item.get('freeze')}: expired on {item.get('expires')}")
    for kind, path in (("fixture-lock", args.fixture_lock), ("oracle-map", args.oracle_map)):
        if path:
            _push_governance(client, kind, path, args.sha)
    return EXIT_PASS


def _push_governance(client: Client, kind: str, path: str, sha: str) -> None:
    """Send a fixture lock or oracle map as its bytes: the server keeps their sha256, which
    the analysis of a commit holding the same file records."""
    data = _read_bytes(path)
    repo_path = Path(path).as_posix() if not Path(path).is_absolute() else Path(path).name
    answer = client.request(
        "PUT",
        f"/api/v1/governance/{kind}",
        query={"sha": sha, "path": repo_path},
        body=data,
        content_type="text/plain; charset=utf-8",
    )
    stored = _object(answer, f"a {kind} version", "version")
    state = "unchanged" if answer.status == 200 else "stored"
    print(f"{kind} {state}: version {stored['version']} (sha256 {str(stored.get('sha256'))[:12]})")


def _list_of_objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


LEDGER_EXAMPLE = f"""example (in the default branch's protected CI, with a ledger-scoped token):
  export {ENV_URL}=https://freezedebt.example.com {ENV_TOKEN}=fdk_...
  freezedebt-ci ledger push freeze_ledger.toml --sha "$(git rev-parse HEAD)" \\
      --fixture-lock fixtures.lock --oracle-map oracle_map.json

TOML is sent as application/toml, JSON as application/json.
exit status: 0 stored, 2 usage, invalid ledger or transport error"""


# -- registration ------------------------------------------------------------------------------


def add_remote_commands(sub: Any) -> None:
    """Register the server commands on the ``freezedebt-ci`` parser (see SPEC 7)."""
    raw = argparse.RawDescriptionHelpFormatter

    upload = sub.add_parser(
        "upload",
        help="send the evidence of one test run to the server",
        description="Send one run's evidence (evidence JSON or JUnit XML, gzip ok) and wait\n"
        "until the server has read it.",
        epilog=UPLOAD_EXAMPLE,
        formatter_class=raw,
    )
    upload.add_argument("evidence", metavar="EVIDENCE", help="evidence JSON or JUnit XML file")
    upload.add_argument("--sha", type=_sha, required=True, help="commit the tests ran at")
    upload.add_argument("--branch", type=_nonempty, help="branch the commit is on")
    upload.add_argument(
        "--label",
        type=_nonempty,
        help=f"tells parallel jobs of one sha apart, e.g. py311 (default: ${ENV_LABEL})",
    )
    upload.add_argument(
        "--attempt",
        type=_attempt,
        metavar="N",
        help="retry number of the job (reports use the latest)",
    )
    upload.add_argument(
        "--wait",
        type=_seconds,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for the server to read the run (default: %(default)g; "
        "0: do not wait)",
    )
    _add_server_options(upload)
    upload.set_defaults(handler=_guarded(_cmd_upload, scope="evidence"))

    patch = sub.add_parser(
        "patch",
        help="declare a patch and wait for its report",
        description="Declare a patch (base, head, changed paths), wait for the server's\n"
        "report, print it and exit with its verdict.",
        epilog=PATCH_EXAMPLE,
        formatter_class=raw,
    )
    patch.add_argument("--ref", type=_nonempty, required=True, help="the patch, e.g. PR-123")
    patch.add_argument("--base-sha", type=_sha, required=True, help="commit the patch is based on")
    patch.add_argument("--head-sha", type=_sha, required=True, help="commit of the patch")
    patch.add_argument(
        "--label",
        type=_nonempty,
        help="the job label whose runs the report compares, as given to upload (default: "
        f"${ENV_LABEL}; without either, the one label the runs of both commits share)",
    )
    patch.add_argument(
        "--changed",
        metavar="FILE",
        help="output of git diff --name-status -M BASE...HEAD (default: run that git diff)",
    )
    analysis = patch.add_mutually_exclusive_group()
    analysis.add_argument(
        "--analysis", metavar="FILE", help="analysis JSON written by freezedebt-ci analyze"
    )
    analysis.add_argument(
        "--analyze",
        action="store_true",
        help="run freezedebt-ci analyze on the checkout (--base-sha...--head-sha) and send it",
    )
    patch.add_argument("--title", help="title of the patch")
    patch.add_argument(
        "--link",
        "--pr-url",
        dest="link",
        metavar="URL",
        help="web address of the patch, e.g. its pull request (sent as the patch's url; "
        "--url is the server's address)",
    )
    patch.add_argument("--author", help="author of the patch")
    patch.add_argument(
        "--wait",
        type=_seconds,
        default=300.0,
        metavar="SECONDS",
        help="how long to wait for a ready report (default: %(default)g)",
    )
    patch.add_argument("--json", action="store_true", help="print the report JSON")
    patch.add_argument(
        "--summary", type=Path, metavar="FILE.md", help="write the Markdown summary here"
    )
    _add_server_options(patch)
    patch.set_defaults(handler=_guarded(_cmd_patch, scope="evidence"))

    ledger = sub.add_parser(
        "ledger",
        help="send the freeze ledger to the server (ledger push)",
        description="Freeze ledger commands.",
    )
    ledger_sub = ledger.add_subparsers(dest="ledger_command", required=True, metavar="COMMAND")
    push = ledger_sub.add_parser(
        "push",
        help="send the ledger file of the default branch",
        description="Send the freeze ledger of a default-branch commit; the server stores it\n"
        "as a new version and derives its events (opened, renewed, retired, edited).",
        epilog=LEDGER_EXAMPLE,
        formatter_class=raw,
    )
    push.add_argument("file", metavar="FILE", help="the ledger file (TOML or JSON)")
    push.add_argument("--sha", type=_sha, required=True, help="commit the ledger file is from")
    push.add_argument(
        "--fixture-lock", metavar="FILE", help="also send the fixture lock of that commit"
    )
    push.add_argument(
        "--oracle-map", metavar="FILE", help="also send the oracle map of that commit"
    )
    _add_server_options(push)
    push.set_defaults(handler=_guarded(_cmd_ledger_push, scope="ledger"))
