"""The cache as something the service can do without.

The cache (Redis in production, often the broker's server too) holds throttle counts and
cached page parts: nothing that is not also in the database or cheap to recompute. So when it
is unreachable, a request goes on without it (logged) instead of failing: an accepted upload
never depends on the cache.
"""

import logging
from typing import Any

from django.core.cache import cache

logger = logging.getLogger(__name__)

try:
    from redis.exceptions import RedisError
except ImportError:  # pragma: no cover - redis comes with celery[redis]
    RedisError = OSError  # type: ignore[assignment,misc]

# What a cache backend raises when its server is down, refuses or times out.
CACHE_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError)


def _unavailable(operation: str, key: str, error: BaseException) -> None:
    logger.warning("cache unavailable (%s %s): %s", operation, key, error)


def cache_get(key: str, default: Any = None) -> Any:
    """``cache.get``, or ``default`` when the cache is unreachable."""
    try:
        return cache.get(key, default)
    except CACHE_ERRORS as error:
        _unavailable("get", key, error)
        return default


def cache_set(key: str, value: Any, timeout: float | None) -> None:
    """``cache.set``; nothing when the cache is unreachable."""
    try:
        cache.set(key, value, timeout)
    except CACHE_ERRORS as error:
        _unavailable("set", key, error)


def cache_count(key: str, *, timeout: int) -> int | None:
    """Add one to the counter ``key`` (created to live ``timeout`` seconds) and return the new
    count, atomically across processes; None when the cache is unreachable.

    ``add`` then ``incr``: single commands in Redis (SET NX, INCR), so concurrent requests
    each get their own count, unlike a read, an addition and a write back. Name the key after
    its time window: should the counter expire between the two calls, INCR recreates it
    without an expiry, and only a key no later window reuses makes that harmless.
    """
    try:
        cache.add(key, 0, timeout)
        try:
            return cache.incr(key)
        except ValueError:
            # The counter expired between the two calls: this request starts the next one.
            cache.add(key, 0, timeout)
            return cache.incr(key)
    except CACHE_ERRORS as error:
        _unavailable("count", key, error)
        return None
