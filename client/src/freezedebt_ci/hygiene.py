"""Freeze hygiene (SPEC 5.3 ``invalid-freeze`` and 5.5).

A freeze may quarantine only an environmental signal: a timeout, a dropped connection, a
missing optional service, the clock, test ordering or external data. A failed assertion is a
product defect and must not be frozen away, and a freeze may never reach into fixtures, which
are the oracles the tests judge by.
"""

from __future__ import annotations

import re

from .ledger import FREEZE_CLASSES, Freeze
from .paths import overlaps
from .policy import Policy

#: Words that name an environmental signal, by freeze class.
SIGNAL_WORDS: dict[str, tuple[str, ...]] = {
    "timeout": ("timeout", "timed out", "time out", "deadline", "slow", "hang"),
    "network-dependent": (
        "network",
        "connection",
        "connect",
        "reset",
        "refused",
        "dns",
        "socket",
        "http",
        "ssl",
        "tls",
        "unreachable",
        "latency",
        "rate limit",
        "503",
        "502",
    ),
    "clock-dependent": (
        "clock",
        "wall-clock",
        "time zone",
        "timezone",
        "dst",
        "midnight",
        "date boundary",
        "leap",
        "now()",
    ),
    "order-dependent": ("order", "ordering", "xdist", "parallel", "shared state", "isolation"),
    "data-dependent": ("data", "seed", "random", "dataset", "external file"),
    "missing-service": (
        "service",
        "unavailable",
        "not installed",
        "optional",
        "database",
        "redis",
        "postgres",
        "docker",
        "gpu",
        "sandbox",
    ),
}
# Whole words only: "order_total" in an assertion names no ordering problem.
_SIGNAL = re.compile(
    r"(?<![\w-])("
    + "|".join(re.escape(w) for words in SIGNAL_WORDS.values() for w in words)
    + r")(?![\w])"
)
_ASSERTION = re.compile(
    r"^\s*(E\s+)?(assert\b|assertionerror\b|expected\b.*\b(got|but was|to equal)\b|"
    r"\S+\s*(==|!=|<=|>=|<|>)\s*\S+\s*$)",
    re.IGNORECASE,
)


def names_signal(reason: str) -> bool:
    return _SIGNAL.search(reason.lower()) is not None


def freeze_problems(freeze: Freeze, policy: Policy) -> list[str]:
    """Why ``freeze`` is an ``invalid-freeze``; empty when it is sound."""
    problems = [f"missing required field '{name}'" for name in freeze.missing]
    if freeze.opened and freeze.expires:
        span = (freeze.expires - freeze.opened).days
        if span < 0:
            problems.append("expires before it was opened")
        elif span > policy.max_freeze_days:
            problems.append(
                f"runs {span} days, more than the {policy.max_freeze_days} days policy allows"
            )
    if freeze.freeze_class is not None and freeze.freeze_class not in FREEZE_CLASSES:
        problems.append(
            f"class {freeze.freeze_class!r} is not an environmental signal "
            f"(expected one of {', '.join(FREEZE_CLASSES)})"
        )
    if freeze.reason:
        if _ASSERTION.match(freeze.reason) and not names_signal(freeze.reason):
            problems.append("reason is an assertion message, not an environmental signal")
        elif not names_signal(freeze.reason) and freeze.freeze_class is None:
            problems.append("reason names no environmental signal (timeout, network, clock, …)")
    hits = sorted({c for c in freeze.covers for f in policy.fixture_paths if overlaps(c, f)})
    if hits:
        problems.append(f"covers fixture path(s) {', '.join(hits)}")
    return problems
