"""A check for decoded JSON the database cannot keep.

JSON can spell what PostgreSQL's text and jsonb types cannot store: the NUL character
(``"\\u0000"``), a lone surrogate (``"\\ud800"``), and, unless the parser refuses them, NaN and
the infinities. Found before saving, each is a clear 4xx (or a rejected run) naming where it
sits, not a failed insert answered with a 500.
"""

import math
from typing import Any


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains the NUL character"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "contains text that is not valid Unicode (a lone surrogate)"
    return None


def unstorable(value: Any, path: str = "$") -> tuple[str, str] | None:
    """``(json path, why)`` of the first value or key in ``value`` the database cannot store,
    or None."""
    # Iterative, so a deeply nested document cannot exhaust the interpreter's stack.
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            problem = _text_problem(item)
            if problem:
                return where, problem
        elif isinstance(item, float):
            if not math.isfinite(item):
                return where, "holds a number that is not finite (NaN or Infinity)"
        elif isinstance(item, dict):
            for key, child in item.items():
                problem = _text_problem(key) if isinstance(key, str) else None
                if problem:
                    return where, f"has a key that {problem}"
                stack.append((child, f"{where}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
    return None
