"""Demo data: real-looking repositories, evidence, patches and ledgers, stored through the same
services CI uses, so the first page a newcomer opens is populated and every report is real."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from evidence import uploads
from evidence.ingest import run_receive
from evidence.models import Repository, Run, UploadToken
from evidence.patches import patch_declare
from evidence.services import repository_create, token_create
from freezedebt_ci.changes import parse_name_status
from ledger.models import Owner
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


def demo_load(*, today: dt.date | None = None, stdout=None) -> bool:
    """Load the demo once; returns False (and changes nothing) when it is already there."""
    today = today or timezone.localdate()
    if Repository.objects.filter(slug__in=list(MODULES)).exists():
        return False
    user_model = get_user_model()
    if not user_model.objects.filter(username=DEMO_USER).exists():
        user_model.objects.create_user(
            DEMO_USER,
            "lead@example.com",
            DEMO_PASSWORD,
            is_staff=True,
            first_name="Lee",
            last_name="Adams",
        )
    # "finley" and the payments team are in the directory; riley is an e-mail address, its own
    # owner; "mobile-oncall" (unused here) would show as unowned.
    Owner.objects.get_or_create(
        handle="finley", defaults={"name": "Finley Park", "email": "finley@example.com"}
    )
    Owner.objects.get_or_create(
        handle="payments-team",
        defaults={"name": "Payments team", "email": "payments@example.com", "is_team": True},
    )
    for offset, slug in enumerate(MODULES):
        rng = _RNG(2026 + offset)
        with transaction.atomic():
            repository = repository_create(slug=slug, name=slug.replace("-", " ").title())
            token_create(repository=repository, scope=UploadToken.Scope.EVIDENCE, name="ci")
            token_create(repository=repository, scope=UploadToken.Scope.LEDGER, name="main")
        first_sha, base_sha = _sha(rng), _sha(rng)
        # The last repository keeps its ledger clean, so some of its patches pass.
        clean = offset == len(MODULES) - 1
        ledger_sync(
            repository=repository,
            sha=first_sha,
            raw=_ledger(slug, today, renewed=False),
            path="freeze_ledger.toml",
        )
        ledger_sync(
            repository=repository,
            sha=base_sha,
            raw=_ledger(slug, today, renewed=True, with_expired=not clean),
            path="freeze_ledger.toml",
        )
        base = _base_suite(slug, rng)
        frozen_tests = [
            line.split('"')[1]
            for line in _ledger(slug, today, renewed=True).splitlines()
            if line.startswith("test = ")
        ]
        for nodeid in frozen_tests[:2]:  # the active freezes skip their tests
            base.outcomes[nodeid] = "skipped"
        _upload(repository, base_sha, base, branch="main")
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
        if stdout is not None:
            stdout.write(f"loaded demo repository {slug}\n")
    return True
