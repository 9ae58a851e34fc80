"""Reading blobs and their facts once each, within a time budget."""

from __future__ import annotations

import time
from collections.abc import Iterable

from .cache import FactsCache
from .facts import Facts, extract
from .gitread import Git


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
        self.parsed = 0
        self.parse_errors: dict[str, str] = {}

    def load(self, oids: Iterable[str]) -> None:
        wanted = [o for o in dict.fromkeys(oids) if o not in self.bytes]
        self.bytes.update(self.git.blobs(wanted))

    def facts_of(self, oid: str, *, with_digests: bool = False) -> Facts:
        facts = self.facts.get(oid)
        if facts is not None and (not with_digests or facts.digest or facts.error):
            return facts
        cached = self.cache.get(oid, with_digests=with_digests)
        if cached is None:
            self.clock.check()
            if oid not in self.bytes:
                self.load([oid])
            cached = extract(self.bytes.get(oid, b""), with_digests=with_digests)
            self.cache.put(oid, cached, with_digests=with_digests)
            self.parsed += 1
        self.facts[oid] = cached
        return cached
