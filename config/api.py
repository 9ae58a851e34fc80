"""API plumbing shared by every endpoint: one error shape for every failure.

Every error answer, whatever raised it, is ``{"error": {"code", "message", "details"}}``:
``code`` is a stable machine word, ``message`` a sentence for people, ``details`` an object
(field errors for ``invalid``, ``retry_after`` for ``throttled``, else empty).
"""

import logging
import math
import sys
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import set_rollback

from config.exceptions import Conflict, PayloadTooLarge, ServiceUnavailable

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
# What a 503 asks the client to wait: a database restart or failover takes seconds.
UNAVAILABLE_RETRY_AFTER = 5


UNAVAILABLE_PAGE = (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
    "<title>Freeze Debt is unavailable</title></head><body>"
    "<h1>Freeze Debt is unavailable for a moment</h1>"
    "<p>Its database cannot be reached, so nothing was read or changed; "
    f"try again in {UNAVAILABLE_RETRY_AFTER} seconds.</p></body></html>"
)


# DRF's own codes are kept, except where the contract names the condition differently.
_RENAMED_CODES = {"parse_error": "malformed"}


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _message_and_details(exc: exceptions.APIException) -> tuple[str, dict[str, Any]]:
    if isinstance(exc, exceptions.ValidationError):
        detail = exc.detail
        fields = detail if isinstance(detail, dict) else {"non_field_errors": detail}
        return "The request is invalid.", fields
    if isinstance(exc.detail, dict | list):
        return str(exc.default_detail), {"errors": exc.detail}
    return str(exc.detail), {}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF EXCEPTION_HANDLER: every handled error in the one error shape.

    Unhandled exceptions return None, so Django logs them and answers through ``server_error``.
    """
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    elif isinstance(exc, DjangoValidationError):
        # Services validate with Django's ValidationError; the API shows it like a serializer's.
        exc = exceptions.ValidationError(as_serializer_error(exc))
    elif isinstance(exc, OperationalError | InterfaceError):
        # The database is down or unreachable: nothing was stored, and the same request will
        # do once it is back. A 503 says so, and the CI client retries it (a 500 it does not).
        logger.error("database unavailable: %s", exc, exc_info=exc)
        exc = ServiceUnavailable()
    if not isinstance(exc, exceptions.APIException):
        return None

    if isinstance(exc, exceptions.ValidationError):
        code = "invalid"
    else:
        raw_code = exc.get_codes()
        code = raw_code if isinstance(raw_code, str) else exc.default_code
    code = _RENAMED_CODES.get(code, code)
    message, details = _message_and_details(exc)
    if isinstance(exc, Conflict):
        details = {**details, **exc.details}

    headers = {}
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        headers["WWW-Authenticate"] = auth_header
    wait = getattr(exc, "wait", None) if isinstance(exc, exceptions.Throttled) else None
    if wait is not None:
        retry_after = max(1, math.ceil(wait))
        headers["Retry-After"] = str(retry_after)
        details = {**details, "retry_after": retry_after}
        message = f"Too many requests; retry in {retry_after} s."
    if isinstance(exc, ServiceUnavailable):
        headers["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)

    set_rollback()
    return Response(error_body(code, message, details), status=exc.status_code, headers=headers)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: the JSON error shape under /api/, Django's page elsewhere."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error_body("not_found", "Not found."), status=404)
    return defaults.page_not_found(request, exception)


def _database_unavailable() -> bool:
    """Whether the error being handled is the database being down or unreachable."""
    return isinstance(sys.exc_info()[1], OperationalError | InterfaceError)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the JSON error shape under /api/, Django's page elsewhere; a 503 with
    Retry-After, not a 500, when the database is down (pages read it before any view runs:
    the session, the user)."""
    if _database_unavailable():
        if request.path.startswith(API_PREFIX):
            response: HttpResponse = JsonResponse(
                error_body("unavailable", str(ServiceUnavailable.default_detail)), status=503
            )
        else:
            # Plain and self-contained: rendering the site's layout would query the database.
            response = HttpResponse(UNAVAILABLE_PAGE, status=503, content_type="text/html")
        response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)
        return response
    if request.path.startswith(API_PREFIX):
        return JsonResponse(
            error_body("server_error", "The server failed to answer; the error was logged."),
            status=500,
        )
    return defaults.server_error(request)


ErrorSerializer = inline_serializer(
    name="Error",
    fields={
        "error": inline_serializer(
            name="ErrorDetail",
            fields={
                "code": serializers.CharField(),
                "message": serializers.CharField(),
                "details": serializers.DictField(),
            },
        )
    },
)


_ERROR_MEANINGS = {
    400: "Malformed or invalid request (code malformed or invalid).",
    401: "Missing, unknown or revoked credentials.",
    403: "Authenticated, but not allowed (e.g. a token of the wrong scope).",
    404: "No such object, or not visible to the caller.",
    409: "Conflicts with what is already stored.",
    413: "The body is larger than the configured limit.",
    415: "The body's content type is not accepted here.",
    429: "Too many requests; the Retry-After header says when to retry.",
    503: "The database is unavailable; the Retry-After header says when to retry.",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """Schema entries for the error answers an endpoint may give, for ``extend_schema``."""
    return {
        code: OpenApiResponse(ErrorSerializer, description=_ERROR_MEANINGS.get(code, ""))
        for code in statuses
    }
