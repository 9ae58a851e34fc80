"""One way to read a JSON document, for every JSON the service and the client read.

``json.loads`` alone accepts what the rest of the code cannot use or even survive: nesting
deep enough to exhaust the interpreter's stack (``RecursionError``), integers too long to
convert (``ValueError``, with a message about ``sys.set_int_max_str_digits``), and duplicate
keys, of which it silently keeps the last. :func:`load_json` refuses all three as input
errors that say what and where, like any other malformed document.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import accumulate, repeat
from operator import sub
from typing import Any

from .errors import InputError

#: Deepest nesting of arrays and objects accepted; real documents stay under ten levels.
MAX_DEPTH = 64
#: Longest integer accepted, in digits: far beyond any count, size or exit status, and under
#: the interpreter's own limit on converting them (4300), whose error would escape as a bug.
MAX_INT_DIGITS = 1000

# Every byte but quotes and brackets, deleted before the brackets are counted.
_NOT_STRUCTURE = bytes(set(range(256)) - set(b'"[]{}'))
# Opening brackets weigh 2 and closing ones 0: minus one each, a running sum is the depth.
_WEIGHTS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


class _Refused(ValueError):
    """Raised from inside the decoder's hooks; turned into an InputError by load_json."""


def nesting_depth(text: str) -> int:
    """How deeply arrays and objects nest in a JSON text, without parsing it.

    Only quotes and brackets are kept (after dropping escapes); the brackets between a quote
    and the next are text. Each step runs in C: a 30 MB document takes about a third of its
    parse.
    """
    data = text.encode("utf-8", "surrogatepass")
    if b"\\" in data:
        # Escaped backslashes first (a run of them pairs up from its start), then escaped
        # quotes: what is left of the quotes opens and closes strings.
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = data.translate(None, _NOT_STRUCTURE)
    # Two quotes in a row close a string and open the next, or open and close one without
    # brackets: dropping them keeps the text inside strings inside. Most strings go so, in C.
    structure = structure.replace(b'""', b"")
    outside = b"".join(structure.split(b'"')[0::2])
    if not outside:
        return 0
    return int(max(accumulate(map(sub, outside.translate(_WEIGHTS), repeat(1)))))


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"holds an integer of more than {MAX_INT_DIGITS} digits")
    return int(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(
                    f"has an object with the key {key!r} twice: which one counts is ambiguous"
                )
            seen.add(key)
    return obj


def _no_constant(name: str) -> Any:
    raise _Refused(f"holds {name}, which JSON does not allow")


def _truncated(text: str, exc: json.JSONDecodeError) -> bool:
    # The error sits at the end, inside a string that never closes, or on a last, cut-off
    # token ("fal", "12") with nothing after it.
    rest = text[exc.pos :].strip()
    return exc.msg != "Extra data" and (
        not rest
        or exc.msg.startswith("Unterminated string")
        or not any(c in rest for c in ',:[]{}" \t\r\n')
    )


def load_json(
    text: str,
    *,
    source: str,
    max_depth: int = MAX_DEPTH,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = _unique_keys,
    allow_nan: bool = True,
) -> Any:
    """Decode ``text``; :class:`InputError` when it is not JSON, nests deeper than
    ``max_depth``, holds an over-long integer or (with the default hook) a duplicate key.

    A caller with its own ``object_pairs_hook`` (one that reports duplicates with their
    place, say) takes over the duplicate check. ``allow_nan=False`` refuses ``NaN`` and
    the infinities too, which Python's reader accepts and standard JSON does not.
    """
    if nesting_depth(text) > max_depth:
        raise InputError.single(source, "$", f"nested deeper than {max_depth} levels")
    try:
        if allow_nan:
            return json.loads(text, parse_int=_bounded_int, object_pairs_hook=object_pairs_hook)
        return json.loads(
            text,
            parse_int=_bounded_int,
            object_pairs_hook=object_pairs_hook,
            parse_constant=_no_constant,
        )
    except json.JSONDecodeError as exc:
        hint = " (the document looks truncated)" if _truncated(text, exc) else ""
        raise InputError.single(
            source, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}{hint}"
        ) from None
    except _Refused as refused:
        raise InputError.single(source, "$", str(refused)) from None
    except RecursionError:  # only with a small stack; the depth check comes first
        raise InputError.single(source, "$", f"nested deeper than {max_depth} levels") from None
