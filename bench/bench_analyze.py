#!/usr/bin/env python3
"""Benchmark of ``freezedebt-ci analyze`` on a large real Python tree against a parse floor.

Copies the running interpreter's own standard library (its ``test`` folders included, so there
are tests; ``site-packages``, ``lib-dynload``, ``config-*`` and ``__pycache__`` left out) into a
scratch git repository in a temporary folder, commits it as the base, then commits on top a
realistic patch of a few files (``--patch typical``, the default):

* the body of a helper with a few callers changes (``shutil.copyfileobj``), or with
  ``--patch wide`` the body of ``posixpath.join``, reached as ``os.path.join`` from hundreds
  of modules and most tests, so that most of the tree must be read;
* a public signature changes (``shutil.make_archive`` gains a keyword-only parameter);
* one test is edited (``test/test_shutil.py``);
* ``--extra N`` more production modules get a body change in their first top-level function
  (picked with a fixed seed), for a larger patch.

The repository is repacked, as a clone would be (``--loose`` keeps loose objects). Then, in
this one process, alternating, N rounds of:

  (1) the floor: ``git ls-tree -r`` of the head commit, every production ``.py`` blob of it
      (production as the analysis's own layout decides) read from git through one
      ``git cat-file --batch`` (``--floor-source disk`` reads the files of the copy instead),
      and ``ast.parse`` of each once, each tree dropped after use;
  (2) cold analysis: ``engine.analyze(Options(...))`` with the facts cache emptied first (so it
      parses what it needs and writes the cache, as a first run in CI does);
  (3) cold analysis without any cache (``cache=False``: nothing read, nothing written);
  (4) warm analysis: the same with the cache the previous cold run left in place.

Case (3) runs only with ``--nocache``. For scale, a second floor ``(1b)`` also reads and
parses the test files (the analysis must read tests; the target is against floor (1) only).

It prints the median seconds of each, the ratio to the floor, and the targets of issue 12 (cold
at most 1.5 times the floor, warm at most 0.25 times). Peak memory is measured apart from the
timings: each case runs once more in a fresh child process of this script, which reports the
peak resident set of its own address space (``VmHWM`` of ``/proc/self/status``, which starts
afresh at ``exec``; ``ru_maxrss`` where there is no ``/proc``, which on Linux would carry over
the parent's peak through fork and exec). That is the peak of that one case, interpreter and
imports included; a child that only imports is printed as the baseline. ``git`` children are
not counted. Target: at most 500 MiB. It also checks that the warm and cold analyses agree
(everything but ``stats``), that the warm run parsed nothing, and prints what the analysis
found.

A run costs about (rounds + 1) x (floor + cold + warm) plus building the repository (a few
seconds): about a minute once the analysis meets its targets; ``--rounds 1`` for a quick look.

Standard library plus ``freezedebt_ci`` only::

    python bench/bench_analyze.py [--patch typical|wide] [--rounds 3] [--extra 3] [--nocache]
        [--stdlib DIR] [--keep DIR] [--floor-source git|disk] [--loose] [--profile cold|warm]
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import gc
import json
import os
import pstats
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from freezedebt_ci.analysis.config import Settings
from freezedebt_ci.analysis.engine import FIXTURE, PRODUCTION, TEST, Layout, Options, analyze
from freezedebt_ci.analysis.gitread import Git

SEED = 2026
TARGET_COLD, TARGET_WARM, TARGET_PEAK_MIB = 1.5, 0.25, 500.0
SKIP_DIRS = {"__pycache__", "site-packages", "lib-dynload"}
TEST_DIR_NAMES = {"test", "tests", "idle_test"}
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2026-11-05T12:00:00Z",
    "GIT_COMMITTER_DATE": "2026-11-05T12:00:00Z",
}


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(  # noqa: S603 - a fixed argv
        ["git", "-C", str(repo), *args],  # noqa: S607
        input=data,
        capture_output=True,
        check=False,
        env=GIT_ENV,
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


# --- the scratch repository -----------------------------------------------------------------


def _ignore(folder: str, names: list[str]) -> set[str]:
    return {
        n
        for n in names
        if n in SKIP_DIRS
        or n.startswith("config-")
        or n.endswith((".pyc", ".so", ".a"))
        or os.path.islink(os.path.join(folder, n))
    }


def _replace(path: Path, old: str, new: str) -> bool:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        return False
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return True


def _touch_first_function(path: Path) -> bool:
    """Add a statement at the end of the first top-level function's body (a body change)."""
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return False
    lines = text.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.body[0].lineno > node.lineno:
            indent = " " * node.body[0].col_offset
            end = node.body[-1].end_lineno or node.body[-1].lineno
            lines.insert(end, f"{indent}_bench_marker = None\n")
            path.write_text("".join(lines), encoding="utf-8")
            return True
    return False


