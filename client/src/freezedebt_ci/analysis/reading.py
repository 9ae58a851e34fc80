"""Reading blobs and their facts once each, within a time budget."""

from __future__ import annotations

import gc
import marshal
import multiprocessing
import os
import re
import time
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .cache import FactsCache
from .facts import Facts, extract, extract_pair
from .gitread import Git

#: Fewer files than this are parsed in this process; more are shared among worker processes
#: (started once for the whole analysis).
PARALLEL_FROM = 12
MAX_WORKERS = 4


def _record_of(data: bytes, with_digests: bool = False) -> bytes:
    """In a worker: the facts of one blob, marshalled as the cache keeps them (one string
    to send back, stored as it is)."""
    # a worker only parses one file after another: the cyclic collector finds nothing there
    gc.disable()
    return marshal.dumps(extract(data, with_digests=with_digests).to_record())


#: ASCII letters, digits and ``_`` kept, every other byte a space: the words of a file as a
#: bytes pattern's ``\\b`` sees them.
_WORD_BYTES = bytes(
    c if chr(c).isascii() and (chr(c).isalnum() or chr(c) == "_") else 0x20 for c in range(256)
)
#: Flags of a file's words: it has ``import *``; it has a relative ``from .`` import.
STAR_IMPORT, RELATIVE_IMPORT = 1, 2
_RELATIVE = re.compile(rb"\bfrom \.")


def words_of(data: bytes) -> tuple[int, bytes]:
    """Each distinct word of a file once, between spaces, and its flags: ``\\bname\\b``
    matches this text exactly when it matches the file, for a name of word characters. Kept
    in the cache, so a warm run searches files without reading them."""
    # the substring first: a pattern that starts with \b is tried at every position
    relative = b"from ." in data and _RELATIVE.search(data) is not None
    flags = (STAR_IMPORT if b"import *" in data else 0) | (RELATIVE_IMPORT if relative else 0)
    return flags, b" " + b" ".join(set(data.translate(_WORD_BYTES).split())) + b" "


def _pair_of(old: bytes, new: bytes) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """In a worker: both sides of a changed file, compared (``facts.extract_pair``)."""
    gc.disable()
    a, b = extract_pair(old, new)
    return a.to_record(), b.to_record()


def _plain(facts: Facts) -> Facts:
    """The facts without their digests, as ``extract(..., with_digests=False)`` gives them."""
    out = Facts.from_record(facts.to_record())
    out.digest = out.nodoc = out.toplevel = out.imports_ordered = out.imports_set = ""
    for symbol in [*out.symbols.values(), *([out.module] if out.module else [])]:
        symbol.signature = symbol.untyped = symbol.digest = symbol.nodoc = symbol.shape = ""
    return out


class OutOfTime(Exception):
    """The budget ran out: the analysis stops and says it is incomplete."""


class Clock:
    def __init__(self, budget: float) -> None:
        self.start = time.monotonic()
        self.budget = budget

    def check(self) -> None:
        if time.monotonic() - self.start > self.budget:
            raise OutOfTime

    def elapsed(self) -> float:
        return time.monotonic() - self.start


