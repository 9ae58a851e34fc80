"""The demo stored through the services CI uses: uploads, ingests, ledger syncs and declared
patches, dated when they happened."""

from __future__ import annotations

import datetime as dt
import io
import random

from django.conf import settings
from django.utils import timezone

from evidence import uploads
from evidence.demo.suites import Suite, new_sha
from evidence.ingest import run_ingest, run_receive
from evidence.models import Repository, Run
from evidence.patches import patch_declare
from freezedebt_ci.changes import parse_name_status
from ledger.models import Freeze, FreezeEvent, LedgerVersion
from ledger.sync import ledger_sync


def time_on(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    """A time on ``day`` in the server's zone; never later than now, so nothing of the demo
    lies in the future when it is loaded for today."""
    moment = timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))
    return min(moment, timezone.now()) if moment.date() >= timezone.localdate() else moment


def upload(repository: Repository, sha: str, suite: Suite, *, branch: str, attempt: int = 1) -> Run:
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


def ingest_at(
    repository: Repository, sha: str, suite: Suite, *, branch: str, at: dt.datetime
) -> Run:
    run = upload(repository, sha, suite, branch=branch)
    # Parsed now rather than after commit: the report of the next patch reads it at once.
    run_ingest(run_id=run.pk)
    Run.objects.filter(pk=run.pk).update(created_at=at, parsed_at=at)
    return run


def sync_at(repository: Repository, sha: str, raw: str, at: dt.datetime) -> None:
    synced = ledger_sync(repository=repository, sha=sha, raw=raw, path="freeze_ledger.toml")
    # Dated when it happened, so the snapshots of past days see the ledger as it was.
    LedgerVersion.objects.filter(pk=synced.version.pk).update(created_at=at)
    FreezeEvent.objects.filter(ledger_version=synced.version).update(created_at=at)
    Freeze.objects.filter(first_version=synced.version).update(created_at=at)


def declare_patch(
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
    head_sha = new_sha(rng)
    if head is not None:
        upload(repository, head_sha, head, branch=f"feature/{ref.lower()}")
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
