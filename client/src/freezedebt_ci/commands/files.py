"""Input files the commands read, with errors that name the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..analysis import FORMAT as ANALYSIS_FORMAT
from ..compression import maybe_gunzip
from ..errors import InputError


def read_bytes(path: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError.single(path, "", f"cannot be read ({exc.strerror})") from None
    if not data or (len(data) <= 4096 and not data.strip()):
        raise InputError.single(path, "", "is empty")
    return data


def read_analysis(path: str) -> dict[str, Any]:
    """An analysis file (``freezedebt-ci analyze --out``; gzip ok) as a JSON object."""
    data = read_bytes(path)
    try:
        document = json.loads(maybe_gunzip(data, source=path, limit=64 << 20))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError.single(path, "", f"is not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise InputError.single(path, "$", "expected a JSON object")
    if document.get("format") != ANALYSIS_FORMAT:
        raise InputError.single(path, "$.format", f"expected {ANALYSIS_FORMAT!r}")
    return document
