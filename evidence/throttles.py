"""Per-token rate limit on upload endpoints."""

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from evidence.authentication import TokenPrincipal


class UploadTokenRateThrottle(SimpleRateThrottle):
    """FREEZEDEBT_UPLOADS_PER_MINUTE requests per minute per token, counted by token prefix.

    The count lives in the default cache: give several web processes a shared one (CACHE_URL).
    """

    scope = "upload"

    def get_rate(self) -> str:
        # Read at request time so a changed setting (or a test override) applies at once.
        return f"{settings.FREEZEDEBT_UPLOADS_PER_MINUTE}/min"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        principal = request.user
        if not isinstance(principal, TokenPrincipal):
            return None
        return self.cache_format % {"scope": self.scope, "ident": principal.prefix}
