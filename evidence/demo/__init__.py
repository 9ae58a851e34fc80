"""Demo data: real-looking repositories, evidence, patches and ledgers, stored through the same
services CI uses, so the first page a newcomer opens is populated and every report is real."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import shutil
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from dashboards import live
from dashboards.snapshots import snapshots_backfill
from evidence import uploads
from evidence.demo_analysis import demo_analyses
from evidence.ingest import run_ingest, run_receive
from evidence.models import Patch, Report, Repository, Run, Team, UploadToken
from evidence.patches import patch_declare
from evidence.reports import report_body, report_compute, run_evidence, run_for_report
from evidence.services import repository_create, token_create
from freezedebt_ci.changes import parse_name_status
from ledger.governance import governance_sync
from ledger.models import (
    Freeze,
    FreezeAction,
    FreezeEvent,
    GovernanceFile,
    LedgerVersion,
    Owner,
)
from ledger.owners import owners_resolve
from ledger.sync import ledger_sync

# Seeded generators of sample data, never of secrets.
_RNG = random.Random

DEMO_USER = "lead"
DEMO_PASSWORD = "freezedebt-demo"  # noqa: S105 - the documented demo login, local only


@dataclass
class Suite:
    """A test suite as a mapping of node id to outcome, plus exit status and meta."""

    outcomes: dict[str, str]
    meta: dict[str, str] = field(default_factory=dict)

    def copy(self) -> Suite:
        return Suite(dict(self.outcomes), dict(self.meta))

    def evidence(self) -> bytes:
        records = []
        for nodeid, outcome in self.outcomes.items():
            xfail = outcome == "xfail"
            records.append(
                {
                    "nodeid": nodeid,
                    "when": "setup" if outcome == "skipped" else "call",
                    "outcome": "skipped" if xfail else outcome,
                    "xfail": xfail,
                    "duration": round(_RNG(nodeid).uniform(0.001, 0.4), 4),
                }
            )
        exit_status = 1 if "failed" in self.outcomes.values() else 0
        doc = {
            "format": "freezedebt-evidence/1",
            "exit": exit_status,
            "meta": self.meta,
            "records": records,
        }
        return json.dumps(doc).encode()


MODULES = {
    "shop-api": [
        "orders",
        "cart",
        "checkout",
        "pricing/rounding",
        "pricing/discounts",
        "inventory",
        "payments/gateway",
        "payments/refunds",
        "search",
        "auth",
    ],
    "billing-engine": [
        "invoices",
        "ledger_entries",
        "tax/vat",
        "tax/us_sales",
        "dunning",
        "currency",
        "reports",
        "webhooks",
    ],
    "mobile-backend": [
        "push",
        "sessions",
        "profiles",
        "feed",
        "media/upload",
        "media/transcode",
        "rate_limits",
    ],
}


def _base_suite(slug: str, rng: random.Random) -> Suite:
    outcomes: dict[str, str] = {}
    for module in MODULES[slug]:
        name = module.replace("/", "_")
        for index in range(rng.randint(18, 45)):
            outcomes[f"tests/test_{name}.py::test_{name}_{index:02d}"] = "passed"
        outcomes[f"tests/test_{name}.py::test_{name}_roundtrip[utf8]"] = "passed"
        outcomes[f"tests/test_{name}.py::test_{name}_roundtrip[latin1]"] = "passed"
    nodeids = sorted(outcomes)
    for nodeid in rng.sample(nodeids, 3):
        outcomes[nodeid] = "skipped"
    outcomes[rng.choice(nodeids)] = "xfail"
    meta = {
        "python": "3.12.7",
        "image_digest": f"sha256:{rng.getrandbits(256):064x}",
        "lockfile_sha256": f"{rng.getrandbits(256):064x}",
        "branch": "main",
    }
    return Suite(outcomes, meta)


def _sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(160):040x}"


# The repository whose patches carry real analyses (its ledger is clean: they can pass).
ANALYSIS_REPOSITORY = "mobile-backend"


def _ledger(slug: str, today: dt.date, *, renewed: bool, with_expired: bool = True) -> str:
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
            # The analysis demo's patch changes this symbol (evidence/demo_analysis.py).
            lines.append('blocks_symbols = ["shop.pricing:round_price"]')
        lines.append("")
    return "\n".join(lines)


def _upload(
    repository: Repository, sha: str, suite: Suite, *, branch: str, attempt: int = 1
) -> Run:
    body = uploads.read_body(
        io.BytesIO(suite.evidence()),
        coding=uploads.IDENTITY,
        max_bytes=settings.FREEZEDEBT_MAX_UPLOAD_BYTES,
        max_decompressed=settings.FREEZEDEBT_MAX_DECOMPRESSED_BYTES,
    )
    run, _ = run_receive(
        repository=repository,
        sha=sha,
        branch=branch,
        label="",
        attempt=attempt,
        content_type="application/json",
        body=body,
    )
    return run


def _patch(
    repository: Repository,
    rng: random.Random,
    base_sha: str,
    base: Suite,
    *,
    ref: str,
    title: str,
    author: str,
    head: Suite | None,
    changed: str,
) -> None:
    head_sha = _sha(rng)
    if head is not None:
        _upload(repository, head_sha, head, branch=f"feature/{ref.lower()}")
    patch_declare(
        repository=repository,
        ref=ref,
        base_sha=base_sha,
        head_sha=head_sha,
        changes=parse_name_status(changed),
        title=title,
        author=author,
        url=f"https://git.example.com/{repository.slug}/pull/{ref.split('-')[1]}",
    )


def _scenarios(slug: str, base: Suite, rng: random.Random) -> list[dict]:
    modules = MODULES[slug]
    frozen_module = modules[3]
    name0 = modules[0].replace("/", "_")
    name1 = modules[1].replace("/", "_")
    name2 = modules[2].replace("/", "_")

    adds = base.copy()
    for index in range(4):
        adds.outcomes[f"tests/test_{name0}.py::test_{name0}_edge_{index}"] = "passed"
    skips = base.copy()
    victim = next(
        n
        for n in sorted(skips.outcomes)
        if n.startswith(f"tests/test_{name1}.py") and skips.outcomes[n] == "passed"
    )
    skips.outcomes[victim] = "skipped"
    lost = base.copy()
    for nodeid in [n for n in sorted(lost.outcomes) if n.startswith(f"tests/test_{name2}.py")][:3]:
        del lost.outcomes[nodeid]
    for index in range(10):
        lost.outcomes[f"tests/test_{name2}.py::test_{name2}_cheap_{index}"] = "passed"
    failing = base.copy()
    failing.outcomes[
        next(n for n in sorted(failing.outcomes) if failing.outcomes[n] == "passed")
    ] = "failed"
    drift = adds.copy()
    drift.meta["python"] = "3.13.1"
    frozen = adds.copy()
    return [
        {
            "ref": "PR-101",
            "title": f"Add edge cases for {modules[0]}",
            "head": adds,
            "changed": f"M\tsrc/{modules[0]}.py\nM\ttests/test_{name0}.py\n",
        },
        {
            "ref": "PR-102",
            "title": f"Speed up {modules[3]}",
            "head": frozen,
            "changed": f"M\tsrc/{frozen_module}.py\nM\ttests/test_{name0}.py\n",
        },
        {
            "ref": "PR-103",
            "title": f"Skip slow {modules[1]} test",
            "head": skips,
            "changed": f"M\ttests/test_{name1}.py\n",
        },
        {
            "ref": "PR-104",
            "title": f"Rewrite {modules[2]} tests",
            "head": lost,
            "changed": f"M\ttests/test_{name2}.py\nM\ttests/fixtures/{name2}.json\n",
        },
        {
            "ref": "PR-105",
            "title": "Refactor error handling",
            "head": failing,
            "changed": f"M\tsrc/{modules[1]}.py\n",
        },
        {
            "ref": "PR-106",
            "title": "Bump runtime",
            "head": drift,
            "changed": "M\tDockerfile\nM\tsrc/settings.py\n",
        },
        {
            "ref": "PR-107",
            "title": "Update the freeze ledger",
            "head": adds,
            "changed": "M\tfreeze_ledger.toml\n",
        },
        {
            "ref": "PR-108",
            "title": "Work in progress",
            "head": None,
            "changed": f"M\tsrc/{modules[0]}.py\n",
        },
        {
            "ref": "PR-109",
            "title": "Rebase onto a commit CI never ran",
            "head": adds,
            "changed": f"M\tsrc/{modules[0]}.py\n",
            "unknown_base": True,
        },
    ]


# --- 90 days of history ----------------------------------------------------------------------

HISTORY_DAYS = 90
# A default-branch run every few days; the skips it carries drift up and down.
RUN_EVERY_DAYS = 4
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


def _ledger_text(entries: list[LedgerEntry], day: dt.date) -> str:
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


def _current_entries(slug: str, today: dt.date, *, clean: bool) -> list[LedgerEntry]:
    """The freezes of the ledger today (as ``_ledger`` writes them), with their history:
    FRZ-021 renewed silently yesterday, FRZ-009 (expired) retired yesterday in a clean ledger."""
    yesterday = today - dt.timedelta(days=1)
    entries = []
    for line_block in _ledger(slug, today, renewed=False).split("[[freeze]]")[1:]:
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


def _history_entries(
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


def _moment(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    """A time on ``day`` in the server's zone; never later than now, so nothing of the demo
    lies in the future when it is loaded for today."""
    moment = timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))
    return min(moment, timezone.now()) if moment.date() >= timezone.localdate() else moment


def _sync(repository: Repository, sha: str, raw: str, at: dt.datetime) -> None:
    synced = ledger_sync(repository=repository, sha=sha, raw=raw, path="freeze_ledger.toml")
    # Dated when it happened, so the snapshots of past days see the ledger as it was.
    LedgerVersion.objects.filter(pk=synced.version.pk).update(created_at=at)
    FreezeEvent.objects.filter(ledger_version=synced.version).update(created_at=at)
    Freeze.objects.filter(first_version=synced.version).update(created_at=at)


def _ingest(repository: Repository, sha: str, suite: Suite, *, branch: str, at: dt.datetime) -> Run:
    run = _upload(repository, sha, suite, branch=branch)
    # Parsed now rather than after commit: the report of the next patch reads it at once.
    run_ingest(run_id=run.pk)
    Run.objects.filter(pk=run.pk).update(created_at=at, parsed_at=at)
    return run


def _historical_patch(
    repository: Repository,
    rng: random.Random,
    *,
    number: int,
    day: dt.date,
    at: dt.datetime,
    base_sha: str,
    base: Suite,
    frozen_covers: list[str],
) -> None:
    """A patch reported on a past day, judged by the rules as they stood on that day."""
    # Ordinary work stays clear of frozen code; the "frozen" kind touches it on purpose.
    modules = [
        m
        for m in MODULES[repository.slug]
        if not any(c.startswith(f"src/{m}") for c in frozen_covers)
    ]
    module = rng.choice(modules)
    name = module.replace("/", "_")
    head = base.copy()
    changed = [f"M\tsrc/{module}.py", f"M\ttests/test_{name}.py"]
    kind = rng.choices(
        ["adds", "skip", "lost", "failed", "frozen", "fixture", "drift"],
        weights=[60, 9, 7, 7, 6, 6, 5],
    )[0]
    passing = sorted(n for n, o in head.outcomes.items() if o == "passed" and f"_{name}" in n)
    for index in range(rng.randint(1, 5)):
        head.outcomes[f"tests/test_{name}.py::test_{name}_p{number}_{index}"] = "passed"
    title = f"Improve {module}"
    if kind == "skip" and passing:
        head.outcomes[rng.choice(passing)] = "skipped"
        title = f"Skip a slow {module} test"
    elif kind == "lost" and passing:
        for nodeid in passing[:2]:
            del head.outcomes[nodeid]
        title = f"Consolidate {module} tests"
    elif kind == "failed" and passing:
        head.outcomes[rng.choice(passing)] = "failed"
        title = f"Refactor {module}"
    elif kind == "frozen" and frozen_covers:
        changed = [f"M\t{rng.choice(frozen_covers).replace('/**', '/core.py')}"]
        title = "Touch code guarded by a frozen test"
    elif kind == "fixture":
        changed.append(f"M\ttests/fixtures/{name}.json")
        title = f"Refresh {module} fixtures"
    elif kind == "drift":
        head.meta["python"] = "3.13.1"
        title = "Try the next Python release"
    head_sha = _sha(rng)
    _ingest(repository, head_sha, head, branch=f"feature/pr-{number}", at=at)
    patch = Patch.objects.create(
        repository=repository,
        ref=f"PR-{number}",
        base_sha=base_sha,
        head_sha=head_sha,
        title=title,
        author=rng.choice(["ana", "bo", "chen", "dee"]),
        url=f"https://git.example.com/{repository.slug}/pull/{number}",
        changed=[c.as_dict() for c in sorted(set(parse_name_status("\n".join(changed) + "\n")))],
        created_at=at,
    )
    runs = [
        run_for_report(repository=repository, sha=sha, label="") for sha in (base_sha, head_sha)
    ]
    base_evidence, head_evidence = (run_evidence(run) if run else None for run in runs)
    body = report_body(patch, base=base_evidence, head=head_evidence, today=day)
    Report.objects.create(
        patch=patch,
        **Report.fields_of(body),
        computed_at=at + dt.timedelta(seconds=30),
        created_at=at,
    )


def _acknowledge_some(repository: Repository, rng: random.Random, today: dt.date) -> None:
    """Owners answered about half of the freeze versions within a day or two; FRZ-014's
    current version is acknowledged, the rest of today's ledger is not."""
    events: dict[int, list[dt.datetime]] = {}
    freezes = {}
    for event in FreezeEvent.objects.filter(repository=repository).select_related("freeze"):
        events.setdefault(event.freeze_id, []).append(event.created_at)
        freezes[event.freeze_id] = event.freeze
    owners = owners_resolve(freeze.owner for freeze in freezes.values())
    actions = []
    now = timezone.now()
    for pk, times in events.items():
        freeze = freezes[pk]
        owner = owners.get(freeze.owner)
        if owner is None:
            continue
        times.sort()
        for version, created in enumerate(times, start=1):
            if freeze.current and version == freeze.version:
                answered = freeze.freeze_id == "FRZ-014"
            else:
                answered = rng.random() < 0.5
            moment = created + dt.timedelta(hours=rng.randint(4, 40))
            later = times[version] if version < len(times) else None
            if not answered or moment > now or (later is not None and moment >= later):
                continue
            actions.append(
                FreezeAction(
                    freeze=freeze,
                    freeze_version=version,
                    owner_email=owner.email,
                    action=FreezeAction.Action.ACKNOWLEDGE,
                    nonce=f"demo-{rng.getrandbits(96):024x}",
                    created_at=moment,
                )
            )
    FreezeAction.objects.bulk_create(actions)