class Reader:
    """Blobs and their facts, read once each, through the cache."""

    def __init__(self, git: Git, cache: FactsCache, clock: Clock) -> None:
        self.git = git
        self.cache = cache
        self.clock = clock
        self.bytes: dict[str, bytes] = {}
        self.facts: dict[str, Facts] = {}
        self.words: dict[str, tuple[int, bytes]] = {}
        self.parsed = 0
        self.parse_errors: dict[str, str] = {}
        self.pool: ProcessPoolExecutor | None = None
        self.pool_failed = False
        #: (oid, with digests) -> facts being extracted in a worker, collected by facts_of
        self.pending: dict[tuple[str, bool], Future[bytes]] = {}
        self.pairs: dict[tuple[str, str], tuple[Facts, Facts]] = {}
        self.pending_pairs: dict[tuple[str, str], Future[tuple[Any, Any]]] = {}

    def close(self) -> None:
        self.pending.clear()
        self.pending_pairs.clear()
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None

    def _workers(self, count: int) -> ProcessPoolExecutor | None:
        """The worker processes, started once, when ``count`` files pay for them."""
        workers = min(os.cpu_count() or 1, MAX_WORKERS)
        # a daemonic process (a Celery prefork child) may not start processes of its own
        daemonic = multiprocessing.current_process().daemon
        if count < PARALLEL_FROM or workers < 2 or self.pool_failed or daemonic:
            return None
        if self.pool is None:
            try:
                self.pool = ProcessPoolExecutor(workers)
            except OSError:
                self.pool_failed = True
                return None
        return self.pool

    def submit(self, oids: Iterable[str], *, with_digests: bool, count: int) -> None:
        """Start extracting the facts of some blobs in the workers while this process goes on
        (``count``: how many files the whole analysis will parse at least, to judge whether
        workers pay); facts_of collects them. Without workers, nothing happens here."""
        todo = [
            o
            for o in dict.fromkeys(oids)
            if (o, with_digests) not in self.pending
            and o not in self.facts
            and not self.cache.has(o, with_digests=with_digests)
        ]
        if not todo or self._workers(count) is None:
            return
        self.load(todo)
        pool = self.pool
        assert pool is not None  # noqa: S101 - just started
        try:
            for oid in todo:
                self.pending[(oid, with_digests)] = pool.submit(
                    _record_of, self.bytes.get(oid, b""), with_digests
                )
        except (OSError, BrokenProcessPool, RuntimeError):
            self.pool_failed = True
            self.close()

    def submit_pairs(self, pairs: Iterable[tuple[str, str]], *, count: int) -> None:
        """Start comparing both sides of changed files in the workers (see :meth:`submit`)."""
        todo = [
            p
            for p in dict.fromkeys(pairs)
            if p not in self.pending_pairs and p not in self.pairs and not self.cache.has_pair(*p)
        ]
        if not todo or self._workers(count) is None:
            return
        self.load(o for p in todo for o in p)
        pool = self.pool
        assert pool is not None  # noqa: S101 - just started
        try:
            for old, new in todo:
                self.pending_pairs[(old, new)] = pool.submit(
                    _pair_of, self.bytes.get(old, b""), self.bytes.get(new, b"")
                )
        except (OSError, BrokenProcessPool, RuntimeError):
            self.pool_failed = True
            self.close()

    def pair_facts(self, old: str, new: str) -> tuple[Facts, Facts]:
        """Both sides of a changed file with digests fit to compare them with each other
        only (``facts.extract_pair``); each side's facts without digests are kept as well."""
        key = (old, new)
        found = self.pairs.get(key)
        if found is not None:
            return found
        found = self.cache.get_pair(old, new)
        if found is None:
            future = self.pending_pairs.pop(key, None)
            if future is not None:
                try:
                    a, b = future.result()
                    found = (Facts.from_record(a), Facts.from_record(b))
                except (OSError, BrokenProcessPool):
                    self.pool_failed = True
                    self.close()
            if found is None:
                self.clock.check()
                self.load([old, new])
                found = extract_pair(self.bytes.get(old, b""), self.bytes.get(new, b""))
            self.cache.put_pair(old, new, found)
            self.parsed += 2
        self.pairs[key] = found
        for oid, facts in zip(key, found, strict=True):
            if oid not in self.facts and self.cache.get(oid, with_digests=False) is None:
                plain = _plain(facts)
                self.facts[oid] = plain
                self.cache.put(oid, plain, with_digests=False)
        return found

    def _collect(self, oid: str, with_digests: bool) -> Facts | None:
        future = self.pending.pop((oid, with_digests), None)
        if future is None:
            return None
        try:
            record = future.result()
        except (OSError, BrokenProcessPool):
            self.pool_failed = True  # extracted here instead
            self.close()
            return None
        facts = Facts.from_record(marshal.loads(record))  # noqa: S302 - from our own worker
        self.cache.put_marshalled(oid, record, with_digests=with_digests)
        self.parsed += 1
        return facts

    def load(self, oids: Iterable[str]) -> None:
        wanted = [o for o in dict.fromkeys(oids) if o not in self.bytes]
        self.bytes.update(self.git.blobs(wanted))

    def load_words(self, oids: Iterable[str]) -> None:
        """The words of many blobs (:func:`words_of`), from the cache or read in one batch."""
        missing = []
        for oid in dict.fromkeys(oids):
            if oid in self.words:
                continue
            found = self.cache.get_words(oid)
            if found is None:
                missing.append(oid)
            else:
                self.words[oid] = found
        if not missing:
            return
        self.clock.check()
        self.load(missing)
        for oid in missing:
            data = self.bytes.get(oid)
            if data is None:  # not in the object store: nothing to find in it
                self.words[oid] = (0, b"")
                continue
            self.words[oid] = found = words_of(data)
            self.cache.put_words(oid, found)

    def prefetch(self, oids: Iterable[str]) -> None:
        """Extract the facts of many blobs at once, in worker processes when there are enough
        of them to pay for starting those (parsing is most of the analysis's cost, and each
        file is parsed on its own)."""
        todo = []
        for oid in dict.fromkeys(oids):
            if oid in self.facts or (oid, False) in self.pending:
                continue
            cached = self.cache.get(oid, with_digests=False)
            if cached is None:
                todo.append(oid)
            else:
                self.facts[oid] = cached
        if not todo:
            return
        self.clock.check()
        self.load(todo)  # in one batch, also when facts_of extracts them one by one
        if self._workers(len(todo)) is None:
            return  # facts_of extracts them one by one
        workers = min(os.cpu_count() or 1, MAX_WORKERS)
        try:
            assert self.pool is not None  # noqa: S101 - just started
            chunk = max(1, min(8, len(todo) // (workers * 4)))
            records = list(
                self.pool.map(_record_of, (self.bytes.get(o, b"") for o in todo), chunksize=chunk)
            )
        except (OSError, BrokenProcessPool):
            self.pool_failed = True  # no processes to be had here: one by one it is
            self.close()
            return
        for oid, record in zip(todo, records, strict=True):
            facts = Facts.from_record(marshal.loads(record))  # noqa: S302 - our own worker's
            self.cache.put_marshalled(oid, record, with_digests=False)
            self.facts[oid] = facts
            self.parsed += 1
        self.clock.check()

    def facts_of(self, oid: str, *, with_digests: bool = False) -> Facts:
        facts = self.facts.get(oid)
        if facts is not None and (not with_digests or facts.digest or facts.error):
            return facts
        cached = self._collect(oid, with_digests) or self.cache.get(oid, with_digests=with_digests)
        if cached is None:
            self.clock.check()
            if oid not in self.bytes:
                self.load([oid])
            cached = extract(self.bytes.get(oid, b""), with_digests=with_digests)
            self.cache.put(oid, cached, with_digests=with_digests)
            self.parsed += 1
        self.facts[oid] = cached
        return cached