def build_repo(
    stdlib: Path, directory: Path, extra: int, *, loose: bool, patch: str = "typical"
) -> list[str]:
    """Copy, commit the base, patch, commit the head; return what the patch touched.

    ``typical``: the body of a helper with a few callers (``shutil.copyfileobj``) and a public
    signature (``shutil.make_archive``). ``wide``: the body of ``posixpath.join`` instead,
    which every module and most tests reach as ``os.path.join``, so that most of the tree
    must be read."""
    repo = directory / "stdlib"
    shutil.copytree(stdlib, repo, ignore=_ignore)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base: the standard library")
    touched: list[str] = []
    if patch == "wide" and _replace(
        repo / "posixpath.py",
        "    sep = _get_sep(a)\n    path = a\n",
        "    sep = _get_sep(a)\n    path = a[:0] + a\n",
    ):
        touched.append("posixpath.py: body of join (os.path.join)")
    if patch == "typical" and _replace(
        repo / "shutil.py",
        "    if not length:\n        length = COPY_BUFSIZE\n",
        "    if not length or length < 0:\n        length = COPY_BUFSIZE\n",
    ):
        touched.append("shutil.py: body of copyfileobj")
    if _replace(
        repo / "shutil.py",
        "def make_archive(base_name, format, root_dir=None, base_dir=None, verbose=0,",
        "def make_archive(base_name, format, root_dir=None, base_dir=None, verbose=0, "
        "*, mode=None,",
    ):
        touched.append("shutil.py: signature of make_archive")
    if _replace(
        repo / "test" / "test_shutil.py",
        "    def test_copyfile_same_file(self):\n",
        "    def test_copyfile_same_file(self):\n        self.assertTrue(shutil.copyfileobj)\n",
    ):
        touched.append("test/test_shutil.py: test_copyfile_same_file")
    candidates = sorted(
        p.relative_to(repo).as_posix()
        for p in repo.glob("*.py")
        if p.name not in ("posixpath.py", "shutil.py")
    )
    rng = random.Random(SEED)  # noqa: S311 - a reproducible choice, not a secret
    rng.shuffle(candidates)
    for rel in candidates:
        if len(touched) >= 3 + extra:
            break
        if _touch_first_function(repo / rel):
            touched.append(f"{rel}: body of its first function")
    if not touched:
        raise SystemExit("could not patch anything in this tree")
    git(repo, "commit", "-q", "-a", "-m", "head: a patch of a few files")
    if not loose:
        git(repo, "repack", "-a", "-d", "-q")
        git(repo, "prune")
    return touched


def test_roots(repo: Path) -> tuple[str, ...]:
    """Every folder named test, tests or idle_test: the tests of the standard library."""
    roots = set()
    for folder, dirs, _files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for d in dirs:
            if d in TEST_DIR_NAMES:
                roots.add((Path(folder) / d).relative_to(repo).as_posix())
    # the outermost ones suffice
    return tuple(sorted(r for r in roots if not any(r.startswith(o + "/") for o in roots)))


def options(repo: Path, tests: tuple[str, ...], *, cache: bool, memo: bool = False) -> Options:
    return Options(repo=repo, base="HEAD^", head="HEAD", tests=tests, cache=cache, memo=memo)


def cache_dir(repo: Path) -> Path:
    return repo / ".git" / "freezedebt"


# --- (1) the floor --------------------------------------------------------------------------


def production_blobs(
    repo: Path, tests: tuple[str, ...], *, with_tests: bool = False
) -> list[tuple[str, str]]:
    """``(path, oid)`` of every production ``.py`` file of HEAD, as the analysis classifies
    (and of every test ``.py`` file too, ``with_tests``)."""
    out = git(repo, "ls-tree", "-r", "-z", "HEAD")
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _kind, oid = meta.split()
        if mode in (b"120000", b"160000"):
            continue
        entries.append((path.decode(), oid.decode()))
    layout = Layout(Settings(tests=tests), [p for p, _ in entries])
    kinds = {PRODUCTION, TEST, FIXTURE} if with_tests else {PRODUCTION}
    return [(p, o) for p, o in entries if layout.kind(p) in kinds and p.endswith(".py")]