def _history(
    repository: Repository, today: dt.date, base: Suite, entries: list[LedgerEntry], *, days: int
) -> set[str]:
    """Ledger versions, default-branch runs and patches from 90 days ago up to the day before
    yesterday (yesterday's ledger and base run are today's scenarios' own). Returns the skips
    the default branch carries at the end, so today's base run continues the same story."""
    rng = _RNG(f"{repository.slug}-history")
    first = today - dt.timedelta(days=days - 1)
    change_days = {first}
    for entry in entries:
        change_days.update(
            d for d in (entry.added, entry.opened, entry.retired, entry.renewed_on) if d
        )
    # Base-branch skips beyond the frozen tests drift between a few and a dozen.
    passing = sorted(n for n, o in base.outcomes.items() if o == "passed")
    extra_skips = set(rng.sample(passing, 2))
    base_sha, number, last_text = "", 0, None
    for offset in range(days - 2):
        day = first + dt.timedelta(days=offset)
        if day in change_days:
            text = _ledger_text(entries, day)
            if text != last_text:
                _sync(repository, _sha(rng), text, _moment(day, 8))
                last_text = text
        active_entries = [
            e for e in entries if (state := e.state_on(day)) is not None and state[0] >= day
        ]
        if offset % RUN_EVERY_DAYS == 0 or not base_sha:
            if rng.random() < 0.55 and len(extra_skips) < 10:
                extra_skips.add(rng.choice(passing))
            elif extra_skips and rng.random() < 0.6:
                extra_skips.discard(rng.choice(sorted(extra_skips)))
            suite = base.copy()
            for nodeid in extra_skips | {e.test for e in active_entries}:
                if nodeid in suite.outcomes:
                    suite.outcomes[nodeid] = "skipped"
            base_sha = _sha(rng)
            _ingest(repository, base_sha, suite, branch="main", at=_moment(day, 9))
            base_suite = suite
        for slot in range(rng.choice([0, 0, 0, 1, 1, 1, 1, 2])):
            number += 1
            if number > 100:  # PR-101 and up are today's scenarios
                break
            _historical_patch(
                repository,
                rng,
                number=number,
                day=day,
                at=_moment(day, 11 + 3 * slot, rng.randint(0, 59)),
                base_sha=base_sha,
                base=base_suite,
                frozen_covers=[e.cover for e in active_entries],
            )
    return extra_skips


