"""Helpers of the end-to-end tests: where things are, running commands, waiting.

The tests run only when FREEZEDEBT_E2E=1 (``scripts/e2e`` sets it, with DATABASE_URL pointing
at a PostgreSQL server and CELERY_BROKER_URL at Redis).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# The database the live service gets, dropped and created afresh for each test: named after
# DATABASE_URL's, so two checkouts testing on one server never drop each other's.
E2E_DATABASE = (
    os.environ.get("DATABASE_URL", "").rsplit("/", 1)[-1].split("?")[0] or "freezedebt"
) + "_e2e"

e2e_only = pytest.mark.skipif(
    os.environ.get("FREEZEDEBT_E2E") != "1", reason="end-to-end run: set FREEZEDEBT_E2E=1"
)


def celery_worker() -> list:
    """The Celery worker's command line, as the README's deployment runs it."""
    return [BIN / "celery", "-A", "config", "worker", "--loglevel", "INFO", "--concurrency", "2",
            "--without-gossip", "--without-mingle"]  # fmt: skip


def celery_beat(schedule: Path) -> list:
    """Celery beat's command line, its schedule kept in ``schedule``."""
    return [BIN / "celery", "-A", "config", "beat", "--loglevel", "INFO", "--schedule",
            str(schedule)]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(args, *, cwd=ROOT, env=None, check=True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"{args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        )
    return result


def wait_for(condition, *, timeout: float, what: str, interval: float = 0.25):
    """Poll ``condition`` until it returns something truthy, which is returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"Timed out after {timeout} s waiting for {what}.")
        time.sleep(interval)
