"""The ``freezedebt-ci`` command line.

Exit codes: 0 pass, 1 block, 2 usage, input or transport error, 3 still pending.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .analysis.command import add_analysis_commands
from .commands import delta, ledger, patch, upload
from .errors import InputError
from .exits import EXIT_ERROR, UsageError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="freezedebt-ci",
        description="Account for the evidence a patch earned, and what it borrowed.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (delta, upload, patch, ledger):
        command.add_parser(sub)
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