def _load_repository(
    slug: str, offset: int, *, today: dt.date, team: Team, days: int
) -> Repository:
    rng = _RNG(2026 + offset)
    repository = repository_create(slug=slug, name=slug.replace("-", " ").title())
    # Registered when its history starts, so every day of the history gets its snapshot.
    registered = _moment(today - dt.timedelta(days=days - 1), 0)
    Repository.objects.filter(pk=repository.pk).update(created_at=registered)
    repository.created_at = registered
    token_create(repository=repository, scope=UploadToken.Scope.EVIDENCE, name="ci")
    token_create(repository=repository, scope=UploadToken.Scope.LEDGER, name="main")
    team.repositories.add(repository)
    first_sha, base_sha = _sha(rng), _sha(rng)
    # The last repository keeps its ledger clean, so some of its patches pass.
    clean = offset == len(MODULES) - 1
    base = _base_suite(slug, rng)
    current = _current_entries(slug, today, clean=clean)
    history = _history_entries(slug, today, _RNG(f"{slug}-ledger"), days=days)
    entries = history + current
    inherited_skips = _history(repository, today, base, entries, days=days)
    yesterday = today - dt.timedelta(days=1)
    # Today's ledger: FRZ-021 renewed silently at the base commit.
    _sync(repository, first_sha, _ledger(slug, today, renewed=False), _moment(yesterday, 7))
    _sync(
        repository,
        base_sha,
        _ledger(slug, today, renewed=True, with_expired=not clean),
        _moment(yesterday, 8),
    )
    frozen_tests = [
        line.split('"')[1]
        for line in _ledger(slug, today, renewed=True).splitlines()
        if line.startswith("test = ")
    ]
    for nodeid in [*frozen_tests[:2], *sorted(inherited_skips)]:  # freezes and old skips
        base.outcomes[nodeid] = "skipped"
    _ingest(repository, base_sha, base, branch="main", at=_moment(yesterday, 9))
    for scenario in _scenarios(slug, base, rng):
        patch_base = _sha(rng) if scenario.get("unknown_base") else base_sha
        _patch(
            repository,
            rng,
            patch_base,
            base,
            ref=scenario["ref"],
            title=scenario["title"],
            author=rng.choice(["ana", "bo", "chen", "dee"]),
            head=scenario["head"],
            changed=scenario["changed"],
        )
    if slug == ANALYSIS_REPOSITORY:
        _analysis_patches(
            repository,
            base,
            today=today,
            ledger=_ledger(slug, today, renewed=True, with_expired=False),
            governance_sha=base_sha,
            at=_moment(yesterday, 8, 30),
        )
    _acknowledge_some(repository, _RNG(f"{slug}-acks"), today)
    return repository


