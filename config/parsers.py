"""Request parsers with the size caps Django applies to request.body but DRF's streaming
parsers skip."""

from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from config.exceptions import PayloadTooLarge
from freezedebt_ci.errors import InputError
from freezedebt_ci.jsonread import load_json


def read_bounded(stream: Any, parser_context: Any, limit: int) -> bytes:
    """A request body read whole, refused with 413 when it is over ``limit`` bytes."""
    request = (parser_context or {}).get("request")
    declared = request.META.get("CONTENT_LENGTH") if request is not None else None
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge()
    # Content-Length may be absent or wrong (chunked bodies); count what is actually read.
    body = stream.read(limit + 1) if stream is not None else b""
    if len(body) > limit:
        raise PayloadTooLarge()
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
