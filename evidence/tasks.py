"""Celery tasks of the evidence app: thin wrappers that load by id and call a service.

Services enqueue these by name (config.celery.task_named), so this module may import them.
"""

from celery import shared_task
from django.db import OperationalError

from evidence.ingest import run_ingest, runs_requeue_received
from evidence.reports import report_compute
from evidence.server_analysis import server_analysis_run


@shared_task(
    acks_late=True,
    # Only a lost or refused database connection is worth another try; anything else is a bug
    # or bad data and must surface. The run stays "received" meanwhile, so nothing is lost.
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=8,
)
def ingest_run(run_id: int) -> None:
    """Parse and store a received run; a run gone or already parsed is left alone."""
    run_ingest(run_id=run_id)


@shared_task(acks_late=True)
def sweep_received_runs() -> int:
    """Enqueue again the runs whose parsing never happened (beat, every few minutes)."""
    return len(runs_requeue_received())


@shared_task(
    name="evidence.compute_patch_report",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def compute_patch_report(patch_id: int) -> None:
    """Compute and store a patch's report from what is stored now (idempotent)."""
    report_compute(patch_id=patch_id)


@shared_task(
    name="evidence.analyze_patch",
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def analyze_patch(patch_id: int) -> None:
    """The server's own analysis of a patch, from its repository's git remote (bounded in
    time and disk by the mirror and the analysis budget)."""
    server_analysis_run(patch_id=patch_id)
