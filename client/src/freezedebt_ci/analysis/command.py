"""``freezedebt-ci analyze`` and ``freezedebt-ci fixtures lock``."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import traceback
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..paths import matches_any, pattern_error
from .config import settings_from_pyproject
from .engine import Options, analyze
from .gitread import Git
from .governance import lock_text, sha256

EXIT_PASS, EXIT_BLOCK, EXIT_ERROR = 0, 1, 2

ANALYZE_EXAMPLE = """example:
  freezedebt-ci analyze --base origin/main --out analysis.json
  freezedebt-ci analyze --base origin/main --head HEAD --json > analysis.json
exit status: 0 no blocking finding, 1 a blocking finding (or an incomplete analysis),
2 usage or input error"""

LOCK_EXAMPLE = """example (on the default branch, after review):
  freezedebt-ci fixtures lock && git add fixtures.lock && git commit -m "Lock fixtures"
"""


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD, got {value!r}") from None


def _budget(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {value!r}")
    return seconds


def _glob(value: str) -> str:
    error = pattern_error(value, allow_any_depth=True)
    if error:
        raise argparse.ArgumentTypeError(f"{value!r} {error}")
    return value


def text_summary(analysis: dict[str, Any]) -> str:
    """A few lines for a person: the class, each changed symbol with its callers and tests, and
    every problem."""
    lines = [
        f"patch class: {analysis['class']}  ({len(analysis['files'])} files, "
        f"{len(analysis['symbols'])} changed symbols, verdict {analysis['verdict']})"
    ]
    if not analysis["complete"]:
        lines.append(f"INCOMPLETE: {analysis['incomplete_reason']}")
    for symbol in analysis["symbols"][:30]:
        flags = []
        if symbol["signature_changed"]:
            flags.append("types-only" if symbol["types_only"] else "signature")
        if symbol["candidate_only"]:
            flags.append("candidate tests only")
        if symbol["frozen_by"]:
            flags.append("frozen: " + ", ".join(symbol["frozen_by"]))
        extra = f" [{'; '.join(flags)}]" if flags else ""
        lines.append(
            f"  {symbol['change']:<8} {symbol['module']}:{symbol['name']}{extra}: "
            f"{symbol['callers_count']} callers ({len(symbol['untested_callers'])} untested), "
            f"{symbol['tests_count']} tests"
        )
        for caller in symbol["untested_callers"][:5]:
            lines.append(f"             untested caller {caller}")
    if len(analysis["symbols"]) > 30:
        lines.append(f"  … and {len(analysis['symbols']) - 30} more symbols (see --json)")
    if analysis["cone_count"]:
        lines.append(f"impact cone: {analysis['cone_count']} public entries")
    for problem in analysis["problems"]:
        lines.append(f"{problem['severity'].upper()} {problem['code']}: {problem['message']}")
        for item in problem["items"][:8]:
            lines.append(f"    {item}")
        if len(problem["items"]) > 8:
            lines.append(f"    … {len(problem['items']) - 8} more")
    if not analysis["problems"]:
        lines.append("no findings")
    return "\n".join(lines) + "\n"


def _cmd_analyze(args: argparse.Namespace) -> int:
    options = Options(
        repo=Path(args.repo),
        base=args.base,
        head=args.head,
        src=tuple(args.src or ()),
        tests=tuple(args.tests or ()),
        fixtures=tuple(args.fixtures or ()),
        fixture_lock=args.fixture_lock,
        oracle_map=args.oracle_map,
        ledger=args.ledger,
        today=args.today or dt.date.today(),
        coverage=Path(args.coverage) if args.coverage else None,
        budget=args.budget,
        cache=not args.no_cache,
    )
    try:
        analysis = analyze(options)
    except InputError:
        raise
    except Exception as exc:
        # exit 1 means "a blocking finding": a failure of the analysis itself must not read so
        traceback.print_exc()
        print(f"freezedebt-ci: analyze failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    document = json.dumps(analysis, indent=2, sort_keys=True) + "\n"
    if args.out:
        try:
            Path(args.out).write_text(document, encoding="utf-8")
        except OSError as exc:
            raise InputError.single(
                args.out, "--out", f"cannot be written ({exc.strerror})"
            ) from None
    sys.stdout.write(document if args.json else text_summary(analysis))
    return EXIT_BLOCK if analysis["verdict"] == "block" else EXIT_PASS


def _cmd_fixtures_lock(args: argparse.Namespace) -> int:
    git = Git(args.repo)
    commit = git.resolve(args.rev)
    tree = git.tree(commit)
    pyproject = tree.get("pyproject.toml")
    settings = settings_from_pyproject(
        git.blobs([pyproject.oid]).get(pyproject.oid) if pyproject else None
    ).with_overrides(fixtures=tuple(args.fixtures or ()))
    lock_path = args.out or settings.fixture_lock
    entries = {
        p: e
        for p, e in tree.items()
        if e.is_file and matches_any(settings.fixtures, p) and p != settings.fixture_lock
    }
    bad = [p for p in entries if "\n" in p or "\r" in p]
    if bad:
        raise InputError.single(bad[0], "", "a fixture path with a line break cannot be locked")
    blobs = git.blobs(e.oid for e in entries.values())
    digests = {p: sha256(blobs[e.oid]) for p, e in entries.items()}
    text = lock_text(digests)
    target = Path(lock_path)
    if not target.is_absolute():
        top = git.toplevel()
        if top is None:
            raise InputError.single(lock_path, "--out", "a bare repository needs an absolute --out")
        target = top / target
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError.single(
            str(target), "--out", f"cannot be written ({exc.strerror})"
        ) from None
    print(f"locked {len(digests)} fixture files of {commit[:12]} in {target}")
    return EXIT_PASS


def add_analysis_commands(sub: Any) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = sub.add_parser(
        "analyze",
        help="read the patch itself: changed symbols, callers, tests, fixtures, oracles",
        description="Analyse a patch from the two trees of a git checkout (never running its\n"
        "code): the class of each change, every changed symbol's production callers and the\n"
        "tests that name them, the impact cone of contract changes, the fixture lock, the\n"
        "oracle map and frozen symbols. Settings default to [tool.freezedebt] in the base\n"
        "commit's pyproject.toml.",
        epilog=ANALYZE_EXAMPLE,
        formatter_class=raw,
    )
    parser.add_argument("--base", required=True, metavar="REF", help="the patch's base (a ref)")
    parser.add_argument("--head", default="HEAD", metavar="REF", help="its head (default HEAD)")
    parser.add_argument("--repo", default=".", metavar="DIR", help="the git checkout (default .)")
    parser.add_argument("--out", metavar="FILE", help="write the analysis JSON here")
    parser.add_argument("--json", action="store_true", help="print the analysis JSON")
    parser.add_argument("--src", action="append", metavar="DIR", help="a source root (repeat)")
    parser.add_argument("--tests", action="append", metavar="DIR", help="a test root (repeat)")
    parser.add_argument(
        "--fixtures", action="append", type=_glob, metavar="GLOB", help="fixture paths (repeat)"
    )
    parser.add_argument("--fixture-lock", metavar="FILE", help="the fixture lock's path")
    parser.add_argument("--oracle-map", metavar="FILE", help="the oracle map's path")
    parser.add_argument("--ledger", metavar="FILE", help="the freeze ledger's path")
    parser.add_argument(
        "--today", type=_date, metavar="DATE", help="date the freezes are judged on"
    )
    parser.add_argument(
        "--coverage", metavar="FILE", help="coverage data recorded with per-test contexts"
    )
    parser.add_argument(
        "--budget",
        type=_budget,
        default=600.0,
        metavar="SECONDS",
        help="stop, marked incomplete, after this long (default %(default)g)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="do not read or keep cached facts and answers"
    )
    parser.set_defaults(handler=_cmd_analyze)

    fixtures = sub.add_parser("fixtures", help="fixture lock commands", description="Fixtures.")
    fixtures_sub = fixtures.add_subparsers(
        dest="fixtures_command", required=True, metavar="COMMAND"
    )
    lock = fixtures_sub.add_parser(
        "lock",
        help="write the fixture lock of a reviewed commit",
        description="Write the sha256 of every file under the fixture globs of a commit\n"
        "(default HEAD), for the default branch after review.",
        epilog=LOCK_EXAMPLE,
        formatter_class=raw,
    )
    lock.add_argument("--repo", default=".", metavar="DIR", help="the git checkout (default .)")
    lock.add_argument("--rev", default="HEAD", metavar="REF", help="the commit (default HEAD)")
    lock.add_argument(
        "--fixtures", action="append", type=_glob, metavar="GLOB", help="fixture paths (repeat)"
    )
    lock.add_argument("--out", metavar="FILE", help="the lock file (default: fixtures.lock)")
    lock.set_defaults(handler=_cmd_fixtures_lock)
