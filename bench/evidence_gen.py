"""Realistic node ids for the benchmarks: the same seed gives the same suite in every script."""

from __future__ import annotations

import random

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
