"""Commands that talk to a Freeze Debt server: upload, patch, ledger push."""

from __future__ import annotations

from typing import Any


def add_remote_commands(sub: Any) -> None:
    """Register the server commands on the ``freezedebt-ci`` parser (see SPEC 7)."""
    del sub
