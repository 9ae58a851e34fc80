"""An uploaded analysis (``analysis`` of ``POST /api/v1/patches``) checked against the JSON Schema
the client package ships (``freezedebt-analysis/1``), so the report's judge only ever reads a
document of that shape, and a malformed one is refused with where it is wrong."""

import json
from functools import cache
from typing import Any

from django.conf import settings
from jsonschema import Draft202012Validator

from freezedebt_ci.analysis import schema

# Errors shown per refused analysis: enough to fix it, not a page of them.
MAX_ERRORS = 50


@cache
def _validator() -> Draft202012Validator:
    document = schema()
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def json_path(parts: Any) -> str:
    """``$.symbols[3].kind`` from a jsonschema error's absolute path."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def analysis_size(value: Any) -> int:
    """The analysis's size as compact JSON, the form it is stored in."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def analysis_errors(value: Any) -> list[dict[str, str]]:
    """The schema errors of an analysis, each ``{path, message}``, sorted by path; at most
    MAX_ERRORS (the last entry then says how many were left out)."""
    errors = sorted(
        _validator().iter_errors(value), key=lambda e: (json_path(e.absolute_path), e.message)
    )
    out = [{"path": json_path(e.absolute_path), "message": e.message[:500]} for e in errors]
    if len(out) > MAX_ERRORS:
        left = len(out) - MAX_ERRORS
        out = [*out[:MAX_ERRORS], {"path": "$", "message": f"and {left} more errors"}]
    return out


def max_analysis_bytes() -> int:
    return settings.FREEZEDEBT_MAX_ANALYSIS_BYTES


def openapi_schema() -> dict[str, Any]:
    """The analysis JSON Schema in OpenAPI 3.0's dialect, for the API's own schema: the same
    document the upload is checked against (a looser one would have clients, and the fuzzer,
    send what is then refused). ``$defs`` are written out where they are used, ``const``
    becomes a one-value ``enum`` and a null alternative becomes ``nullable``."""
    document = schema()
    defs = document.get("$defs", {})

    def convert(node: Any) -> Any:
        if isinstance(node, list):
            return [convert(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return convert(defs[node["$ref"].rsplit("/", 1)[-1]])
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$schema", "$id", "$defs"):
                continue
            if key == "const":
                out["enum"] = [value]
            elif key == "type" and isinstance(value, list):
                kinds = [k for k in value if k != "null"]
                out["type"] = kinds[0]
                if len(kinds) < len(value):
                    out["nullable"] = True
            elif key == "anyOf" and {"type": "null"} in value:
                rest = [convert(v) for v in value if v != {"type": "null"}]
                merged = rest[0] if len(rest) == 1 else {"anyOf": rest}
                out.update(merged)
                out["nullable"] = True
            else:
                out[key] = convert(value)
        return out

    converted: dict[str, Any] = convert(document)
    converted["nullable"] = True  # a patch may come without an analysis
    return converted
