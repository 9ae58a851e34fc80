"""Celery tasks of the dashboards app: thin wrappers that call a service."""

import datetime

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from dashboards import freshness
from dashboards.snapshots import snapshot_take, snapshots_backfill
from evidence.models import Repository


@shared_task(
    acks_late=True,
    # Idempotent, so a retry after a lost database connection rewrites the same rows.
    autoretry_for=(OperationalError,),
    retry_backoff=60,
    retry_backoff_max=1800,
    retry_jitter=True,
    max_retries=6,
)
def snapshot_debt(day: str | None = None) -> int:
    """Snapshot yesterday (now complete) and today so far, for every repository (beat, daily).

    Today's row is rewritten with its final figures by the next night's run, so the overview
    shows today's debt instead of yesterday's.
    """
    today = datetime.date.fromisoformat(day) if day else timezone.localdate()
    return snapshots_backfill(day=today, days=2)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=5,
    retry_jitter=True,
    max_retries=5,
)
def refresh_today(repository_id: int) -> None:
    """Take today's snapshot of one repository again (see dashboards.live); a repository that
    is gone is left alone."""
    freshness.refresh_started(repository_id)
    repository = Repository.objects.filter(pk=repository_id).first()
    if repository is None:
        return
    snapshot_take(repository=repository, day=timezone.localdate())
    freshness.bump_generation()
