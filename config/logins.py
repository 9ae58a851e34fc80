"""Sign-in throttling for /accounts/login/ and /admin/login/.

Failed sign-ins are counted per account and per client address in fixed windows of
LOGIN_WINDOW_SECONDS, in the cache. Past either limit the form refuses every attempt, the
right password included, until the window ends: guessing then costs a wait, not a request.
While the cache is unreachable nothing is counted (signing in must not depend on it).
"""

import math
import time
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest

from config.cache import cache_count, cache_get

LOGIN_WINDOW_SECONDS = 15 * 60


def _window() -> tuple[int, float]:
    now = time.time()
    index = int(now // LOGIN_WINDOW_SECONDS)
    return index, (index + 1) * LOGIN_WINDOW_SECONDS - now


def _keys(username: str, address: str, index: int) -> list[tuple[str, int]]:
    return [
        (f"login:account:{username.casefold()}:{index}", settings.FREEZEDEBT_LOGIN_FAILURES),
        (f"login:address:{address}:{index}", settings.FREEZEDEBT_LOGIN_FAILURES_PER_ADDRESS),
    ]


class ThrottledLoginMixin:
    """For an AuthenticationForm: refuses sign-ins past the failure limits, counts failures."""

    request: HttpRequest | None
    cleaned_data: dict[str, Any]
    # Shown by the sign-in page instead of its "did not match".
    throttled_message = ""

    def clean(self) -> dict[str, Any]:
        username = str(self.cleaned_data.get("username") or "")
        meta = getattr(self.request, "META", {})
        address = meta.get("REMOTE_ADDR") or "unknown"
        index, left = _window()
        keys = _keys(username, address, index)
        if any((cache_get(key) or 0) >= limit for key, limit in keys):
            minutes = max(1, math.ceil(left / 60))
            self.throttled_message = (
                "Too many failed sign-ins for this account or from this address. "
                f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
            )
            raise forms.ValidationError(self.throttled_message, code="throttled")
        try:
            return super().clean()  # type: ignore[misc]
        except forms.ValidationError as error:
            if error.code == "invalid_login":
                for key, _ in keys:
                    cache_count(key, timeout=2 * LOGIN_WINDOW_SECONDS)
            raise


class ThrottledAuthenticationForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass
