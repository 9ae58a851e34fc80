"""The demo's test suites: the modules of each repository, and a suite as evidence JSON."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

# Seeded generators of sample data, never of secrets.
RNG = random.Random


@dataclass
class Suite:
    """A test suite as a mapping of node id to outcome, plus exit status and meta."""

    outcomes: dict[str, str]
    meta: dict[str, str] = field(default_factory=dict)

    def copy(self) -> Suite:
        return Suite(dict(self.outcomes), dict(self.meta))

    def evidence(self) -> bytes:
        records = []
        for nodeid, outcome in self.outcomes.items():
            xfail = outcome == "xfail"
            records.append(
                {
                    "nodeid": nodeid,
                    "when": "setup" if outcome == "skipped" else "call",
                    "outcome": "skipped" if xfail else outcome,
                    "xfail": xfail,
                    "duration": round(RNG(nodeid).uniform(0.001, 0.4), 4),
                }
            )
        exit_status = 1 if "failed" in self.outcomes.values() else 0
        doc = {
            "format": "freezedebt-evidence/1",
            "exit": exit_status,
            "meta": self.meta,
            "records": records,
        }
        return json.dumps(doc).encode()


MODULES = {
    "shop-api": [
        "orders",
        "cart",
        "checkout",
        "pricing/rounding",
        "pricing/discounts",
        "inventory",
        "payments/gateway",
        "payments/refunds",
        "search",
        "auth",
    ],
    "billing-engine": [
        "invoices",
        "ledger_entries",
        "tax/vat",
        "tax/us_sales",
        "dunning",
        "currency",
        "reports",
        "webhooks",
    ],
    "mobile-backend": [
        "push",
        "sessions",
        "profiles",
        "feed",
        "media/upload",
        "media/transcode",
        "rate_limits",
    ],
}


def base_suite(slug: str, rng: random.Random) -> Suite:
    outcomes: dict[str, str] = {}
    for module in MODULES[slug]:
        name = module.replace("/", "_")
        for index in range(rng.randint(18, 45)):
            outcomes[f"tests/test_{name}.py::test_{name}_{index:02d}"] = "passed"
        outcomes[f"tests/test_{name}.py::test_{name}_roundtrip[utf8]"] = "passed"
        outcomes[f"tests/test_{name}.py::test_{name}_roundtrip[latin1]"] = "passed"
    nodeids = sorted(outcomes)
    for nodeid in rng.sample(nodeids, 3):
        outcomes[nodeid] = "skipped"
    outcomes[rng.choice(nodeids)] = "xfail"
    meta = {
        "python": "3.12.7",
        "image_digest": f"sha256:{rng.getrandbits(256):064x}",
        "lockfile_sha256": f"{rng.getrandbits(256):064x}",
        "branch": "main",
    }
    return Suite(outcomes, meta)


def new_sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(160):040x}"
