"""Which errors are mailed to the admins (ADMIN_EMAILS), and how often.

Django mails every 5xx answer it logs. During an outage that is one mail per request (11 in a
few seconds, health probes included) about something the admins learn once. A 503 is the
service saying, as designed, that a dependency is down: the log has it, no mail. Other errors
are mailed once per kind (subject) per MAIL_EVERY_SECONDS, and at most MAILS_PER_HOUR in all,
counted in the cache across processes (or per process while the cache is down).
"""

import hashlib
import logging
import threading
import time

from django.core.cache import cache

from config.cache import CACHE_ERRORS

MAIL_EVERY_SECONDS = 600
MAILS_PER_HOUR = 10
UNMAILED_PATHS = frozenset({"/healthz"})

_local_lock = threading.Lock()
_local_until: dict[str, float] = {}


def _first_in_window(key: str, seconds: int) -> bool:
    """True for the first claim of ``key`` in ``seconds``, across processes when it can."""
    try:
        return bool(cache.add(key, 1, seconds))
    except CACHE_ERRORS:
        now = time.monotonic()
        with _local_lock:
            if _local_until.get(key, 0.0) > now:
                return False
            _local_until[key] = now + seconds
            return True


def _hourly_count() -> int:
    key = f"errormail:hour:{int(time.time() // 3600)}"
    try:
        cache.add(key, 0, 3600)
        return int(cache.incr(key))
    except (ValueError, *CACHE_ERRORS):  # type: ignore[misc]  # mypy reads no starred tuple
        return 0  # unknown: the per-kind limit still holds


class AdminMailFilter(logging.Filter):
    """For the mail_admins handler: drops 503s and health probes, and repeats."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 503:
            return False
        request = getattr(record, "request", None)
        if getattr(request, "path", None) in UNMAILED_PATHS:
            return False
        kind = hashlib.sha256(record.getMessage().encode("utf-8", "replace")).hexdigest()[:16]
        if not _first_in_window(f"errormail:kind:{kind}", MAIL_EVERY_SECONDS):
            return False
        return _hourly_count() <= MAILS_PER_HOUR
