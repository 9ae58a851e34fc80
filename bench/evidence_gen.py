"""The benchmarks' synthetic suite: realistic node ids, records and a base and head of them;
the same seed gives the same suite in every script. No Django here (bench_delta runs without)."""

from __future__ import annotations

import gc
import random
import tracemalloc
from collections.abc import Callable
from typing import Any

AREAS = ["api", "billing", "pricing", "orders", "users", "search", "auth", "reports", "jobs"]
LAYERS = ["unit", "integration", "functional", "contract"]
_VERBS = ["create", "update", "delete", "list", "get", "apply", "reject", "round", "parse", "sync"]
_NOUNS = ["invoice", "fee", "order", "user", "token", "refund", "cart", "report", "batch", "tax"]
_CASES = ["empty", "one", "many", "unicode", "negative", "zero", "max", "boundary"]


def nodeids(rng: random.Random, count: int, files: int) -> list[str]:
    """``count`` distinct, realistic node ids over ``files`` test files."""
    paths = sorted(
        {
            f"tests/{rng.choice(LAYERS)}/{rng.choice(AREAS)}/test_{rng.choice(_NOUNS)}_"
            f"{rng.choice(_VERBS)}_{i}.py"
            for i in range(files)
        }
    )
    ids: set[str] = set()
    while len(ids) < count:
        path = rng.choice(paths)
        name = f"test_{rng.choice(_VERBS)}_{rng.choice(_NOUNS)}_{rng.randrange(40)}"
        roll = rng.random()
        if roll < 0.3:
            name = f"Test{rng.choice(_NOUNS).title()}{rng.choice(_VERBS).title()}::{name}"
        if roll > 0.75:
            name += f"[{rng.choice(_CASES)}-{rng.randrange(12)}]"
        ids.add(f"{path}::{name}")
    return sorted(ids)


def bucket(rng: random.Random) -> str:
    """A bucket as a large, healthy suite has them: 1% skipped, 0.2% failed, 0.3% xfail."""
    roll = rng.random()
    if roll < 0.010:
        return "skipped"
    if roll < 0.012:
        return "failed"
    if roll < 0.015:
        return "xfail"
    return "passed"


def record(
    rng: random.Random, nodeid: str, bucket_: str, *, signature: bool = False
) -> dict[str, Any]:
    """An evidence record as the plugin writes it (a failure with its assertion line, and with
    a signature when asked)."""
    result: dict[str, Any] = {
        "nodeid": nodeid,
        "when": "setup" if bucket_ == "skipped" else "call",
        "outcome": "skipped" if bucket_ == "xfail" else bucket_,
        "xfail": bucket_ == "xfail",
        "duration": round(rng.expovariate(20.0), 6),
    }
    if bucket_ == "failed":
        result["longrepr"] = f"E       AssertionError: assert {rng.randrange(99)} == 0"
        if signature:
            result["signature"] = f"{rng.getrandbits(64):016x}"
    return result


def base_and_head(
    rng: random.Random, universe: list[str], records: int
) -> tuple[dict[str, str], dict[str, str]]:
    """The buckets of a base run of ``records`` tests and of a head that removes, flips and
    adds some, keeping the size of the base."""
    base = {nodeid: bucket(rng) for nodeid in universe[:records]}
    head = dict(base)
    for nodeid in rng.sample(sorted(base), records // 400):  # removed tests
        del head[nodeid]
    for nodeid in rng.sample(sorted(head), records // 500):  # flipped outcomes
        head[nodeid] = rng.choice(["passed", "failed", "skipped", "xfail"])
    for nodeid in universe[records : records + records - len(head)]:  # added tests
        head[nodeid] = bucket(rng)
    return base, head


def traced_peak(func: Callable[[], object]) -> int:
    """The tracemalloc peak of one call, in bytes."""
    gc.collect()
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
