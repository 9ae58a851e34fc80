"""The marks in the cache that dashboards.live and its task share: a repository's refresh
mark (set when a refresh is scheduled, cleared when it starts: the debounce) and the
generation number in the cached overviews' keys. Here rather than in ``live``, which schedules
the task: the task imports this, ``live`` imports the task.
"""

from __future__ import annotations

import logging

from django.core.cache import cache

from config.cache import CACHE_ERRORS, cache_get

logger = logging.getLogger(__name__)

#: The overview's cached panels include this number in their key: a refresh bumps it.
GENERATION_KEY = "dashboards:live:generation"


def _mark(repository_id: int) -> str:
    return f"dashboards:live:refresh:{repository_id}"


def mark_refresh(repository_id: int, *, hold: int) -> bool:
    """Set the repository's refresh mark for ``hold`` seconds; False when it is set already
    (a refresh is scheduled). Raises the cache's errors (``CACHE_ERRORS``)."""
    return bool(cache.add(_mark(repository_id), 1, timeout=hold))


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
