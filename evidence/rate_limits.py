"""Counting requests in fixed one-minute windows: the limits the upload throttle and the
authentication of refused tokens share.

Counted in the default cache (give several web processes a shared one, CACHE_URL), with one
atomic increment per request. When the cache is unreachable the requests go through
uncounted: a limit protects the service, it must not take uploads down with it.
"""

import time

from django.conf import settings
from rest_framework.request import Request

from config.cache import cache_count

WINDOW_SECONDS = 60


def _window() -> tuple[int, float]:
    """The current window's number and the seconds left in it."""
    now = time.time()
    index = int(now // WINDOW_SECONDS)
    return index, (index + 1) * WINDOW_SECONDS - now


def over_limit(scope: str, ident: str, limit: int) -> float | None:
    """Count one request of ``ident`` in ``scope``; the seconds to wait when this one is over
    ``limit`` in the current window, else None."""
    index, left = _window()
    # Kept a window longer than it counts, so a key never outlives its use by much.
    count = cache_count(f"throttle:{scope}:{ident}:{index}", timeout=2 * WINDOW_SECONDS)
    if count is None or count <= limit:
        return None
    return max(left, 1.0)


def client_address(request: Request) -> str:
    """The peer address: behind a proxy, the proxy's (the image trusts no forwarded header)."""
    return request.META.get("REMOTE_ADDR") or "unknown"


def refused_token_wait(request: Request) -> float | None:
    """Count a refused token from the request's address; the seconds to wait once the address
    has sent more than FREEZEDEBT_BAD_TOKENS_PER_MINUTE of them, else None."""
    return over_limit(
        "bad-token", client_address(request), settings.FREEZEDEBT_BAD_TOKENS_PER_MINUTE
    )
