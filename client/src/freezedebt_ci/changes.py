"""Changed paths of a patch, read from ``git diff --name-status -M BASE...HEAD``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, ProblemCollector
from .paths import normalize_path

_STATUS = re.compile(r"^(?P<kind>[AMDTRC])(?P<score>\d{0,3})$")
_SPACED = re.compile(r"^(?:[AMDT]|[RC]\d{0,3})\s+\S")
_OCTAL = re.compile(rb"\\([0-7]{3})")
_ESCAPES = {
    b"n": b"\n",
    b"t": b"\t",
    b'"': b'"',
    b"\\": b"\\",
    b"a": b"\a",
    b"b": b"\b",
    b"f": b"\f",
    b"r": b"\r",
    b"v": b"\v",
}


@dataclass(frozen=True, slots=True, order=True)
class Change:
    """One changed path. ``old_path`` is set for renames (R) and copies (C)."""

    path: str
    status: str = "M"
    old_path: str | None = None

    def touched(self) -> tuple[str, ...]:
        """The paths this change touches: both sides of a rename, the new path otherwise."""
        if self.status == "R" and self.old_path:
            return (self.old_path, self.path)
        return (self.path,)

    def as_dict(self) -> dict[str, str]:
        out = {"status": self.status, "path": self.path}
        if self.old_path:
            out["old_path"] = self.old_path
        return out


def _unquote(raw: str) -> str:
    """Undo git's C-style quoting of unusual path names (``"caf\\303\\251.py"``)."""
    if not (len(raw) >= 2 and raw[0] == raw[-1] == '"'):
        return raw
    body = raw[1:-1].encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(body):
        if body[i : i + 1] == b"\\" and i + 1 < len(body):
            octal = _OCTAL.match(body, i)
            if octal:
                out.append(int(octal.group(1), 8))
                i += 4
                continue
            out += _ESCAPES.get(body[i + 1 : i + 2], body[i + 1 : i + 2])
            i += 2
            continue
        out += body[i : i + 1]
        i += 1
    return out.decode("utf-8", errors="surrogateescape")


def _check_path(path: str, where: str, problems: ProblemCollector) -> str:
    path = normalize_path(_unquote(path))
    if not path or path.startswith("/") or ".." in path.split("/"):
        problems.add(where, f"expected a repo-relative path, got {path!r}")
    return path


def _lines(text: str) -> list[str]:
    return [line.removesuffix("\r") for line in text.split("\n")]


def parse_name_status(text: str, *, source: str = "changed paths") -> list[Change]:
    """Read ``git diff --name-status -M`` output.

    Lines are ``STATUS<TAB>PATH`` or, for renames and copies, ``R100<TAB>OLD<TAB>NEW``.
    A line without a tab is taken as a bare path (``git diff --name-only`` output), status M.
    Blank lines are ignored.
    """
    problems = ProblemCollector(source)
    changes: list[Change] = []
    # Lines end at "\n" (and "\r\n") only, as git writes them: str.splitlines() would also
    # break a path at the file and group separators (\x1c-\x1e), \x85 and \u2028.
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        if "\t" in line:
            status, *paths = line.split("\t")
        elif _SPACED.match(line):
            # Tabs lost on the way (copied from a terminal): "M  src/a.py", "R100 old new".
            status, *paths = line.split()
        else:
            changes.append(Change(_check_path(line.strip(), where, problems)))
            continue
        match = _STATUS.match(status.strip())
        if not match:
            problems.add(where, f"unknown status {status!r}; expected A, M, D, T, R### or C###")
            continue
        kind = match.group("kind")
        want = 2 if kind in "RC" else 1
        if len(paths) != want:
            problems.add(where, f"status {kind} takes {want} path(s), got {len(paths)}")
            continue
        checked = [_check_path(p, where, problems) for p in paths]
        if want == 2:
            changes.append(Change(checked[1], kind, checked[0]))
        else:
            changes.append(Change(checked[0], kind))
    problems.raise_if_any()
    return sorted(set(changes))


def read_name_status(path: str | Path) -> str:
    """A name-status file's text (UTF-8, a byte-order mark dropped, as editors on some systems
    write one); InputError naming the file when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(str(path), "", f"cannot be read ({exc})") from None


def changes_from_objects(items: Iterable[object], *, source: str = "changed") -> list[Change]:
    """Read changes given as name-status lines or as ``{"status", "path", "old_path"}`` objects
    (the API's form)."""
    problems = ProblemCollector(source)
    lines: list[str] = []
    changes: list[Change] = []
    for index, item in enumerate(items):
        where = f"$[{index}]"
        if isinstance(item, str):
            lines.append(item)
            continue
        if not isinstance(item, Mapping):
            problems.add(where, "expected a name-status line or an object with 'path'")
            continue
        path, status, old = item.get("path"), item.get("status", "M"), item.get("old_path")
        if not isinstance(path, str) or not isinstance(status, str):
            problems.add(where, "expected 'path' and 'status' to be strings")
            continue
        match = _STATUS.match(status)
        if not match:
            problems.add(f"{where}.status", f"unknown status {status!r}")
            continue
        kind = match.group("kind")
        if old is not None and not isinstance(old, str):
            problems.add(f"{where}.old_path", "expected a string")
            continue
        if kind in "RC" and not isinstance(old, str):
            problems.add(f"{where}.old_path", f"status {kind} needs 'old_path'")
            continue
        new_path = _check_path(path, f"{where}.path", problems)
        old_path = _check_path(old, f"{where}.old_path", problems) if isinstance(old, str) else None
        changes.append(Change(new_path, kind, old_path if kind in "RC" else None))
    problems.raise_if_any()
    if lines:
        try:
            changes += parse_name_status("\n".join(lines), source=source)
        except InputError as exc:
            raise InputError(source, exc.problems) from None
    return sorted(set(changes))


def touched_paths(changes: Iterable[Change]) -> set[str]:
    """Every path the patch touches, both sides of a rename included."""
    return {path for change in changes for path in change.touched()}
