"""The ``freezedebt-ci`` command line.

Exit codes: 0 pass, 1 block, 2 usage, input or transport error, 3 still pending.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .analysis.command import add_analysis_commands
from .changes import parse_name_status, read_name_status
from .errors import InputError
from .evidence import read_evidence
from .ledger import read_ledger
from .policy import Policy, read_policy
from .report import compute_report, report_json
from .summary import markdown_summary, text_summary

EXIT_PASS, EXIT_BLOCK, EXIT_ERROR, EXIT_PENDING = 0, 1, 2, 3


class UsageError(Exception):
    """A wrong argument: printed on stderr, exit status 2."""


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD, got {value!r}") from None


def verdict_exit(report: dict[str, Any]) -> int:
    return {"pass": EXIT_PASS, "block": EXIT_BLOCK}.get(report["verdict"], EXIT_PENDING)


def emit_report(
    report: dict[str, Any], *, as_json: bool, summary: Path | None, page_url: str | None = None
) -> int:
    """Print a report (summary or JSON), write the Markdown summary, return the exit code.
    ``page_url``: the server's page of the report, linked from both summaries."""
    sys.stdout.write(report_json(report) if as_json else text_summary(report, page_url=page_url))
    if summary is not None:
        try:
            summary.write_text(markdown_summary(report, page_url=page_url), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write summary {summary}: {exc.strerror}") from None
    return verdict_exit(report)


def _cmd_delta(args: argparse.Namespace) -> int:
    base = read_evidence(args.base)
    head = read_evidence(args.head)
    freezes = read_ledger(args.ledger) if args.ledger else []
    changed_text = read_name_status(args.changed) if args.changed else ""
    changes = parse_name_status(changed_text, source=args.changed or "changed paths")
    policy = read_policy(args.policy) if args.policy else Policy()
    analysis = governance = None
    if args.analysis:
        from .remote import read_analysis

        analysis = read_analysis(args.analysis)
        governance = _governance_digests(args)
    report = compute_report(
        base=base,
        head=head,
        freezes=freezes,
        changes=changes,
        today=args.today or dt.date.today(),
        policy=policy,
        analysis=analysis,
        governance=governance,
    )
    return emit_report(report, as_json=args.json, summary=args.summary)


def _governance_digests(args: argparse.Namespace) -> dict[str, str | None]:
    """The sha256 of the governance files given (the default branch's, as the server holds
    them): the analysis must have used these."""
    digests: dict[str, str | None] = {}
    for kind, path in (
        ("ledger", args.ledger),
        ("fixture_lock", args.fixture_lock),
        ("oracle_map", args.oracle_map),
    ):
        if path:
            try:
                digests[kind] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            except OSError as exc:
                raise InputError.single(path, "", f"cannot be read ({exc.strerror})") from None
    return digests


DELTA_EXAMPLE = """example:
  git diff --name-status -M origin/main...HEAD > changed.txt
  freezedebt-ci delta base.json head.json --ledger freeze_ledger.toml \\
      --changed changed.txt --today 2026-11-30 --summary report.md
exit status: 0 pass, 1 block, 2 usage or input error"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="freezedebt-ci",
        description="Account for the evidence a patch earned, and what it borrowed.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    delta = sub.add_parser(
        "delta",
        help="compute a patch report offline from two evidence files",
        description="Compute the whole report offline, with the same rules and JSON as the server.",
        epilog=DELTA_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    delta.add_argument("base", help="evidence of the base commit (JSON or JUnit XML, gzip ok)")
    delta.add_argument("head", help="evidence of the head commit")
    delta.add_argument("--ledger", metavar="FILE", help="freeze ledger (TOML or JSON)")
    delta.add_argument(
        "--changed", metavar="FILE", help="output of git diff --name-status -M BASE...HEAD"
    )
    delta.add_argument("--today", type=_date, metavar="DATE", help="date the rules use")
    delta.add_argument("--policy", metavar="FILE", help="policy file (TOML or JSON)")
    delta.add_argument(
        "--analysis", metavar="FILE", help="analysis JSON written by freezedebt-ci analyze"
    )
    delta.add_argument(
        "--fixture-lock",
        metavar="FILE",
        help="the default branch's fixture lock: the analysis must have used it",
    )
    delta.add_argument(
        "--oracle-map",
        metavar="FILE",
        help="the default branch's oracle map: the analysis must have used it",
    )
    delta.add_argument("--json", action="store_true", help="print the report JSON")
    delta.add_argument("--summary", type=Path, metavar="FILE.md", help="write Markdown here")
    delta.set_defaults(handler=_cmd_delta)

    from .remote import add_remote_commands

    add_remote_commands(sub)
    add_analysis_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except InputError as exc:
        print(f"freezedebt-ci: {exc.describe()}", file=sys.stderr)
        return EXIT_ERROR
    except UsageError as exc:
        print(f"freezedebt-ci: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
