"""Request bodies as clients send them: chunked, cut short, or compressed.

Django reads a body only as far as its Content-Length, so a chunked body (no length) reads
as empty and one cut short reads as whatever arrived. :class:`ChunkedBodyMiddleware` reads a
chunked body whole, within the upload limit, when the server decodes chunks for the app
(gunicorn does, and says so with ``wsgi.input_terminated``), and answers 411 otherwise.
:func:`incomplete` finds bodies shorter than they said.
"""

import io
from typing import BinaryIO, cast

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest, HttpResponse, JsonResponse

from config.api import error_body


def _chunked(request: HttpRequest) -> bool:
    return "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()


def declared_length(request: HttpRequest) -> int | None:
    declared = request.META.get("CONTENT_LENGTH") or ""
    return int(declared) if declared.isdigit() else None


def incomplete(request: HttpRequest, received: int) -> str | None:
    """Why a body of ``received`` bytes is incomplete (shorter than its Content-Length),
    or None."""
    declared = declared_length(request)
    if declared is None or received >= declared:
        return None
    return (
        f"The body ended after {received} of the {declared} bytes its Content-Length "
        "announced: it is incomplete; send it again."
    )


class ChunkedBodyMiddleware:
    """Gives a chunked request body a Content-Length, so everything after reads it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _chunked(request) and declared_length(request) is None:
            refused = self._buffer(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    @staticmethod
    def _buffer(request: HttpRequest) -> HttpResponse | None:
        environ = request.META
        if not environ.get("wsgi.input_terminated"):
            return JsonResponse(
                error_body(
                    "length_required",
                    "This server cannot read a chunked body: send it with Content-Length.",
                ),
                status=411,
            )
        limit = max(
            settings.FREEZEDEBT_MAX_UPLOAD_BYTES,
            settings.FREEZEDEBT_MAX_JSON_BYTES,
            settings.FREEZEDEBT_MAX_LEDGER_BYTES,
        )
        body = environ["wsgi.input"].read(limit + 1)
        if len(body) > limit:
            return JsonResponse(
                error_body(
                    "payload_too_large", f"The body is larger than {limit} bytes (the limit)."
                ),
                status=413,
            )
        environ["CONTENT_LENGTH"] = str(len(body))
        request._stream = cast(BinaryIO, LimitedStream(io.BytesIO(body), len(body)))
        return None
