"""The second process (SPEC 5.7, seed 004): for a repository with a git remote, a worker
fetches the patch's base and head into its own mirror and runs the same analysis the client
runs. The report judges that analysis, and an uploaded one that disagrees with it is an
``analysis-mismatch``: the process that grades a patch is not one the patch can edit."""

import logging
import time
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from evidence.mirror import MirrorError, mirror_fetch
from evidence.models import Patch, ServerAnalysis
from evidence.reports import enqueue_report
from freezedebt_ci.analysis import Options, analyze
from freezedebt_ci.errors import InputError

logger = logging.getLogger(__name__)


def server_analysis_run(*, patch_id: int) -> ServerAnalysis | None:
    """Analyze a patch from its repository's remote and store the result (done or failed),
    then recompute its report. None when the patch is gone or its repository has no remote."""
    patch = Patch.objects.select_related("repository").filter(pk=patch_id).first()
    if patch is None or not patch.repository.git_url:
        return None
    started = time.monotonic()
    analysis: dict[str, Any] | None = None
    error = ""
    try:
        mirror = mirror_fetch(patch.repository, (patch.base_sha, patch.head_sha))
        analysis = analyze(
            Options(
                repo=mirror,
                base=patch.base_sha,
                head=patch.head_sha,
                today=timezone.localdate(),
                budget=settings.FREEZEDEBT_ANALYSIS_BUDGET,
                cache=False,
            )
        )
    except MirrorError as exc:
        error = str(exc)
    except InputError as exc:
        error = exc.describe()[:2000]
    except Exception as exc:
        # Stored as failed first (the report then blocks rather than wait for ever), then
        # raised: an analyzer crash is a bug to see in the worker's log.
        _store(patch_id, None, f"the analysis crashed ({type(exc).__name__})", started)
        raise
    return _store(patch_id, analysis, error, started)


def _store(
    patch_id: int, analysis: dict[str, Any] | None, error: str, started: float
) -> ServerAnalysis | None:
    status = ServerAnalysis.Status.DONE if analysis is not None else ServerAnalysis.Status.FAILED
    with transaction.atomic():
        if not Patch.objects.filter(pk=patch_id).exists():
            return None
        stored, _ = ServerAnalysis.objects.update_or_create(
            patch_id=patch_id,
            defaults={
                "status": status,
                "analysis": analysis,
                "error": error,
                "seconds": round(time.monotonic() - started, 3),
            },
        )
        enqueue_report(patch_id)
    if error:
        logger.warning("server analysis of patch %s failed: %s", patch_id, error)
    return stored


def _send(patch_id: int) -> None:
    from evidence.tasks import analyze_patch  # the task calls this module's service

    try:
        analyze_patch.delay(patch_id)
    except BrokerError:
        # The report stays pending (the analysis "running") until the patch is declared
        # again, which sends the task again.
        logger.warning("patch %s not analyzed: the broker is unreachable", patch_id)


def enqueue_server_analysis(patch: Patch) -> None:
    """Analyze the patch on a worker once the current transaction commits (when its
    repository has a git remote); until then its report says the analysis is pending."""
    if not patch.repository.git_url:
        return
    ServerAnalysis.objects.update_or_create(
        patch=patch,
        defaults={"status": ServerAnalysis.Status.RUNNING, "analysis": None, "error": ""},
    )
    transaction.on_commit(partial(_send, patch.pk))
