"""Today's snapshot kept current: the overview and repository pages read daily snapshots, so
without this a new repository showed zeros until the next night, and an answer showed on the
freeze page but not on the overview.

Whatever commits a run, a report, a ledger version or an owner's answer calls
:func:`refresh_later`. After the commit it asks for one refresh of the repository's snapshot of
today, debounced: the first request of a burst schedules the task ``REFRESH_DELAY`` seconds
later, the next ones within that time find it scheduled and add nothing. The task clears the
mark before it reads anything, so a change committed while it computes schedules another
refresh, and taking a snapshot is idempotent. History stays snapshot-based: only today's row
is rewritten, as the nightly run rewrites it with its final figures.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError

from config.cache import CACHE_ERRORS
from dashboards import freshness
from dashboards.tasks import refresh_today

logger = logging.getLogger(__name__)

#: Seconds a burst of changes waits before the one refresh it causes (a worker, not eager).
REFRESH_DELAY = 10


_state = threading.local()


def _is_suspended() -> bool:
    return getattr(_state, "depth", 0) > 0


def _suspend(step: int) -> None:
    _state.depth = getattr(_state, "depth", 0) + step


def refresh_later(repository_id: int) -> None:
    """Refresh the repository's snapshot of today once the current transaction commits."""
    if not _is_suspended():
        transaction.on_commit(partial(_schedule, repository_id))


@contextmanager
def suspended() -> Iterator[None]:
    """No refresh for what is written inside, nor for what it leaves to run after the commit
    (its ingests and reports): for loaders that take their own snapshots (the demo, dated on
    a day of its own). The after-commit work of the block runs between the two marks."""
    _suspend(1)
    transaction.on_commit(partial(_suspend, 1))
    try:
        yield
    finally:
        transaction.on_commit(partial(_suspend, -1))
        _suspend(-1)


def _schedule(repository_id: int) -> None:
    # Held a little longer than the delay: a refresh that never ran frees it by itself.
    try:
        if not freshness.mark_refresh(repository_id, hold=REFRESH_DELAY * 6):
            return  # one is scheduled already and will see this change
    except CACHE_ERRORS as error:
        # No debouncing without the cache: every change asks for its refresh.
        logger.warning("cache unavailable (refresh mark of %s): %s", repository_id, error)
    try:
        refresh_today.apply_async((repository_id,), countdown=REFRESH_DELAY)
    except BrokerError:
        freshness.refresh_started(repository_id)
        # The nightly snapshot still comes; the figures are just older until then.
        logger.warning("snapshot of repository %s not refreshed: broker down", repository_id)
