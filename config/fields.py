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


class StrictTypesSerializer(serializers.Serializer):
    """A JSON body's text fields as the schema says: strings only (DRF's CharField also turns
    a number or a boolean into its text), no longer than their maxLength before trimming (DRF
    counts after), and storable (a lone surrogate is no text PostgreSQL can keep)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            wrong = {}
            for name, field in self.fields.items():
                if not isinstance(field, serializers.CharField) or data.get(name) is None:
                    continue
                problem = _text_problem(data[name], field.max_length)
                if problem:
                    wrong[name] = [problem]
            if wrong:
                raise serializers.ValidationError(wrong)
        return super().to_internal_value(data)


def _text_problem(value: Any, max_length: int | None) -> str | None:
    if not isinstance(value, str):
        return "Expected a string."
    if max_length is not None and len(value) > max_length:
        return f"Ensure this field has no more than {max_length} characters."
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "Contains text that is not valid Unicode (a lone surrogate)."
    return None
