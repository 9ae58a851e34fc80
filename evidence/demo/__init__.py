"""Demo data: real-looking repositories, evidence, patches and ledgers, stored through the same
services CI uses, so the first page a newcomer opens is populated and every report is real."""

from __future__ import annotations

import datetime as dt
import shutil

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from dashboards import live
from dashboards.snapshots import snapshots_backfill
from evidence.demo.analysis import demo_analyses
from evidence.demo.history import HISTORY_DAYS, acknowledge_some, history_store
from evidence.demo.ledgers import (
    ANALYSIS_REPOSITORY,
    current_entries,
    history_entries,
    ledger_today,
)
from evidence.demo.scenarios import scenarios
from evidence.demo.storing import declare_patch, ingest_at, sync_at, time_on, upload
from evidence.demo.suites import MODULES, RNG, Suite, base_suite, new_sha
from evidence.models import Patch, Repository, Team, UploadToken
from evidence.patches import patch_declare
from evidence.reports import report_compute
from evidence.services import repository_create, token_create
from freezedebt_ci.changes import parse_name_status
from ledger.governance import governance_sync
from ledger.models import GovernanceFile, Owner

DEMO_USER = "lead"
DEMO_PASSWORD = "freezedebt-demo"  # noqa: S105 - the documented demo login, local only


def _load_repository(
    slug: str, offset: int, *, today: dt.date, team: Team, days: int
) -> Repository:
    rng = RNG(2026 + offset)
    repository = repository_create(slug=slug, name=slug.replace("-", " ").title())
    # Registered when its history starts, so every day of the history gets its snapshot.
    registered = time_on(today - dt.timedelta(days=days - 1), 0)
    Repository.objects.filter(pk=repository.pk).update(created_at=registered)
    repository.created_at = registered
    token_create(repository=repository, scope=UploadToken.Scope.EVIDENCE, name="ci")
    token_create(repository=repository, scope=UploadToken.Scope.LEDGER, name="main")
    team.repositories.add(repository)
    first_sha, base_sha = new_sha(rng), new_sha(rng)
    # The last repository keeps its ledger clean, so some of its patches pass.
    clean = offset == len(MODULES) - 1
    base = base_suite(slug, rng)
    current = current_entries(slug, today, clean=clean)
    history = history_entries(slug, today, RNG(f"{slug}-ledger"), days=days)
    entries = history + current
    inherited_skips = history_store(repository, today, base, entries, days=days)
    yesterday = today - dt.timedelta(days=1)
    # Today's ledger: FRZ-021 renewed silently at the base commit.
    sync_at(repository, first_sha, ledger_today(slug, today, renewed=False), time_on(yesterday, 7))
    sync_at(
        repository,
        base_sha,
        ledger_today(slug, today, renewed=True, with_expired=not clean),
        time_on(yesterday, 8),
    )
    frozen_tests = [
        line.split('"')[1]
        for line in ledger_today(slug, today, renewed=True).splitlines()
        if line.startswith("test = ")
    ]
    for nodeid in [*frozen_tests[:2], *sorted(inherited_skips)]:  # freezes and old skips
        base.outcomes[nodeid] = "skipped"
    ingest_at(repository, base_sha, base, branch="main", at=time_on(yesterday, 9))
    for scenario in scenarios(slug, base, rng):
        patch_base = new_sha(rng) if scenario.get("unknown_base") else base_sha
        declare_patch(
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
            ledger=ledger_today(slug, today, renewed=True, with_expired=False),
            governance_sha=base_sha,
            at=time_on(yesterday, 8, 30),
        )
    acknowledge_some(repository, RNG(f"{slug}-acks"), today)
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
    ingest_at(repository, built.base_sha, base, branch="main", at=at)
    for demo_patch in built.patches:
        head = base.copy()
        if demo_patch.ref == "PR-301":
            head.outcomes["tests/test_shipping.py::test_shipping_cost"] = "passed"
        upload(repository, demo_patch.head_sha, head, branch=f"feature/{demo_patch.ref.lower()}")
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