def read_blobs(repo: Path, oids: list[str]) -> list[bytes]:
    """Every blob through one ``git cat-file --batch`` (the analysis's own reader)."""
    found = Git(repo).blobs(oids)
    return [found[o] for o in oids]


def floor(repo: Path, tests: tuple[str, ...], source: str, *, with_tests: bool = False) -> int:
    """Read every production file of the head tree and parse each once; return how many."""
    files = production_blobs(repo, tests, with_tests=with_tests)
    if source == "git":
        blobs = read_blobs(repo, [o for _, o in files])
    else:
        blobs = [(repo / p).read_bytes() for p, _ in files]
    parsed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning of invalid escapes in old files
        for data in blobs:
            try:
                ast.parse(data)
                parsed += 1
            except (SyntaxError, ValueError):
                continue
    return parsed


# --- cases, in this process or in a child ---------------------------------------------------


def run_case(case: str, repo: Path, tests: tuple[str, ...], source: str) -> dict[str, Any]:
    if case == "floor":
        return {"parsed": floor(repo, tests, source)}
    if case == "floor+tests":
        return {"parsed": floor(repo, tests, source, with_tests=True)}
    if case == "baseline":
        return {}
    if case == "cold":
        shutil.rmtree(cache_dir(repo), ignore_errors=True)
    # cold keeps its answer; warm recomputes it from the cached facts; repeat reads it back
    return analyze(options(repo, tests, cache=case != "nocache", memo=case in ("cold", "repeat")))


