"""/healthz: answers 200 only when the database answers, for load balancers and orchestrators.

Answered by :class:`HealthCheckMiddleware`, first in the stack, before anything reads the Host
header: probes (the image's HEALTHCHECK, an orchestrator, a load balancer) call the process by
its address, which ALLOWED_HOSTS rightly does not list, and would get 400 otherwise.
"""

import logging

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from config.api import UNAVAILABLE_RETRY_AFTER, error_body

logger = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        logger.exception("health check: database unreachable")
        response = JsonResponse(
            error_body("unavailable", "The database is unreachable.", {"database": "down"}),
            status=503,
        )
        response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)
        return response
    return JsonResponse({"status": "ok", "database": "ok"})


class HealthCheckMiddleware:
    """Answers /healthz itself, before host validation, redirects and sessions."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        if request.path_info == "/healthz":
            return healthz(request)
        return self.get_response(request)
