"""The demo's 90 days of history: ledger versions, default-branch runs whose skips drift,
patches judged by the rules as they stood on their day, and owners' acknowledgements."""

from __future__ import annotations

import datetime as dt
import random

from django.utils import timezone

from evidence.demo.ledgers import LedgerEntry, ledger_text
from evidence.demo.storing import ingest_at, sync_at, time_on
from evidence.demo.suites import MODULES, RNG, Suite, new_sha
from evidence.models import Patch, Report, Repository
from evidence.reports import report_body, run_evidence, run_for_report
from freezedebt_ci.changes import parse_name_status
from ledger.models import FreezeAction, FreezeEvent
from ledger.owners import owners_resolve

HISTORY_DAYS = 90
# A default-branch run every few days; the skips it carries drift up and down.
RUN_EVERY_DAYS = 4


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
    head_sha = new_sha(rng)
    ingest_at(repository, head_sha, head, branch=f"feature/pr-{number}", at=at)
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


def acknowledge_some(repository: Repository, rng: random.Random, today: dt.date) -> None:
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


def history_store(
    repository: Repository, today: dt.date, base: Suite, entries: list[LedgerEntry], *, days: int
) -> set[str]:
    """Ledger versions, default-branch runs and patches from 90 days ago up to the day before
    yesterday (yesterday's ledger and base run are today's scenarios' own). Returns the skips
    the default branch carries at the end, so today's base run continues the same story."""
    rng = RNG(f"{repository.slug}-history")
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
            text = ledger_text(entries, day)
            if text != last_text:
                sync_at(repository, new_sha(rng), text, time_on(day, 8))
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
            base_sha = new_sha(rng)
            ingest_at(repository, base_sha, suite, branch="main", at=time_on(day, 9))
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
                at=time_on(day, 11 + 3 * slot, rng.randint(0, 59)),
                base_sha=base_sha,
                base=base_suite,
                frozen_covers=[e.cover for e in active_entries],
            )
    return extra_skips
