"""Rate limits of the endpoints CI calls: uploads per token (this throttle), refused tokens
per address (evidence.authentication); both count with evidence.rate_limits."""

import math

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from evidence.authentication import TokenPrincipal
from evidence.rate_limits import over_limit


class UploadTokenRateThrottle(BaseThrottle):
    """FREEZEDEBT_UPLOADS_PER_MINUTE requests per minute per token, counted by token prefix."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Request, view: APIView) -> bool:
        principal = request.user
        if not isinstance(principal, TokenPrincipal):
            return True
        # Read at request time so a changed setting (or a test override) applies at once.
        self._wait = over_limit("upload", principal.prefix, settings.FREEZEDEBT_UPLOADS_PER_MINUTE)
        return self._wait is None

    def wait(self) -> float | None:
        return None if self._wait is None else math.ceil(self._wait)
