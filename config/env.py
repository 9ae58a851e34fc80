"""Typed reading of environment variables for the settings modules.

Every reader accepts a ``NAME_FILE`` variant holding a path whose contents are the value, so
secrets can come from mounted files (Docker/Kubernetes secrets) instead of the environment.
A variable given both ways is a configuration error, not a silent preference.
"""

import os
from pathlib import Path
from typing import Final, overload

from django.core.exceptions import ImproperlyConfigured


class _Missing:
    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Final = _Missing()

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


def env_is_set(name: str) -> bool:
    """Whether NAME or NAME_FILE is present in the environment (even if empty)."""
    return name in os.environ or f"{name}_FILE" in os.environ


def _raw(name: str) -> str | None:
    direct = os.environ.get(name)
    path = os.environ.get(f"{name}_FILE")
    if direct is not None and path is not None:
        raise ImproperlyConfigured(f"Set either {name} or {name}_FILE, not both.")
    if path is None:
        return direct
    try:
        # Secret files usually end with a newline the value never meant to contain.
        return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as error:
        raise ImproperlyConfigured(f"{name}_FILE: cannot read {path}: {error}") from error


def _missing(name: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"The environment variable {name} (or {name}_FILE) must be set.")


@overload
def env_str(name: str) -> str: ...
@overload
def env_str(name: str, default: str) -> str: ...
@overload
def env_str(name: str, default: None) -> str | None: ...
def env_str(name: str, default: str | _Missing | None = REQUIRED) -> str | None:
    """A string; an empty value counts as unset."""
    value = _raw(name)
    if value is None or value == "":
        if isinstance(default, _Missing):
            raise _missing(name)
        return default
    return value


def env_bool(name: str, default: bool | _Missing = REQUIRED) -> bool:
    """A boolean spelled true/false, 1/0 or yes/no (any case); anything else is an error."""
    value = _raw(name)
    if value is None or value.strip() == "":
        if isinstance(default, _Missing):
            raise _missing(name)
        return default
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean: use true/false, 1/0 or yes/no.")


def env_int(
    name: str,
    default: int | _Missing = REQUIRED,
    *,
    min_value: int | None = None,
    max_value: int | None = None,
) -> int:
    """A decimal integer, optionally bounded; underscores are allowed as in Python (64_000)."""
    value = _raw(name)
    if value is None or value.strip() == "":
        if isinstance(default, _Missing):
            raise _missing(name)
        number = default
    else:
        try:
            number = int(value.strip(), 10)
        except ValueError:
            raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from None
    if min_value is not None and number < min_value:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum {min_value}.")
    if max_value is not None and number > max_value:
        raise ImproperlyConfigured(f"{name}={number} is above the maximum {max_value}.")
    return number


def env_list(name: str, default: list[str] | _Missing = REQUIRED) -> list[str]:
    """A comma-separated list; blanks around items and empty items are dropped."""
    value = _raw(name)
    if value is None or value.strip() == "":
        if isinstance(default, _Missing):
            raise _missing(name)
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]
