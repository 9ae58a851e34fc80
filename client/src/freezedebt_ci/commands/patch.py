"""``freezedebt-ci patch``: declare a patch (base, head, changed paths), wait for the server's
report, print it and exit with its verdict."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..analysis import Options, analyze
from ..changes import parse_name_status, read_name_status
from ..exits import UsageError
from ..transport import Answer, TransportError
from .emit import emit_report
from .files import read_analysis
from .server import (
    ENV_LABEL,
    ENV_TOKEN,
    ENV_URL,
    add_server_options,
    answer_object,
    commit_sha,
    guarded,
    job_label,
    nonempty,
    poll,
    seconds,
    server_client,
)


def add_parser(sub: Any) -> None:
    """Register ``patch`` on the ``freezedebt-ci`` parser."""
    patch = sub.add_parser(
        "patch",
        help="declare a patch and wait for its report",
        description="Declare a patch (base, head, changed paths), wait for the server's\n"
        "report, print it and exit with its verdict.",
        epilog=PATCH_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    patch.add_argument("--ref", type=nonempty, required=True, help="the patch, e.g. PR-123")
    patch.add_argument(
        "--base-sha", type=commit_sha, required=True, help="commit the patch is based on"
    )
    patch.add_argument("--head-sha", type=commit_sha, required=True, help="commit of the patch")
    patch.add_argument(
        "--label",
        type=nonempty,
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
        type=seconds,
        default=300.0,
        metavar="SECONDS",
        help="how long to wait for a ready report (default: %(default)g)",
    )
    patch.add_argument("--json", action="store_true", help="print the report JSON")
    patch.add_argument(
        "--summary", type=Path, metavar="FILE.md", help="write the Markdown summary here"
    )
    add_server_options(patch)
    patch.set_defaults(handler=guarded(_cmd_patch, scope="evidence"))


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


def analyze_checkout(base: str, head: str, *, repo: Path | None = None) -> dict[str, Any]:
    """``freezedebt-ci analyze --base BASE --head HEAD`` of the checkout (the current
    directory), as the patch command sends it."""
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
    report = answer_object(answer, "a report", "status", "verdict")
    if not isinstance(report["status"], str) or not isinstance(report["verdict"], str):
        raise TransportError(answer.status, "bad-response", "report status/verdict not text")
    for key in _REPORT_LISTS:
        report.setdefault(key, [])
    report.setdefault("today", "")
    report.setdefault("figures", {})
    return report


def _cmd_patch(args: argparse.Namespace) -> int:
    client = server_client(args)
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
        ("label", job_label(args)),
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
    patch = answer_object(answer, "a patch", "id", "report_url")
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
        report = poll(report, fetch, lambda r: r["status"] == "ready", args.wait)
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
