"""``freezedebt-ci upload``: send the evidence of one test run and wait until the server has
read it."""

from __future__ import annotations

import argparse
import gzip
import sys
import zlib
from typing import Any

from ..compression import is_gzip
from ..errors import InputError
from ..exits import EXIT_ERROR, EXIT_PASS, EXIT_PENDING
from ..transport import TransportError, detail_lines
from .files import read_bytes
from .server import (
    ENV_LABEL,
    ENV_TOKEN,
    ENV_URL,
    MAX_SHOWN_LINES,
    add_server_options,
    answer_object,
    attempt_number,
    commit_sha,
    guarded,
    job_label,
    nonempty,
    poll,
    seconds,
    server_client,
)

#: Evidence larger than this is gzipped before it is sent.
GZIP_ABOVE = 1 << 20


def add_parser(sub: Any) -> None:
    """Register ``upload`` on the ``freezedebt-ci`` parser."""
    upload = sub.add_parser(
        "upload",
        help="send the evidence of one test run to the server",
        description="Send one run's evidence (evidence JSON or JUnit XML, gzip ok) and wait\n"
        "until the server has read it.",
        epilog=UPLOAD_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    upload.add_argument("evidence", metavar="EVIDENCE", help="evidence JSON or JUnit XML file")
    upload.add_argument("--sha", type=commit_sha, required=True, help="commit the tests ran at")
    upload.add_argument("--branch", type=nonempty, help="branch the commit is on")
    upload.add_argument(
        "--label",
        type=nonempty,
        help=f"tells parallel jobs of one sha apart, e.g. py311 (default: ${ENV_LABEL})",
    )
    upload.add_argument(
        "--attempt",
        type=attempt_number,
        metavar="N",
        help="retry number of the job (reports use the latest)",
    )
    upload.add_argument(
        "--wait",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for the server to read the run (default: %(default)g; "
        "0: do not wait)",
    )
    add_server_options(upload)
    upload.set_defaults(handler=guarded(_cmd_upload, scope="evidence"))


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1 << 20:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1 << 20):.1f} MiB"


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
    client = server_client(args)
    data = read_bytes(args.evidence)
    content_type = evidence_content_type(data, source=args.evidence)
    body, encoding = evidence_body(data)
    answer = client.request(
        "POST",
        "/api/v1/runs",
        query={
            "sha": args.sha,
            "branch": args.branch,
            "label": job_label(args),
            "attempt": args.attempt,
        },
        body=body,
        content_type=content_type,
        content_encoding=encoding,
    )
    run = answer_object(answer, "a run", "id", "status")
    run_id = run["id"]
    given_url = run.get("url")
    run_url = given_url if isinstance(given_url, str) else f"/api/v1/runs/{run_id}"
    sent = _size(len(body)) + (" gzip" if encoding else "")
    if answer.status == 200:
        print(f"{args.evidence} was already uploaded as run {run_id}")
    else:
        print(f"uploaded {args.evidence} ({sent}) as run {run_id}")

    def fetch() -> dict[str, Any]:
        return answer_object(client.request("GET", run_url), "a run", "id", "status")

    if args.wait > 0:
        run = poll(run, fetch, lambda r: _run_status(r) != "received", args.wait)
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
