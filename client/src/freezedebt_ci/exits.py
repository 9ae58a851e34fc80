"""Exit statuses of ``freezedebt-ci``, and the error that means a wrong argument.

Every command module imports these from here, so none of them imports the command line.
"""

from __future__ import annotations

from typing import Any

EXIT_PASS, EXIT_BLOCK, EXIT_ERROR, EXIT_PENDING = 0, 1, 2, 3


class UsageError(Exception):
    """A wrong argument: printed on stderr, exit status 2."""


def verdict_exit(report: dict[str, Any]) -> int:
    """The exit status of a report: 0 pass, 1 block, 3 anything else (still pending)."""
    return {"pass": EXIT_PASS, "block": EXIT_BLOCK}.get(report["verdict"], EXIT_PENDING)
