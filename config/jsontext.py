"""A check for decoded JSON the database cannot keep.

JSON can spell the NUL character (``"\\u0000"``) but PostgreSQL's text and jsonb types cannot
store it; found before saving, it is a 400 naming where it sits, not a failed insert.
"""

from typing import Any


def find_nul(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first string (value or key) in ``value`` holding NUL, or None."""
    # Iterative, so a deeply nested document cannot exhaust the interpreter's stack.
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return where
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and "\x00" in key:
                    return where
                stack.append((child, f"{where}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
    return None
