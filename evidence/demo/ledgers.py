"""The demo's freeze ledgers: today's, as its file spells it, and the freezes of the history
with the state of each on any day."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from evidence.demo.suites import MODULES

# The repository whose patches carry real analyses (its ledger is clean: they can pass).
ANALYSIS_REPOSITORY = "mobile-backend"


def ledger_today(slug: str, today: dt.date, *, renewed: bool, with_expired: bool = True) -> str:
    modules = MODULES[slug]
    first, second, third = (m.replace("/", "_") for m in modules[3:6])
    opened = today - dt.timedelta(days=12)
    entries = [
        (
            "FRZ-014",
            f"tests/test_{first}.py::test_{first}_00",
            f"src/{modules[3]}.py",
            "finley",
            opened,
            today + dt.timedelta(days=2),
            "wall-clock boundary: fails about 1 in 40 CI runs around midnight UTC",
            "clock-dependent",
            f"tests/test_{first}.py::test_{first}_01",
        ),
        (
            "FRZ-021",
            f"tests/test_{second}.py::test_{second}_03",
            f"src/{modules[4]}/**",
            "payments-team",
            today - dt.timedelta(days=3),
            today + dt.timedelta(days=9),
            "connection reset by the sandbox gateway under load",
            "network-dependent",
            None,
        ),
        (
            "FRZ-009",
            f"tests/test_{third}.py::test_{third}_05",
            f"src/{modules[5]}.py",
            "riley@example.com",
            today - dt.timedelta(days=20),
            today - dt.timedelta(days=4),
            "timeout waiting for the search index to refresh",
            "timeout",
            None,
        ),
    ]
    if not with_expired:
        entries = entries[:2]
    if renewed:
        # The second version renews FRZ-021 without a new reason: a silent renewal.
        entries[1] = (*entries[1][:5], today + dt.timedelta(days=11), *entries[1][6:])
    lines = []
    for fid, test, cover, owner, opened_on, expires, reason, klass, check in entries:
        lines += [
            "[[freeze]]",
            f'id = "{fid}"',
            f'test = "{test}"',
            f'covers = ["{cover}"]',
            f'owner = "{owner}"',
            f"opened = {opened_on.isoformat()}",
            f"expires = {expires.isoformat()}",
            f'reason = "{reason}"',
            f'class = "{klass}"',
        ]
        if check:
            lines.append(f'compensating_check = "{check}"')
        if fid == "FRZ-014" and slug == ANALYSIS_REPOSITORY:
            # The analysis demo's patch changes this symbol (evidence/demo/analysis.py).
            lines.append('blocks_symbols = ["shop.pricing:round_price"]')
        lines.append("")
    return "\n".join(lines)


HISTORY_OWNERS = ("finley", "payments-team", "riley@example.com", "mobile-oncall")
# Reasons that name an environmental signal, with the class that fits each (section 5.5).
HISTORY_REASONS = (
    ("timeout waiting for the staging queue to drain", "timeout"),
    ("connection reset by the sandbox gateway under load", "network-dependent"),
    ("depends on the ordering of a set across xdist workers", "order-dependent"),
    ("wall-clock boundary around midnight UTC", "clock-dependent"),
    ("missing optional service in the CI image", "missing-service"),
)


@dataclass
class LedgerEntry:
    """One freeze as the ledger file spells it, over its life in the history."""

    id: str
    test: str
    cover: str
    owner: str
    opened: dt.date
    expires: dt.date
    reason: str
    klass: str
    check: str | None = None
    retired: dt.date | None = None  # first day it is no longer in the ledger
    renewed_on: dt.date | None = None
    renewed_to: dt.date | None = None
    renewed_reason: str | None = None
    added: dt.date | None = None  # first day in the ledger, when later than ``opened``

    def state_on(self, day: dt.date) -> tuple[dt.date, str] | None:
        """Expiry and reason in the ledger on ``day``; None when not in the ledger then."""
        if day < (self.added or self.opened) or (self.retired is not None and day >= self.retired):
            return None
        if self.renewed_on is not None and day >= self.renewed_on:
            assert self.renewed_to is not None  # noqa: S101 - set together
            return self.renewed_to, self.renewed_reason or self.reason
        return self.expires, self.reason


def ledger_text(entries: list[LedgerEntry], day: dt.date) -> str:
    lines = []
    for entry in entries:
        state = entry.state_on(day)
        if state is None:
            continue
        expires, reason = state
        lines += [
            "[[freeze]]",
            f'id = "{entry.id}"',
            f'test = "{entry.test}"',
            f'covers = ["{entry.cover}"]',
            f'owner = "{entry.owner}"',
            f"opened = {entry.opened.isoformat()}",
            f"expires = {expires.isoformat()}",
            f'reason = "{reason}"',
            f'class = "{entry.klass}"',
        ]
        if entry.check:
            lines.append(f'compensating_check = "{entry.check}"')
        lines.append("")
    return "\n".join(lines)


def current_entries(slug: str, today: dt.date, *, clean: bool) -> list[LedgerEntry]:
    """The freezes of the ledger today (as ``_ledger`` writes them), with their history:
    FRZ-021 renewed silently yesterday, FRZ-009 (expired) retired yesterday in a clean ledger."""
    yesterday = today - dt.timedelta(days=1)
    entries = []
    for line_block in ledger_today(slug, today, renewed=False).split("[[freeze]]")[1:]:
        fields = {}
        for line in line_block.strip().splitlines():
            key, _, value = line.partition(" = ")
            fields[key] = value.strip('"[]')
        entry = LedgerEntry(
            id=fields["id"],
            test=fields["test"],
            cover=fields["covers"].strip('"'),
            owner=fields["owner"],
            opened=dt.date.fromisoformat(fields["opened"]),
            expires=dt.date.fromisoformat(fields["expires"]),
            reason=fields["reason"],
            klass=fields["class"],
            check=fields.get("compensating_check"),
        )
        if entry.id == "FRZ-021":
            entry.renewed_on, entry.renewed_to = yesterday, today + dt.timedelta(days=11)
        if entry.id == "FRZ-009":
            # Written into the ledger a week late, with a span the policy refuses: every patch
            # blocks on invalid-freeze from then on (and on expired-freeze once it lapses).
            entry.added = today - dt.timedelta(days=8)
            if clean:
                entry.retired = yesterday
        entries.append(entry)
    return entries


def history_entries(
    slug: str, today: dt.date, rng: random.Random, *, days: int
) -> list[LedgerEntry]:
    """Freezes opened, renewed, left to expire and retired over the last 90 days."""
    modules = [m.replace("/", "_") for m in MODULES[slug]]
    candidates = [m for i, m in enumerate(modules) if i not in (3, 4, 5)]
    entries = []
    opened = today - dt.timedelta(days=days - 2)
    for number in range(1, 9):
        module = rng.choice(candidates)
        reason, klass = rng.choice(HISTORY_REASONS)
        expires = opened + dt.timedelta(days=rng.randint(5, 9))
        entry = LedgerEntry(
            id=f"FRZ-{number:03d}",
            test=f"tests/test_{module}.py::test_{module}_{rng.randint(2, 15):02d}",
            cover=f"src/{MODULES[slug][modules.index(module)]}.py",
            owner=rng.choice(HISTORY_OWNERS),
            opened=opened,
            expires=expires,
            reason=reason,
            klass=klass,
        )
        if rng.random() < 0.4:
            # Renewed the day before expiry, within the 14 days a freeze may last; half of the
            # renewals keep the old reason (silent).
            entry.renewed_on = expires - dt.timedelta(days=1)
            entry.renewed_to = opened + dt.timedelta(days=rng.randint(12, 14))
            if rng.random() < 0.5:
                entry.renewed_reason = f"{entry.reason}; fix under review"
            expires = entry.renewed_to
        # Retired a little before or some days after it expired (expired debt meanwhile).
        entry.retired = expires + dt.timedelta(days=rng.choice([-1, 1, 1, 2, 3, 5]))
        if entry.retired >= today - dt.timedelta(days=3):
            break
        entries.append(entry)
        opened += dt.timedelta(days=rng.randint(6, 12))
    return entries
