#!/usr/bin/env python3
"""Benchmark of the offline ``delta`` path against a plain set-based floor.

Generates, with a fixed seed, a base and a head evidence file of 200,000 records each
(node ids across about 2,000 test files, about 1% skipped, some failures and xfails; the head
adds, removes and flips some tests), then measures in this process, alternating, N rounds of:

  (a) the full ``delta`` path: ``read_evidence`` of both files, ``compute_report``,
      ``report_json``;
  (b) a floor computing the same figures as plainly as possible: ``json.load``, a bucketing
      loop over the records, set differences, per-file ``Counter`` objects, sorted lists.

It prints the median of each, the ratio a/b (target: at most 1.5), the tracemalloc peak of
each (measured in separate, untimed runs) and the peak resident set size of the process.

Standard library plus ``freezedebt_ci`` only::

    python bench/bench_delta.py [--records 200000] [--rounds 7] [--keep DIR] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import json
import pstats
import random
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidence_gen import AREAS, base_and_head, nodeids, record, traced_peak  # beside this

from freezedebt_ci.changes import parse_name_status
from freezedebt_ci.evidence import read_evidence
from freezedebt_ci.ledger import parse_ledger
from freezedebt_ci.report import compute_report, report_json

SEED = 2026
TODAY = dt.date(2026, 11, 5)
TARGET_RATIO = 1.5


def generate(directory: Path, records: int) -> dict[str, Path]:
    """Write base.json, head.json, a ledger and changed paths; return their paths."""
    rng = random.Random(SEED)  # noqa: S311 - reproducible test data, not secrets
    universe = nodeids(rng, records + records // 100, files=2000)
    base, head = base_and_head(rng, universe, records)
    meta = {"python": "3.11.7", "image_digest": "sha256:" + "ab" * 32}
    paths = {name: directory / f"{name}.json" for name in ("base", "head")}
    for name, outcomes in (("base", base), ("head", head)):
        order = list(outcomes)
        rng.shuffle(order)
        document = {
            "format": "freezedebt-evidence/1",
            "exit": 1 if "failed" in outcomes.values() else 0,
            "meta": {**meta, "sha": f"{rng.getrandbits(160):040x}"},
            "records": [record(rng, nodeid, outcomes[nodeid]) for nodeid in order],
        }
        paths[name].write_text(json.dumps(document), encoding="utf-8")

    files = sorted({nodeid.partition("::")[0] for nodeid in universe})
    frozen = [n for n, b in base.items() if b == "skipped"][:5]
    ledger = "".join(
        f'[[freeze]]\nid = "FRZ-{i:03d}"\ntest = "{nodeid}"\n'
        f'covers = ["src/{AREAS[i]}/**"]\nowner = "team-{AREAS[i]}"\n'
        f"opened = 2026-10-{25 + i}\nexpires = 2026-11-{5 + i:02d}\n"
        'reason = "timeout talking to the sandbox"\n\n'
        for i, nodeid in enumerate(frozen)
    )
    paths["ledger"] = directory / "freeze_ledger.toml"
    paths["ledger"].write_text(ledger, encoding="utf-8")
    changed = [f"M\tsrc/{rng.choice(AREAS)}/module_{i}.py" for i in range(25)]
    changed += [f"M\t{path}" for path in rng.sample(files, 15)]
    paths["changed"] = directory / "changed.txt"
    paths["changed"].write_text("\n".join(changed) + "\n", encoding="utf-8")
    return paths


# --- (a) the delta path ---------------------------------------------------------------------


def delta_path(paths: dict[str, Path]) -> tuple[dict[str, Any], str]:
    freezes = parse_ledger(paths["ledger"].read_bytes(), source=str(paths["ledger"]))
    changes = parse_name_status(paths["changed"].read_text(encoding="utf-8"))
    report = compute_report(
        base=read_evidence(paths["base"]),
        head=read_evidence(paths["head"]),
        freezes=freezes,
        changes=changes,
        today=TODAY,
    )
    return report, report_json(report)


# --- (b) the floor --------------------------------------------------------------------------


def _load(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    buckets: dict[str, set[str]] = {
        "passed": set(),
        "failed": set(),
        "skipped": set(),
        "xfail": set(),
    }
    for r in data["records"]:
        key = "xfail" if r["xfail"] else r["outcome"]
        buckets[key].add(r["nodeid"])
    return {"exit": data["exit"], **buckets}


def floor_path(paths: dict[str, Path]) -> dict[str, Any]:
    base, head = _load(paths["base"]), _load(paths["head"])
    new_skips = head["skipped"] - base["skipped"]
    retired = base["skipped"] - head["skipped"]
    lost = base["passed"] - head["passed"]
    earned = head["passed"] - base["passed"]
    new_xfails = head["xfail"] - base["xfail"]

    def by_file(ids: set[str]) -> Counter[str]:
        return Counter(nodeid.partition("::")[0] for nodeid in ids)

    base_passed, head_passed = by_file(base["passed"]), by_file(head["passed"])
    new_by_file, retired_by_file, lost_by_file = by_file(new_skips), by_file(retired), by_file(lost)
    files = set(base_passed) | set(head_passed)
    for run in (base, head):
        for key in ("failed", "skipped", "xfail"):
            files |= by_file(run[key]).keys()
    return {
        "base": {key: len(base[key]) for key in ("passed", "failed", "skipped", "xfail")},
        "head": {key: len(head[key]) for key in ("passed", "failed", "skipped", "xfail")},
        "net_executed_delta": len(head["passed"]) - len(base["passed"]),
        "earned": len(earned),
        "borrowed": len(head["passed"] & base["passed"]),
        "new_skips": sorted(new_skips),
        "retired_skips": sorted(retired),
        "lost": sorted(lost),
        "new_xfails": sorted(new_xfails),
        "per_file": [
            {
                "file": name,
                "base_passed": base_passed[name],
                "head_passed": head_passed[name],
                "delta": head_passed[name] - base_passed[name],
                "new_skips": new_by_file[name],
                "retired_skips": retired_by_file[name],
                "lost": lost_by_file[name],
            }
            for name in sorted(files)
        ],
    }


# --- measurement ----------------------------------------------------------------------------


def _timed(func: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call (CPU time is steadier on a shared machine)."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    func()
    return time.perf_counter() - wall, time.process_time() - cpu


def _check_same_figures(paths: dict[str, Path]) -> None:
    report, _ = delta_path(paths)
    floor = floor_path(paths)
    for key in ("base", "head", "net_executed_delta", "earned", "borrowed"):
        if report["figures"][key] != floor[key]:
            raise SystemExit(f"the floor disagrees with the report on figures.{key}")
    for key in ("new_skips", "retired_skips", "lost", "new_xfails", "per_file"):
        if report[key] != floor[key]:
            raise SystemExit(f"the floor disagrees with the report on {key}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="write the generated files here and keep them")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of path (a)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="freezedebt-bench-") as tmp:
        directory = args.keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        paths = generate(directory, args.records)
        sizes = ", ".join(f"{p.name} {p.stat().st_size / 2**20:.1f} MiB" for p in paths.values())
        print(f"generated in {time.perf_counter() - started:.1f}s: {sizes}")
        _check_same_figures(paths)

        times: dict[str, list[float]] = {"a": [], "b": []}
        cpu: dict[str, list[float]] = {"a": [], "b": []}
        for round_number in range(args.rounds):
            order = ("a", "b") if round_number % 2 == 0 else ("b", "a")
            for which in order:
                work = (lambda: delta_path(paths)) if which == "a" else (lambda: floor_path(paths))
                wall, used = _timed(work)
                times[which].append(wall)
                cpu[which].append(used)
        median_a, median_b = statistics.median(times["a"]), statistics.median(times["b"])
        ratio = median_a / median_b
        cpu_ratio = statistics.median(cpu["a"]) / statistics.median(cpu["b"])
        peak_a = traced_peak(lambda: delta_path(paths))
        peak_b = traced_peak(lambda: floor_path(paths))
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        maxrss_mib = maxrss / 2**20 if sys.platform == "darwin" else maxrss / 2**10

        print(f"records per run      : {args.records:,}   rounds: {args.rounds}")
        print(
            f"(a) delta path median: {median_a * 1000:8.1f} ms   "
            f"[{', '.join(f'{t * 1000:.0f}' for t in times['a'])}]"
        )
        print(
            f"(b) floor median     : {median_b * 1000:8.1f} ms   "
            f"[{', '.join(f'{t * 1000:.0f}' for t in times['b'])}]"
        )
        print(f"ratio a/b            : {ratio:8.2f}   (target <= {TARGET_RATIO})")
        print(f"ratio a/b, CPU time  : {cpu_ratio:8.2f}   (medians of process time)")
        print(f"tracemalloc peak (a) : {peak_a / 2**20:8.1f} MiB")
        print(f"tracemalloc peak (b) : {peak_b / 2**20:8.1f} MiB")
        print(f"ru_maxrss (process)  : {maxrss_mib:8.1f} MiB")

        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            delta_path(paths)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
