"""Failure signatures (SPEC 5.6).

A signature is the first 16 hex digits of SHA-256 over the node id and the *shape* of the
failure text, so the same test failing the same way gets the same signature across runs, and
failing differently gets another one. The shape keeps:

* assertion and exception lines: pytest's ``E   …`` lines, and lines such as
  ``ValueError: …`` or ``AssertionError``;
* the files of the project's own frames: pytest's ``path/to/file.py:12: in func`` /
  ``file.py:12: Error`` and CPython's ``File "path/to/file.py", line 12, in func``, but not
  frames in ``site-packages``, ``dist-packages``, the standard library or other absolute
  paths (each file once, sorted: pytest's traceback styles order frames differently);

and in what it keeps, replaces hexadecimal addresses (``0x7f3a…``) by ``0x?``, line numbers
by ``:?``, and every other run of digits by ``?``; surrounding whitespace is dropped.
Everything else (source excerpts, captured output, values printed by pytest's diff) is left out.
"""

from __future__ import annotations

import hashlib
import re

#: An address (``0x7f3a…``) or, failing that, a run of digits: one pass, so an address's own
#: ``0`` is not masked again as a digit.
_NUMBERS = re.compile(r"(?P<address>0x[0-9a-fA-F]+)|\d+")
# pytest ends a frame's location with ": " and nothing more when the frame is not the last.
_PYTEST_FRAME = re.compile(r"^(?P<path>[^\s:][^:]*\.py):\d+:(?: (?P<rest>.*))?$")
_CPYTHON_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+(?P<rest>.*)$')
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Warning|Interrupt)\b"
)
_FOREIGN = ("site-packages", "dist-packages", "<frozen", "/lib/python")


def _own(path: str) -> bool:
    return not path.startswith("/") and not any(marker in path for marker in _FOREIGN)


def _mask(text: str) -> str:
    return _NUMBERS.sub(lambda m: "0x?" if m.group("address") else "?", text).strip()


def failure_shape(text: str) -> str:
    """The normalized lines a signature is made of, joined by newlines: the project's own
    files the failure passed through (sorted, once each), then its assertion and exception
    lines in order. Keeping only the files of frames makes pytest's ``--tb=long``, ``auto``
    and ``short`` reports of one failure give one shape, although they word and order their
    frame lines differently."""
    files: set[str] = set()
    messages: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        frame = _PYTEST_FRAME.match(line.strip()) or _CPYTHON_FRAME.match(line)
        if frame:
            if _own(frame.group("path")):
                files.add(frame.group("path"))
            continue
        stripped = line.strip()
        if stripped.startswith("E ") or stripped == "E":
            messages.append("E " + _mask(stripped[1:]))
        elif _EXCEPTION_LINE.match(stripped):
            messages.append(_mask(stripped))
    return "\n".join([*(f"at {name}" for name in sorted(files)), *messages])


def failure_signature(nodeid: str, text: str) -> str:
    """Signature of ``nodeid`` failing with ``text`` (16 lowercase hex digits)."""
    payload = f"{nodeid}\n{failure_shape(text)}".encode("utf-8", "surrogateescape")
    return hashlib.sha256(payload).hexdigest()[:16]