def _analysis_patches(
    repository: Repository,
    base: Suite,
    *,
    today: dt.date,
    ledger: str,
    governance_sha: str,
    at: dt.datetime,
) -> None:
    """Patches with real analyses: the demo git repository (whose ledger is this repository's)
    built in a temporary directory and analyzed as CI would, its fixture lock and oracle map
    synced from the default branch. Skipped where git is not installed."""
    if shutil.which("git") is None:
        return
    built = demo_analyses(today=today, ledger=ledger)
    for kind, text in (
        (GovernanceFile.Kind.FIXTURE_LOCK, built.fixture_lock),
        (GovernanceFile.Kind.ORACLE_MAP, built.oracle_map),
    ):
        governance_sync(
            repository=repository, kind=kind, sha=governance_sha, data=text.encode("utf-8")
        )
    _ingest(repository, built.base_sha, base, branch="main", at=at)
    for demo_patch in built.patches:
        head = base.copy()
        if demo_patch.ref == "PR-301":
            head.outcomes["tests/test_shipping.py::test_shipping_cost"] = "passed"
        _upload(repository, demo_patch.head_sha, head, branch=f"feature/{demo_patch.ref.lower()}")
        patch_declare(
            repository=repository,
            ref=demo_patch.ref,
            base_sha=demo_patch.base_sha,
            head_sha=demo_patch.head_sha,
            changes=parse_name_status("\n".join(demo_patch.changed)),
            title=demo_patch.title,
            author="dee",
            url=f"https://git.example.com/{repository.slug}/pull/{demo_patch.ref.split('-')[1]}",
            analysis=demo_patch.analysis,
        )


