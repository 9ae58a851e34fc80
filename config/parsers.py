"""Request parsers with the size caps Django applies to request.body but DRF's streaming
parsers skip."""

from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import JSONParser

from config.bodies import incomplete
from config.exceptions import PayloadTooLarge
from evidence.uploads import GZIP, IDENTITY, content_coding
from freezedebt_ci.compression import gunzip_limited
from freezedebt_ci.errors import InputError
from freezedebt_ci.jsonread import load_json


def read_bounded(stream: Any, parser_context: Any, limit: int) -> bytes:
    """A request body read whole and decoded from its Content-Encoding (gzip or none):
    413 when it is over ``limit`` bytes (sent or inflated), 400 when it is shorter than its
    Content-Length or not the gzip it says, 415 for another encoding."""
    request = (parser_context or {}).get("request")
    declared = request.META.get("CONTENT_LENGTH") if request is not None else None
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge()
    coding = IDENTITY
    if request is not None:
        header = request.META.get("HTTP_CONTENT_ENCODING")
        named = content_coding(header)
        if named is None:
            raise UnsupportedMediaType(
                header,
                detail=f"Content-Encoding {header!r} is not accepted: send gzip, or no encoding.",
            )
        coding = named
    # Content-Length may be absent or wrong; count what is actually read.
    body = stream.read(limit + 1) if stream is not None else b""
    if len(body) > limit:
        raise PayloadTooLarge()
    if request is not None:
        short = incomplete(request._request, len(body))
        if short:
            raise ParseError(short)
    if coding == GZIP and body:
        try:
            body = gunzip_limited(body, source="body", limit=limit)
        except InputError as exc:
            problem = exc.problems[0].message
            if "more than" in problem:
                raise PayloadTooLarge(f"The body {problem}.") from None
            raise ParseError(f"The body is declared gzip but is {problem}.") from None
    return body


class BoundedJSONParser(JSONParser):
    """JSON parser that refuses bodies over FREEZEDEBT_MAX_JSON_BYTES with 413, and reads
    them as every JSON the service reads (freezedebt_ci.jsonread: bounded depth, no
    duplicate keys, no over-long integers), with a 400 naming where a body went wrong."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        body = read_bounded(stream, parser_context, settings.FREEZEDEBT_MAX_JSON_BYTES)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"The body is not valid UTF-8 (byte {exc.start}).") from None
        try:
            return load_json(text, source="body", allow_nan=False)
        except InputError as exc:
            raise ParseError(
                "The body is not acceptable JSON: " + "; ".join(map(str, exc.problems)) + "."
            ) from None
