"""Serializer fields the API's endpoints share."""

from typing import Any

from rest_framework import serializers

SHA_PATTERN = r"^[0-9a-fA-F]{7,64}\Z"


class ShaField(serializers.RegexField):
    """A commit sha, 7 to 64 hex digits, lower-cased: shas are compared as text everywhere
    (patches name their runs by sha)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "error_messages", {"invalid": "Expected a commit sha: 7 to 64 hexadecimal digits."}
        )
        super().__init__(SHA_PATTERN, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        return super().to_internal_value(data).lower()
