"""Today's patches of each demo repository: one scenario for each thing a report can say."""

from __future__ import annotations

import random

from evidence.demo.suites import MODULES, Suite


def scenarios(slug: str, base: Suite, rng: random.Random) -> list[dict]:
    modules = MODULES[slug]
    frozen_module = modules[3]
    name0 = modules[0].replace("/", "_")
    name1 = modules[1].replace("/", "_")
    name2 = modules[2].replace("/", "_")

    adds = base.copy()
    for index in range(4):
        adds.outcomes[f"tests/test_{name0}.py::test_{name0}_edge_{index}"] = "passed"
    skips = base.copy()
    victim = next(
        n
        for n in sorted(skips.outcomes)
        if n.startswith(f"tests/test_{name1}.py") and skips.outcomes[n] == "passed"
    )
    skips.outcomes[victim] = "skipped"
    lost = base.copy()
    for nodeid in [n for n in sorted(lost.outcomes) if n.startswith(f"tests/test_{name2}.py")][:3]:
        del lost.outcomes[nodeid]
    for index in range(10):
        lost.outcomes[f"tests/test_{name2}.py::test_{name2}_cheap_{index}"] = "passed"
    failing = base.copy()
    failing.outcomes[
        next(n for n in sorted(failing.outcomes) if failing.outcomes[n] == "passed")
    ] = "failed"
    drift = adds.copy()
    drift.meta["python"] = "3.13.1"
    frozen = adds.copy()
    return [
        {
            "ref": "PR-101",
            "title": f"Add edge cases for {modules[0]}",
            "head": adds,
            "changed": f"M\tsrc/{modules[0]}.py\nM\ttests/test_{name0}.py\n",
        },
        {
            "ref": "PR-102",
            "title": f"Speed up {modules[3]}",
            "head": frozen,
            "changed": f"M\tsrc/{frozen_module}.py\nM\ttests/test_{name0}.py\n",
        },
        {
            "ref": "PR-103",
            "title": f"Skip slow {modules[1]} test",
            "head": skips,
            "changed": f"M\ttests/test_{name1}.py\n",
        },
        {
            "ref": "PR-104",
            "title": f"Rewrite {modules[2]} tests",
            "head": lost,
            "changed": f"M\ttests/test_{name2}.py\nM\ttests/fixtures/{name2}.json\n",
        },
        {
            "ref": "PR-105",
            "title": "Refactor error handling",
            "head": failing,
            "changed": f"M\tsrc/{modules[1]}.py\n",
        },
        {
            "ref": "PR-106",
            "title": "Bump runtime",
            "head": drift,
            "changed": "M\tDockerfile\nM\tsrc/settings.py\n",
        },
        {
            "ref": "PR-107",
            "title": "Update the freeze ledger",
            "head": adds,
            "changed": "M\tfreeze_ledger.toml\n",
        },
        {
            "ref": "PR-108",
            "title": "Work in progress",
            "head": None,
            "changed": f"M\tsrc/{modules[0]}.py\n",
        },
        {
            "ref": "PR-109",
            "title": "Rebase onto a commit CI never ran",
            "head": adds,
            "changed": f"M\tsrc/{modules[0]}.py\n",
            "unknown_base": True,
        },
    ]
