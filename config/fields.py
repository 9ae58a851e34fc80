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


class StrictBooleanField(serializers.BooleanField):
    """A JSON ``true`` or ``false`` only, as the schema says: DRF's BooleanField also takes
    0, 1, "yes", "on" and more, which a client would think were checked."""

    default_error_messages = {"invalid": "Expected true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        self.fail("invalid")
        raise AssertionError("unreachable")


class StrictQuerySerializer(serializers.Serializer):
    """Query parameters as the schema says: an empty value (``?start=``) of a field that
    allows none is refused, where DRF, used to HTML forms, would read it as absent."""

    def to_internal_value(self, data: Any) -> Any:
        blank = {
            name: ["This parameter may not be empty."]
            for name, field in self.fields.items()
            if hasattr(data, "get")
            and data.get(name) == ""
            and not getattr(field, "allow_blank", False)
        }
        if blank:
            raise serializers.ValidationError(blank)
        return super().to_internal_value(data)
