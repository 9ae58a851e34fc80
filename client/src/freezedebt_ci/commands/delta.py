"""``freezedebt-ci delta``: the whole report offline, from two evidence files, with the same
rules and JSON as the server."""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

from ..changes import parse_name_status, read_name_status
from ..errors import InputError
from ..evidence import read_evidence
from ..ledger import read_ledger
from ..policy import Policy, read_policy
from ..report import compute_report
from .emit import emit_report
from .files import read_analysis


def add_parser(sub: Any) -> None:
    """Register ``delta`` on the ``freezedebt-ci`` parser."""
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


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD, got {value!r}") from None


def _cmd_delta(args: argparse.Namespace) -> int:
    base = read_evidence(args.base)
    head = read_evidence(args.head)
    freezes = read_ledger(args.ledger) if args.ledger else []
    changed_text = read_name_status(args.changed) if args.changed else ""
    changes = parse_name_status(changed_text, source=args.changed or "changed paths")
    policy = read_policy(args.policy) if args.policy else Policy()
    analysis = governance = None
    if args.analysis:
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
