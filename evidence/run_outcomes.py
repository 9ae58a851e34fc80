"""The packed outcomes of a run (RunOutcomes): every node id and its bucket in one compressed
value, which a report reads instead of the run's rows of results.

The format: the header line ``freezedebt-outcomes/1`` followed by the number of node ids of
each bucket, a newline, then the node ids bucket by bucket (in ``_PACKED`` order), separated by
NUL characters (a node id never holds one: the ingest rejects it), all zlib-compressed.
"""

import zlib
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from itertools import accumulate, chain, compress, repeat
from operator import eq, ne

from django.db import connection

from evidence.binary_columns import write_bytes
from evidence.models import Run, RunOutcomes, TestResult
from freezedebt_ci.outcomes import FAILED, PASSED, SKIPPED, XFAIL

# The stored bucket (TestResult.Bucket) of each of the rules' buckets.
BUCKETS = {
    PASSED: TestResult.Bucket.PASSED.value,
    FAILED: TestResult.Bucket.FAILED.value,
    SKIPPED: TestResult.Bucket.SKIPPED.value,
    XFAIL: TestResult.Bucket.XFAIL.value,
}

OUTCOMES_FORMAT = "freezedebt-outcomes/1"
_PACKED = (PASSED, FAILED, SKIPPED, XFAIL)
# Level 1: node ids compress well at it, and it is several times faster than the default.
_OUTCOMES_LEVEL = 1


def outcomes_pack(outcomes: Mapping[str, str]) -> bytes:
    """The outcomes of a run (node id: the rules' bucket) as stored in RunOutcomes.

    Every node id must be free of NUL characters (the ingest has checked it).
    """
    nodeids = list(outcomes)
    buckets = list(outcomes.values())
    # Nearly all node ids pass: those are picked out without a Python-level step per node id,
    # and only the others are grouped one by one.
    groups: dict[str, list[str]] = {name: [] for name in _PACKED}
    groups[PASSED] = list(compress(nodeids, map(eq, buckets, repeat(PASSED))))
    for nodeid, bucket in compress(
        zip(nodeids, buckets, strict=True), map(ne, buckets, repeat(PASSED))
    ):
        groups[bucket].append(nodeid)
    ordered = [groups[name] for name in _PACKED]
    header = " ".join([OUTCOMES_FORMAT, *(str(len(group)) for group in ordered)])
    text = "\0".join(chain.from_iterable(ordered))
    return zlib.compress(f"{header}\n{text}".encode(), _OUTCOMES_LEVEL)


def _read(packed: bytes) -> tuple[list[int], str]:
    """The number of node ids of each bucket and the NUL-separated node ids of packed
    outcomes; ValueError when they are not such."""
    try:
        text = zlib.decompress(packed).decode()
    except (zlib.error, UnicodeDecodeError) as error:
        raise ValueError(f"packed outcomes that cannot be read: {error}") from None
    header, _, body = text.partition("\n")
    fields = header.split(" ")
    if len(fields) != 1 + len(_PACKED) or fields[0] != OUTCOMES_FORMAT:
        raise ValueError(f"packed outcomes of another format: {header[:80]!r}")
    return [int(field) for field in fields[1:]], body


def outcomes_unpack(packed: bytes) -> tuple[dict[str, str], dict[str, int]]:
    """The outcomes packed by :func:`outcomes_pack` and the number of node ids in each bucket;
    ValueError when they are not such."""
    sizes, body = _read(packed)
    nodeids = body.split("\0") if body else []
    if sum(sizes) != len(nodeids):
        raise ValueError(f"packed outcomes announce {sum(sizes)} node ids, hold {len(nodeids)}")
    # The passed ones (first, and nearly all) make the dict; the few others are added to it.
    outcomes = dict.fromkeys(nodeids[: sizes[0]], _PACKED[0])
    start = sizes[0]
    for name, size in zip(_PACKED[1:], sizes[1:], strict=True):
        outcomes.update(dict.fromkeys(nodeids[start : start + size], name))
        start += size
    if len(outcomes) != len(nodeids):
        raise ValueError("packed outcomes name a node id twice")
    return outcomes, dict(zip(_PACKED, sizes, strict=True))


def outcomes_find(packed: bytes, nodeids: Iterable[str]) -> dict[str, str]:
    """The bucket of each of ``nodeids`` the packed outcomes hold (the others are left out),
    found in the text without splitting it: a few node ids of a large run."""
    sizes, body = _read(packed)
    ends = list(accumulate(sizes))
    found = {}
    for nodeid in nodeids:
        if not nodeid or "\0" in nodeid:
            continue
        position = _position(body, nodeid)
        if position >= 0:
            index = body.count("\0", 0, position)  # the node ids before it
            bucket = bisect_right(ends, index)
            if bucket < len(_PACKED):
                found[nodeid] = _PACKED[bucket]
    return found


def _position(body: str, nodeid: str) -> int:
    """Where ``nodeid`` starts as a whole NUL-separated item of ``body``, or -1."""
    if body.startswith(nodeid) and body[len(nodeid) : len(nodeid) + 1] in ("", "\0"):
        return 0
    inner = body.find(f"\0{nodeid}\0")
    if inner >= 0:
        return inner + 1
    if body.endswith(f"\0{nodeid}"):
        return len(body) - len(nodeid)
    return -1


def outcomes_store(run: Run, packed: bytes) -> None:
    """Store a run's packed outcomes (in the transaction that stores its results)."""
    if connection.vendor == "postgresql":
        RunOutcomes.objects.create(run=run, packed=b"")
        write_bytes(RunOutcomes, run.pk, "packed", packed)
    else:
        RunOutcomes.objects.create(run=run, packed=packed)
