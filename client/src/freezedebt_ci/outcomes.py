"""The outcome model of a run: the four buckets, how the records of one attempt combine, and
:class:`Evidence`, a parsed run. The JSON and JUnit XML readers both build on it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import eq, ne
from typing import Any

PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"
XFAIL = "xfail"
BUCKETS: tuple[str, ...] = (PASSED, FAILED, SKIPPED, XFAIL)
FORMAT = "freezedebt-evidence/1"

DEFAULT_MAX_RECORDS = 2_000_000
DEFAULT_MAX_NODEID_LENGTH = 4096

#: Per-record fields with a meaning of their own; anything else is kept and ignored.
EXTRA_FIELDS = ("duration", "longrepr", "signature", "freeze")
#: The field that marks a subtest's record (its message and parameters).
SUBTEST_FIELD = "subtest"
#: How the records of one attempt combine (subtests): the higher rank wins.
RANK = {PASSED: 0, XFAIL: 1, SKIPPED: 2, FAILED: 3}


@dataclass(frozen=True, slots=True)
class Buckets:
    passed: frozenset[str]
    failed: frozenset[str]
    skipped: frozenset[str]
    xfail: frozenset[str]

    def counts(self) -> dict[str, int]:
        return {
            PASSED: len(self.passed),
            FAILED: len(self.failed),
            SKIPPED: len(self.skipped),
            XFAIL: len(self.xfail),
        }


@dataclass(slots=True)
class Evidence:
    """A parsed run: its exit status, the bucket of each node id, its ``meta``, and the deciding
    record of each node id that carried extras (duration, longrepr, signature, freeze)."""

    exit: int
    outcomes: dict[str, str]
    meta: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    source: str = "evidence"

    def buckets(self) -> Buckets:
        outcomes = self.outcomes
        # Written for a few hundred thousand node ids, nearly all passed: the node ids of the
        # other buckets are picked out without a Python-level step per node id, and the passed
        # ones are the rest.
        passed = frozenset(compress(outcomes, map(eq, outcomes.values(), repeat(PASSED))))
        groups: dict[str, list[str]] = {FAILED: [], SKIPPED: [], XFAIL: []}
        for nodeid in compress(outcomes, map(ne, outcomes.values(), repeat(PASSED))):
            groups[outcomes[nodeid]].append(nodeid)
        return Buckets(
            passed,
            frozenset(groups[FAILED]),
            frozenset(groups[SKIPPED]),
            frozenset(groups[XFAIL]),
        )

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(BUCKETS, 0)
        for bucket, count in Counter(self.outcomes.values()).items():
            counts[bucket] += count  # KeyError for a bucket that is none of the four
        return counts

    def to_json(self) -> dict[str, Any]:
        """The evidence JSON form of this run (one record per node id)."""
        records = []
        for nodeid, bucket in self.outcomes.items():
            record: dict[str, Any] = {
                "nodeid": nodeid,
                "when": "call",
                "outcome": SKIPPED if bucket == XFAIL else bucket,
                "xfail": bucket == XFAIL,
            }
            for name in EXTRA_FIELDS:
                value = self.extras.get(nodeid, {}).get(name)
                if value is not None:
                    record[name] = value
            records.append(record)
        return {"format": FORMAT, "exit": self.exit, "meta": self.meta, "records": records}


def bucket_of(outcome: str, xfail: bool) -> str:
    """The bucket of one deciding record. A failure stays a failure even when marked xfail
    (a strict xpass); otherwise the xfail mark wins over skipped and passed (xfailed, xpassed)."""
    if outcome == FAILED:
        return FAILED
    return XFAIL if xfail else outcome
