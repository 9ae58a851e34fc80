"""The freeze ledger: readers for its three shapes, one normalized freeze, and its history.

Shapes accepted (SPEC 4.3):

* TOML with ``[[freeze]]`` tables;
* JSON as a list of freeze objects, or as ``{"freeze": [...]}``;
* JSON as a map keyed by node id (``{"tests/a.py::t": {"covers": [...], ...}}``), where the
  freeze id defaults to the node id.

Structural faults (syntax, wrong types, bad dates, bad path patterns, duplicate ids, unknown
fields) make the ledger unreadable, and each names its line. A freeze that merely lacks a
required field is kept, with the fields it lacks in ``missing``, so the report can name it as
an ``invalid-freeze``. Fields of a team's own start with ``x_`` (``x_ticket``) and are ignored.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from .compression import maybe_gunzip
from .errors import InputError, ProblemCollector
from .jsonread import load_json
from .paths import pattern_error

FREEZE_CLASSES = (
    "timeout",
    "network-dependent",
    "clock-dependent",
    "order-dependent",
    "data-dependent",
    "missing-service",
)
REQUIRED = ("id", "test", "covers", "owner", "opened", "expires", "reason")

_STRING_FIELDS = {
    "id": "id",
    "test": "test",
    "nodeid": "test",
    "owner": "owner",
    "reason": "reason",
    "compensating_check": "compensating_check",
    "class": "freeze_class",
    "signature": "signature",
}
_DATE_FIELDS = {"opened": "opened", "expires": "expires", "until": "expires"}
_DATE_SHAPE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: Every field a freeze may have (SPEC 4.3); others are refused unless they start with x_.
FIELDS = (*_STRING_FIELDS, *_DATE_FIELDS, "covers", "blocks_symbols", "allowed_in_merge")
OWN_FIELD_PREFIXES = ("x_", "x-")
_TOML_TABLE = re.compile(r"^\s*\[")
_TOML_FREEZE = re.compile(r"^\s*\[\[\s*freeze\s*\]\]")
_TOML_KEY = re.compile(r'^\s*("(?:[^"\\]|\\.)*"|[A-Za-z0-9_-]+)\s*=')
_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')

#: The line of a field: (index of its freeze in the file, field name) -> line number.
Locate = Callable[[int, str], "int | None"]


def _toml_lines(text: str) -> Locate:
    """Lines of the keys of each ``[[freeze]]`` table (tomllib keeps no positions)."""
    lines: dict[tuple[int, str], int] = {}
    index = -1
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _TOML_FREEZE.match(line):
            index += 1
            inside = True
        elif _TOML_TABLE.match(line):
            inside = False
        elif inside and (match := _TOML_KEY.match(line)):
            key = match.group(1).strip('"')
            lines.setdefault((index, key), number)
    return lambda index, key: lines.get((index, key))


def _json_lines(text: str, entries: Sequence[Any]) -> Locate:
    """Lines of the fields of each freeze object: the n-th freeze holding a field has the n-th
    ``"field":`` of the text (a freeze's fields hold no objects of their own)."""
    found: dict[str, list[int]] = {}
    for match in _JSON_KEY.finditer(text):
        found.setdefault(match.group(1), []).append(text.count("\n", 0, match.start()) + 1)
    lines: dict[tuple[int, str], int] = {}
    seen: Counter[str] = Counter()
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        for key in entry:
            numbers = found.get(key, [])
            if seen[key] < len(numbers):
                lines[(index, key)] = numbers[seen[key]]
            seen[key] += 1
    return lambda index, key: lines.get((index, key))


def _at(line: int | None) -> str:
    return f" (line {line})" if line else ""


def _unknown_field(key: str) -> str:
    close = difflib.get_close_matches(key, FIELDS, n=1, cutoff=0.7)
    if close:
        return f"unknown field {key!r}: did you mean {close[0]!r}?"
    return (
        f"unknown field {key!r}: a freeze has {', '.join(FIELDS)} "
        f"(fields of your own start with {OWN_FIELD_PREFIXES[0]})"
    )


def _toml_error(exc: tomllib.TOMLDecodeError, text: str) -> tuple[str, str]:
    """Where and what of a TOML syntax error; a date written wrongly says so."""
    message = str(exc)
    at = _TOML_AT.search(message)
    if at is None:
        return "", f"invalid TOML: {message}"
    number = int(at.group(1))
    lines = text.splitlines()
    line = lines[number - 1] if 0 < number <= len(lines) else ""
    key, _, value = line.partition("=")
    if key.strip() in _DATE_FIELDS:
        return (
            f"line {number}",
            f"{key.strip()} = {value.strip()} is not a date: write the date as YYYY-MM-DD, "
            f"unquoted (invalid TOML: {message})",
        )
    return f"line {number}", f"invalid TOML: {message}"


class _JSONObject(dict[str, Any]):
    """A decoded JSON object that remembers the keys it held more than once (``json`` itself
    silently keeps the last one, which would drop a freeze or one of its fields unseen)."""

    duplicates: tuple[str, ...] = ()


def _json_object(pairs: list[tuple[str, Any]]) -> _JSONObject:
    obj = _JSONObject(pairs)
    if len(obj) != len(pairs):
        counts = Counter(key for key, _ in pairs)
        obj.duplicates = tuple(key for key, count in counts.items() if count > 1)
    return obj


# Section 9: a freeze in force whose expiry is at most this many days away is "expiring".
EXPIRING_WITHIN_DAYS = 7


def expiry_status(expires: dt.date | None, today: dt.date) -> str:
    """``invalid`` (no expiry), ``expired`` (before today), ``expiring`` (from today up to
    EXPIRING_WITHIN_DAYS days on: still in force on its expiry day) or ``active``."""
    if expires is None:
        return "invalid"
    if expires < today:
        return "expired"
    return "expiring" if (expires - today).days <= EXPIRING_WITHIN_DAYS else "active"


@dataclass(frozen=True, slots=True)
class Freeze:
    """One freeze, whatever shape the ledger had. Dates are inclusive: a freeze is active
    through its ``expires`` day."""

    id: str
    test: str | None
    covers: tuple[str, ...]
    owner: str | None
    opened: dt.date | None
    expires: dt.date | None
    reason: str | None
    compensating_check: str | None = None
    freeze_class: str | None = None
    signature: str | None = None
    blocks_symbols: tuple[str, ...] = ()
    allowed_in_merge: bool = False
    missing: tuple[str, ...] = field(default=())

    def is_active(self, today: dt.date) -> bool:
        return self.expires is not None and self.expires >= today

    def is_expired(self, today: dt.date) -> bool:
        return self.expires is not None and self.expires < today

    def days_left(self, today: dt.date) -> int | None:
        return None if self.expires is None else (self.expires - today).days

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form, the ledger's own field names (``class`` for the class)."""
        return {
            "id": self.id,
            "test": self.test,
            "covers": list(self.covers),
            "owner": self.owner,
            "opened": self.opened.isoformat() if self.opened else None,
            "expires": self.expires.isoformat() if self.expires else None,
            "reason": self.reason,
            "compensating_check": self.compensating_check,
            "class": self.freeze_class,
            "signature": self.signature,
            "blocks_symbols": list(self.blocks_symbols),
            "allowed_in_merge": self.allowed_in_merge,
            "missing": list(self.missing),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Freeze:
        """Inverse of :meth:`as_dict` (for freezes stored by the server)."""

        def day(value: Any) -> dt.date | None:
            return dt.date.fromisoformat(value) if value else None

        return cls(
            id=data["id"],
            test=data.get("test"),
            covers=tuple(data.get("covers") or ()),
            owner=data.get("owner"),
            opened=day(data.get("opened")),
            expires=day(data.get("expires")),
            reason=data.get("reason"),
            compensating_check=data.get("compensating_check"),
            freeze_class=data.get("class"),
            signature=data.get("signature"),
            blocks_symbols=tuple(data.get("blocks_symbols") or ()),
            allowed_in_merge=bool(data.get("allowed_in_merge", False)),
            missing=tuple(data.get("missing") or ()),
        )


def _as_date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return None  # a time of day has no meaning for an inclusive expiry day
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value) if _DATE_SHAPE.fullmatch(value) else None
        except ValueError:
            return None
    return None


def _freeze_from_entry(
    entry: Any,
    where: str,
    problems: ProblemCollector,
    *,
    default_id: str | None = None,
    line: Callable[[str], int | None] = lambda key: None,
) -> Freeze | None:
    if not isinstance(entry, Mapping):
        problems.add(where, "expected a table/object describing one freeze")
        return None
    values: dict[str, Any] = {"id": default_id}
    if default_id is not None:
        values["test"] = default_id
    for key, value in entry.items():
        here = f"{where}.{key}"
        if key in _STRING_FIELDS:
            if not isinstance(value, str):
                problems.add(here, f"expected a string, got {type(value).__name__}{_at(line(key))}")
            elif value.strip():
                values[_STRING_FIELDS[key]] = value.strip()
        elif key in _DATE_FIELDS:
            day = _as_date(value)
            if day is None:
                problems.add(
                    here, f"expected a date as YYYY-MM-DD, got {_shown(value)}{_at(line(key))}"
                )
            values[_DATE_FIELDS[key]] = day
        elif key == "covers":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                problems.add(here, "expected a list of repo-relative paths")
                continue
            for index, pattern in enumerate(value):
                error = pattern_error(pattern)
                if error:
                    problems.add(f"{here}[{index}]", f"{pattern!r} {error}")
            values["covers"] = tuple(value)
        elif key == "blocks_symbols":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                problems.add(here, "expected a list of symbol names")
                continue
            values["blocks_symbols"] = tuple(value)
        elif key == "allowed_in_merge":
            if not isinstance(value, bool):
                problems.add(here, "expected true or false")
                continue
            values["allowed_in_merge"] = value
        elif not str(key).startswith(OWN_FIELD_PREFIXES):
            # A misspelt field would otherwise be dropped unseen (an "expirse" never expires).
            problems.add(here, f"{_unknown_field(str(key))}{_at(line(key))}")
    missing = tuple(
        name
        for name in REQUIRED
        if not values.get(name) and not (name == "opened" and default_id is not None)
    )
    return Freeze(
        id=values.get("id") or f"{where} (no id)",
        test=values.get("test"),
        covers=values.get("covers", ()),
        owner=values.get("owner"),
        opened=values.get("opened"),
        expires=values.get("expires"),
        reason=values.get("reason"),
        compensating_check=values.get("compensating_check"),
        freeze_class=values.get("freeze_class"),
        signature=values.get("signature"),
        blocks_symbols=values.get("blocks_symbols", ()),
        allowed_in_merge=values.get("allowed_in_merge", False),
        missing=missing,
    )


def _shown(value: object) -> str:
    """A value quoted in a message as the file spells it, not as Python would."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return f"{value.isoformat()} (a {type(value).__name__}, not a date)"
    if isinstance(value, str):
        return repr(value[:40])
    return type(value).__name__


def parse_ledger(data: bytes | str, *, source: str = "ledger") -> list[Freeze]:
    """Read a ledger in any of its shapes; freezes come back sorted by id."""
    if isinstance(data, bytes):
        data = maybe_gunzip(data, source=source, limit=64 << 20)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError.single(source, f"byte {exc.start}", "is not valid UTF-8") from None
    else:
        text = data
    problems = ProblemCollector(source)
    entries: list[tuple[str, Any, str | None]] = []
    stripped = text.lstrip()
    # "[[freeze]]" opens TOML; a JSON list opens with "[" then "{" or "]".
    if stripped[:1] == "{" or (stripped[:1] == "[" and stripped[1:].lstrip()[:1] in ("{", "]")):
        # Duplicate keys are reported with their place by _json_object, not refused outright.
        document = load_json(text, source=source, object_pairs_hook=_json_object)
        if isinstance(document, dict) and isinstance(document.get("freeze"), list):
            for key in getattr(document, "duplicates", ()):
                problems.add(f"$.{key}", "duplicate key")
            document = document["freeze"]
        if isinstance(document, list):
            entries = [(f"$[{i}]", entry, None) for i, entry in enumerate(document)]
        else:
            for key in getattr(document, "duplicates", ()):
                problems.add(f"$[{json.dumps(key)}]", f"duplicate freeze id {key!r}")
            entries = [(f"$[{json.dumps(k)}]", v, k) for k, v in document.items()]
    else:
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError.single(source, *_toml_error(exc, text)) from None
        except (RecursionError, ValueError) as exc:
            # tomllib recurses per nested array and converts integers with int(): a deep or
            # over-long value is refused like JSON's, without the interpreter's wording.
            why = "nested too deeply" if isinstance(exc, RecursionError) else "a value too large"
            raise InputError.single(source, "", f"invalid TOML: {why}") from None
        tables = document.get("freeze", [])
        if not isinstance(tables, list):
            raise InputError.single(source, "freeze", "expected [[freeze]] tables")
        entries = [(f"freeze[{i}]", entry, None) for i, entry in enumerate(tables)]
    locate = (
        _json_lines(text, [entry for _, entry, _ in entries])
        if entries and entries[0][0].startswith("$")
        else _toml_lines(text)
    )
    freezes: dict[str, Freeze] = {}
    for index, (where, entry, default_id) in enumerate(entries):
        for key in getattr(entry, "duplicates", ()):
            problems.add(f"{where}.{key}", "duplicate key: which value counts is ambiguous")
        freeze = _freeze_from_entry(
            entry,
            where,
            problems,
            default_id=default_id,
            line=partial(locate, index),
        )
        if freeze is None:
            continue
        if freeze.id in freezes:
            problems.add(f"{where}.id", f"duplicate freeze id {freeze.id!r}")
            continue
        freezes[freeze.id] = freeze
    problems.raise_if_any()
    return [freezes[key] for key in sorted(freezes)]


def read_ledger(path: str | Path) -> list[Freeze]:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError.single(str(path), "", f"cannot be read ({exc.strerror})") from None
    return parse_ledger(data, source=str(path))


# --- history (SPEC 5.4) -------------------------------------------------------------------

OPENED, RENEWED, RETIRED, EDITED = "opened", "renewed", "retired", "edited"


@dataclass(frozen=True, slots=True)
class LedgerEvent:
    """What one ledger version did to one freeze. ``chain`` counts the renewals of the freeze
    so far (1 on its first renewal); ``silent`` marks a renewal whose reason did not change."""

    kind: str
    freeze_id: str
    before: Freeze | None
    after: Freeze | None
    silent: bool = False
    chain: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "freeze": self.freeze_id,
            "silent": self.silent,
            "chain": self.chain,
            "before": self.before.as_dict() if self.before else None,
            "after": self.after.as_dict() if self.after else None,
        }


def _comparable(freeze: Freeze) -> Freeze:
    return replace(freeze, missing=())


def diff_ledgers(
    old: Sequence[Freeze], new: Sequence[Freeze], *, chains: Mapping[str, int] | None = None
) -> list[LedgerEvent]:
    """Events that turn ledger version ``old`` into ``new``, sorted by freeze id.

    ``chains`` gives each freeze's renewal count before this version (for ``chain``).
    """
    chains = chains or {}
    before = {f.id: f for f in old}
    after = {f.id: f for f in new}
    events: list[LedgerEvent] = []
    for freeze_id in sorted(before.keys() | after.keys()):
        a, b = before.get(freeze_id), after.get(freeze_id)
        if a is None and b is not None:
            events.append(LedgerEvent(OPENED, freeze_id, None, b))
        elif b is None and a is not None:
            events.append(LedgerEvent(RETIRED, freeze_id, a, None, chain=chains.get(freeze_id, 0)))
        elif a is not None and b is not None and _comparable(a) != _comparable(b):
            if a.expires and b.expires and b.expires > a.expires:
                chain = chains.get(freeze_id, 0) + 1
                silent = (a.reason or "") == (b.reason or "")
                events.append(LedgerEvent(RENEWED, freeze_id, a, b, silent=silent, chain=chain))
            else:
                events.append(LedgerEvent(EDITED, freeze_id, a, b, chain=chains.get(freeze_id, 0)))
    return events


def ledger_history(versions: Iterable[Sequence[Freeze]]) -> list[list[LedgerEvent]]:
    """Events of each successive version (the first against an empty ledger)."""
    history: list[list[LedgerEvent]] = []
    chains: dict[str, int] = {}
    previous: Sequence[Freeze] = ()
    for version in versions:
        events = diff_ledgers(previous, version, chains=chains)
        for event in events:
            if event.kind == RENEWED:
                chains[event.freeze_id] = event.chain
            elif event.kind in (OPENED, RETIRED):
                chains.pop(event.freeze_id, None)
        history.append(events)
        previous = version
    return history
