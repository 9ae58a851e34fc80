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

from django.core.cache import cache
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError

from config.cache import CACHE_ERRORS, cache_get

logger = logging.getLogger(__name__)

#: Seconds a burst of changes waits before the one refresh it causes (a worker, not eager).
REFRESH_DELAY = 10
#: The overview's cached panels include this number in their key: a refresh bumps it.
GENERATION_KEY = "dashboards:live:generation"


def _mark(repository_id: int) -> str:
    return f"dashboards:live:refresh:{repository_id}"


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
    from dashboards.tasks import refresh_today

    # Held a little longer than the delay: a refresh that never ran frees it by itself.
    try:
        if not cache.add(_mark(repository_id), 1, timeout=REFRESH_DELAY * 6):
            return  # one is scheduled already and will see this change
    except CACHE_ERRORS as error:
        # No debouncing without the cache: every change asks for its refresh.
        logger.warning("cache unavailable (refresh mark of %s): %s", repository_id, error)
    try:
        refresh_today.apply_async((repository_id,), countdown=REFRESH_DELAY)
    except BrokerError:
        refresh_started(repository_id)
        # The nightly snapshot still comes; the figures are just older until then.
        logger.warning("snapshot of repository %s not refreshed: broker down", repository_id)


def refresh_started(repository_id: int) -> None:
    """Called by the task before it reads: later changes schedule a refresh of their own."""
    try:
        cache.delete(_mark(repository_id))
    except CACHE_ERRORS as error:  # the mark expires by itself
        logger.warning("cache unavailable (refresh mark of %s): %s", repository_id, error)


def generation() -> int:
    """The number that changes whenever a snapshot of today was refreshed."""
    value = cache_get(GENERATION_KEY)
    return value if isinstance(value, int) else 0


def bump_generation() -> None:
    """Make every cached overview stale (after the refreshed snapshot committed)."""
    try:
        try:
            cache.incr(GENERATION_KEY)
        except ValueError:  # not set yet, or evicted
            cache.add(GENERATION_KEY, 1, timeout=None)
    except CACHE_ERRORS as error:  # nothing is cached while it is down
        logger.warning("cache unavailable (overview generation): %s", error)
