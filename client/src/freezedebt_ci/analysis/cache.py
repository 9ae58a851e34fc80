"""Facts cached by blob id: a blob's bytes never change, so its facts hold for as long as the
Python version (``ast`` differs between versions) and the facts' own version stay the same."""

from __future__ import annotations

import json
import marshal
import os
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any

from .facts import FACTS_VERSION, PYTHON, Facts

#: Entries kept at most; those this run did not use go first.
MAX_ENTRIES = 50_000
#: Whole answers kept at most.
MAX_ANSWERS = 32
#: The key prefix of a blob's words (see ``reading.words_of``), kept beside its facts.
WORDS = "w1:"
#: The key prefix of the two sides of a changed file, compared (``facts.extract_pair``).
PAIR = "p1:"


class FactsCache:
    """One file per Python and facts version, in the repository's git directory."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / f"facts-py{PYTHON}-v{FACTS_VERSION}.marshal" if folder else None
        # oid -> (with digests, the record marshalled): records are decoded when asked for,
        # so a large cache costs little to load; WORDS + oid -> (flags, the blob's words)
        self.entries: dict[str, tuple[int, bytes]] = {}
        self.used: set[str] = set()
        self.added = 0
        self.loaded = 0
        if self.path is not None:
            try:
                # Our own file in the git directory; what it holds is only read as tuples and
                # strings, never run. A damaged or foreign file is ignored.
                data = marshal.loads(self.path.read_bytes())  # noqa: S302
            except (OSError, EOFError, ValueError, TypeError):
                data = None
            if isinstance(data, dict):
                self.entries = data
                self.loaded = sum(1 for k in data if not k.startswith((WORDS, PAIR)))

    def has(self, oid: str, *, with_digests: bool) -> bool:
        """Whether :meth:`get` may find the facts (without decoding them)."""
        entry = self.entries.get(oid)
        return isinstance(entry, tuple) and len(entry) == 2 and bool(entry[0] or not with_digests)

    def has_pair(self, old: str, new: str) -> bool:
        return f"{PAIR}{old}:{new}" in self.entries

    def get(self, oid: str, *, with_digests: bool) -> Facts | None:
        entry = self.entries.get(oid)
        if not isinstance(entry, tuple) or len(entry) != 2 or (with_digests and not entry[0]):
            return None
        try:
            facts = Facts.from_record(marshal.loads(entry[1]))  # noqa: S302 - see __init__
        except (TypeError, ValueError, IndexError, KeyError, EOFError):
            return None
        self.used.add(oid)
        return facts

    def put(self, oid: str, facts: Facts, *, with_digests: bool) -> None:
        self.put_marshalled(oid, marshal.dumps(facts.to_record()), with_digests=with_digests)

    def put_marshalled(self, oid: str, record: bytes, *, with_digests: bool) -> None:
        """Facts already marshalled (``marshal.dumps(facts.to_record())``)."""
        self.entries[oid] = (with_digests, record)
        self.used.add(oid)
        self.added += 1

    def get_words(self, oid: str) -> tuple[int, bytes] | None:
        entry = self.entries.get(WORDS + oid)
        if (
            not isinstance(entry, tuple)
            or len(entry) != 2
            or not isinstance(entry[0], int)
            or not isinstance(entry[1], bytes)
        ):
            return None
        self.used.add(WORDS + oid)
        return entry

    def put_words(self, oid: str, words: tuple[int, bytes]) -> None:
        self.entries[WORDS + oid] = words
        self.used.add(WORDS + oid)
        self.added += 1

    def get_pair(self, old: str, new: str) -> tuple[Facts, Facts] | None:
        name = f"{PAIR}{old}:{new}"
        entry = self.entries.get(name)
        if not isinstance(entry, tuple) or len(entry) != 2 or not isinstance(entry[1], bytes):
            return None
        try:
            a, b = marshal.loads(entry[1])  # noqa: S302 - see __init__
            pair = (Facts.from_record(a), Facts.from_record(b))
        except (TypeError, ValueError, IndexError, KeyError, EOFError):
            return None
        self.used.add(name)
        return pair

    def put_pair(self, old: str, new: str, pair: tuple[Facts, Facts]) -> None:
        name = f"{PAIR}{old}:{new}"
        self.entries[name] = (1, marshal.dumps((pair[0].to_record(), pair[1].to_record())))
        self.used.add(name)
        self.added += 1

    def save(self) -> None:
        """Written whole to a temporary file and renamed over the old one, so a reader never
        sees half a cache; a cache that cannot be written is simply not kept."""
        if self.path is None or not self.added:
            return
        keep = self.entries
        if len(keep) > MAX_ENTRIES:
            unused = [k for k in keep if k not in self.used]
            for key in unused[: len(keep) - MAX_ENTRIES]:
                del keep[key]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".facts-")
            with os.fdopen(fd, "wb") as out:
                marshal.dump(keep, out)
            os.replace(tmp, self.path)
        except OSError:
            return


class Memo:
    """Whole answers, keyed by everything they depend on: a second analysis of the same patch
    (a job run again, ``patch --analyze`` after ``analyze``) reads the first one's answer.
    The newest :data:`MAX_ANSWERS` are kept."""

    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder / "answers"
        self.path = self.folder / f"{key}.json"

    def get(self) -> dict[str, Any] | None:
        try:
            answer = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(answer, dict) or not isinstance(answer.get("stats"), dict):
            return None
        with suppress(OSError):
            os.utime(self.path)  # newest first when old answers are dropped
        return answer

    def put(self, answer: dict[str, Any]) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".answer-")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(answer, out)
            os.replace(tmp, self.path)
            kept = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
            for old in kept[:-MAX_ANSWERS]:
                old.unlink(missing_ok=True)
        except OSError:
            return
