"""The second process (SPEC 5.7, seed 004): for a repository with a git remote, a worker
fetches the patch's base and head into its own mirror and runs the same analysis the client
runs. The report judges that analysis, and an uploaded one that disagrees with it is an
``analysis-mismatch``: the process that grades a patch is not one the patch can edit."""

import json
import logging
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from config.celery import task_named
from evidence.mirror import MirrorError, mirror_fetch
from evidence.models import Patch, ServerAnalysis
from evidence.reports import enqueue_report

logger = logging.getLogger(__name__)


class AnalysisError(Exception):
    """The analysis command failed or ran out of time; the message says how."""


def analyze_mirror(mirror: Path, base: str, head: str) -> dict[str, Any]:
    """``freezedebt-ci analyze`` of the mirror in a process of its own: killed past the budget
    (the analyzer's own budget is checked between steps), its memory gone with it, and free to
    start its parsing processes (a Celery worker's child may not have children)."""
    budget = settings.FREEZEDEBT_ANALYSIS_BUDGET
    command = [
        sys.executable,
        "-c",
        "import sys; from freezedebt_ci.cli import main; sys.exit(main())",
        *("analyze", "--repo", str(mirror), "--base", base, "--head", head, "--json"),
        *("--today", timezone.localdate().isoformat(), "--budget", str(budget), "--no-cache"),
    ]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.devnull,
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    try:
        done = subprocess.run(  # noqa: S603 - our own interpreter and module, fixed arguments
            command, capture_output=True, timeout=budget + 30, env=env, cwd=mirror, check=False
        )
    except subprocess.TimeoutExpired:
        raise AnalysisError(f"the analysis took longer than {budget + 30:g} s") from None
    if done.returncode not in (0, 1):  # 1: a blocking finding, still an analysis
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise AnalysisError((lines[-1] if lines else f"exit status {done.returncode}")[:2000])
    try:
        document: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        raise AnalysisError("the analysis printed no JSON") from None
    return document


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
        analysis = analyze_mirror(mirror, patch.base_sha, patch.head_sha)
    except (MirrorError, AnalysisError) as exc:
        error = str(exc)
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
    try:
        task_named("evidence.analyze_patch").delay(patch_id)
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
