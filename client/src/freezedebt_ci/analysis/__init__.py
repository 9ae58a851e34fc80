"""Patch analysis (``freezedebt-ci analyze``, SPEC 4.5 and 5.7): reads the two trees of a patch
from git and judges whether evidence the patch did not write itself still guards what it
changed."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from .engine import FORMAT, Options, analyze

__all__ = ["FORMAT", "Options", "analyze", "schema"]


def schema() -> dict[str, Any]:
    """The JSON Schema of ``freezedebt-analysis/1``, as shipped in the package."""
    text = resources.files(__package__).joinpath("schema.json").read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    return document