def peak_mib() -> float:
    """The peak resident set of this process's address space since its ``exec``."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10
    except OSError:
        pass
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 2**10


def child(case: str, repo: Path, tests: tuple[str, ...], source: str) -> int:
    started = time.perf_counter()
    result = run_case(case, repo, tests, source)
    seconds = time.perf_counter() - started
    parsed = result.get("stats", {}).get("files_parsed")
    print(json.dumps({"seconds": seconds, "mib": peak_mib(), "parsed": parsed}))
    return 0


def measure_peak(case: str, repo: Path, tests: tuple[str, ...], source: str) -> dict[str, Any]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        case,
        "--repo",
        str(repo),
        "--floor-source",
        source,
        *(a for t in tests for a in ("--test-root", t)),
    ]
    done = subprocess.run(command, capture_output=True, check=True, text=True)  # noqa: S603
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended (git, and the analysis's
    worker processes: their time is work the analysis did too)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _timed(func: Callable[[], object]) -> tuple[float, float]:
    gc.collect()
    wall, cpu = time.perf_counter(), _cpu()
    func()
    return time.perf_counter() - wall, _cpu() - cpu


def _comparable(analysis: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in analysis.items() if k != "stats"}, sort_keys=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of each case")
    parser.add_argument(
        "--extra", type=int, default=3, help="more production modules with a body change"
    )
    parser.add_argument("--nocache", action="store_true", help="also time cache=False runs")
    parser.add_argument(
        "--stdlib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]), help="tree to copy"
    )
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it")
    parser.add_argument("--floor-source", choices=("git", "disk"), default="git")
    parser.add_argument("--loose", action="store_true", help="do not repack the repository")
    parser.add_argument(
        "--patch",
        choices=("typical", "wide"),
        default="typical",
        help="typical: a helper with a few callers; wide: os.path.join, reached by most files",
    )
    parser.add_argument("--profile", choices=("cold", "warm"), help="print a cProfile of one run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--repo", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--test-root", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.repo, tuple(args.test_root), args.floor_source)

    with tempfile.TemporaryDirectory(prefix="freezedebt-bench-") as tmp:
        directory = args.keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        touched = build_repo(args.stdlib, directory, args.extra, loose=args.loose, patch=args.patch)
        repo = directory / "stdlib"
        tests = test_roots(repo)
        files = production_blobs(repo, tests)
        every = production_blobs(repo, tests, with_tests=True)
        size = sum(len(b) for b in read_blobs(repo, [o for _, o in files]))
        tracked = git(repo, "ls-files").count(b"\n")
        print(
            f"repository built in {time.perf_counter() - started:.1f}s from {args.stdlib}: "
            f"{tracked:,} tracked files, {len(files):,} production .py files "
            f"({size / 2**20:.1f} MiB), {len(every) - len(files):,} test .py files; "
            f"test roots: {', '.join(tests)}"
        )
        print("patch: " + "; ".join(touched))

        cases = ["floor", "floor+tests", "cold", "warm", "repeat"] + (
            ["nocache"] if args.nocache else []
        )
        times: dict[str, list[float]] = {c: [] for c in cases}
        cpu: dict[str, list[float]] = {c: [] for c in cases}
        results: dict[str, Any] = {}
        for round_number in range(args.rounds):
            # cold always just before warm (warm reads the cache cold wrote); the floors move
            order = ["cold", "warm", "repeat", *(["nocache"] if args.nocache else [])]
            order.insert(round_number % (len(order) + 1), "floor")
            order.insert((round_number + 1) % (len(order) + 1), "floor+tests")
            for case in order:
                box: dict[str, Any] = {}

                def work(case: str = case, box: dict[str, Any] = box) -> None:
                    box["result"] = run_case(case, repo, tests, args.floor_source)

                wall, used = _timed(work)
                times[case].append(wall)
                cpu[case].append(used)
                results.setdefault(case, box["result"])
        cold, warm = results["cold"], results["warm"]
        stats = cold["stats"]
        print(
            f"analysis (facts v{cold['analyzer']['facts_version']}): class {cold['class']}, "
            f"{len(cold['files'])} files, {len(cold['symbols'])} symbols, cone "
            f"{cold['cone_count']}, problems {[p['code'] for p in cold['problems']]}, "
            f"complete {cold['complete']}"
        )
        print(
            f"cold read {stats['modules_read']:,} of {stats['production_modules']:,} production "
            f"modules and {stats['test_files_read']:,} test files, parsed "
            f"{stats['files_parsed']:,}; warm parsed {warm['stats']['files_parsed']:,} "
            f"(cache entries loaded {warm['stats']['cache_entries_loaded']:,}); "
            f"warm == cold: {'yes' if _comparable(warm) == _comparable(cold) else 'NO'}"
        )
        medians = {c: statistics.median(times[c]) for c in cases}
        cpu_medians = {c: statistics.median(cpu[c]) for c in cases}

        peaks = {"baseline": measure_peak("baseline", repo, tests, args.floor_source)}
        for case in ("floor", "floor+tests", "cold", *(["nocache"] if args.nocache else [])):
            peaks[case] = measure_peak(case, repo, tests, args.floor_source)
        peaks["warm"] = measure_peak("warm", repo, tests, args.floor_source)  # after cold
        peaks["repeat"] = measure_peak("repeat", repo, tests, args.floor_source)

        labels = {
            "floor": f"(1) floor: read ({args.floor_source}) + ast.parse",
            "floor+tests": "(1b) the same, test files included",
            "cold": "(2) cold analysis (empty cache)",
            "nocache": "(3) cold analysis, cache=False",
            "warm": "(4) warm analysis (facts cached)",
            "repeat": "(5) the same patch again (answer kept)",
        }
        targets = {"cold": f"<= {TARGET_COLD}", "nocache": f"<= {TARGET_COLD}"}
        targets["warm"] = targets["repeat"] = f"<= {TARGET_WARM}"
        print(
            f"\nrounds: {args.rounds}; seconds and ratio are medians of wall time in this "
            "process (CPU-time ratio in brackets, children included); peak and fresh s from "
            "one fresh child each"
        )
        print(
            f"{'case':<40} {'seconds':>8} {'ratio':>6} {'(cpu)':>7} {'target':>8} "
            f"{'peak MiB':>9} {'fresh s':>8} {'parsed':>7}"
        )
        for case in cases:
            ratio = medians[case] / medians["floor"]
            cpu_ratio = cpu_medians[case] / cpu_medians["floor"]
            peak = peaks[case]
            parsed = peak.get("parsed")
            print(
                f"{labels[case]:<40} {medians[case]:8.2f} {ratio:6.2f} ({cpu_ratio:5.2f}) "
                f"{targets.get(case, ''):>8} {peak['mib']:9.1f} {peak['seconds']:8.2f} "
                f"{'' if parsed is None else parsed:>7}"
            )
        baseline = "child that only imports (baseline)"
        print(f"{baseline:<40} {'':>33} {peaks['baseline']['mib']:9.1f}")
        print(f"peak target: <= {TARGET_PEAK_MIB:g} MiB")
        for case in cases:
            print(f"  {case:<12} rounds: {', '.join(f'{t:.2f}' for t in times[case])}")

        if args.profile:
            if args.profile == "cold":
                shutil.rmtree(cache_dir(repo), ignore_errors=True)
            profiler = cProfile.Profile()
            profiler.enable()
            analyze(options(repo, tests, cache=True))
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