def demo_load(
    *, today: dt.date | None = None, stdout=None, history_days: int = HISTORY_DAYS
) -> bool:
    """Load the demo once; returns False (and changes nothing) when it is already there.

    Three repositories with ``history_days`` (90) days of history (ledger versions,
    default-branch runs, patches that pass and that block for each problem code), owned by the
    team "platform" whose member is the demo lead, and the debt snapshots of those days.
    """
    today = today or timezone.localdate()
    if Repository.objects.filter(slug__in=list(MODULES)).exists():
        return False
    # The demo is dated on its own ``today`` and takes its snapshots itself.
    with live.suspended():
        return _demo_load(today=today, stdout=stdout, history_days=history_days)


def _demo_load(*, today: dt.date, stdout, history_days: int) -> bool:
    user_model = get_user_model()
    lead = user_model.objects.filter(username=DEMO_USER).first()
    if lead is None:
        # A lead, not staff: they see the repositories of their team, as leads do.
        lead = user_model.objects.create_user(
            DEMO_USER,
            "lead@example.com",
            DEMO_PASSWORD,
            first_name="Lee",
            last_name="Adams",
        )
    # "finley" and the payments team are in the directory; riley is an e-mail address, its own
    # owner; "mobile-oncall" shows as unowned.
    Owner.objects.get_or_create(
        handle="finley", defaults={"name": "Finley Park", "email": "finley@example.com"}
    )
    Owner.objects.get_or_create(
        handle="payments-team",
        defaults={"name": "Payments team", "email": "payments@example.com", "is_team": True},
    )
    team, _ = Team.objects.get_or_create(slug="platform", defaults={"name": "Platform"})
    team.members.add(lead)
    repositories = []
    for offset, slug in enumerate(MODULES):
        # One transaction per repository: hundreds of small commits would each wait for the disk.
        with transaction.atomic():
            repositories.append(
                _load_repository(slug, offset, today=today, team=team, days=history_days)
            )
        if stdout is not None:
            stdout.write(f"loaded demo repository {slug}\n")
    scenario_refs = [f"PR-{number}" for number in (*range(101, 110), 301, 302)]
    for patch in Patch.objects.filter(repository__in=repositories, ref__in=scenario_refs):
        # Today's scenarios are reported now (after commit, too, where a caller holds one).
        report_compute(patch_id=patch.pk)
    written = snapshots_backfill(day=today, days=history_days, repositories=repositories)
    if stdout is not None:
        stdout.write(f"took {written} daily debt snapshots\n")
    return True
