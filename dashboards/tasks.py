"""Celery tasks of the dashboards app: thin wrappers that call a service."""

import datetime

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from dashboards.snapshots import snapshots_backfill


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
