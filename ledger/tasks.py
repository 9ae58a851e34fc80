"""Celery tasks of the ledger app: thin wrappers that call a service."""

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from ledger.reminders import ReminderDeliveryFailed, reminders_send


@shared_task(
    acks_late=True,
    # A mail server or database that is away for a while; the claims of unsent e-mails stay
    # unsent and failed, so the retry sends exactly those and nothing twice.
    autoretry_for=(ReminderDeliveryFailed, OperationalError),
    retry_backoff=60,
    retry_backoff_max=1800,
    retry_jitter=True,
    max_retries=6,
)
def send_freeze_reminders() -> dict[str, int]:
    """Owner reminders and lead digests due today (beat, hourly)."""
    run = reminders_send(today=timezone.localdate())
    return {"reminders": run.reminders_sent, "digests": run.digests_sent}
