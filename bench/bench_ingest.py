#!/usr/bin/env python3
"""Benchmark of the server's run ingest and report on PostgreSQL against a plain floor.

Creates and migrates a throwaway database next to the one DATABASE_URL names (Django's test
database utilities; it is dropped at the end), generates with a fixed seed a base and a head
evidence JSON of 200,000 records each, uploads the base run once, then measures in this
process, alternating, N rounds of:

  (a) the real path: POST of a head run (gzip, as ``freezedebt-ci upload`` sends it) through
      the HTTP endpoint with the Django test client and tasks run in-process, so the upload
      is stored, parsed, its results stored, and the report of a patch whose base and head
      are such runs computed (by the ingest, from the outcomes it has just read) and stored,
      all before the answer;
  (b) the floor: ``json.loads`` of the same (uncompressed) file, the bucket sets, a psycopg
      COPY of the same rows into a plain temporary table, and the report's set differences.

The repositories' ledger freezes FROZEN_TESTS of the suite's tests, whose results each run
stores as rows too. Then, alternating too, N rounds of the first uploads of a new repository,
where every node id is new (the case that once interned every name):

  (c) a fresh repository: the patch is declared, then its base and its head run are POSTed as
      in (a), and the report computed when the second run is stored;
  (d) its floor: ``json.loads`` of both files, both runs' bucket sets, a COPY of both runs'
      rows, and the report's set differences.

Before the rounds it checks that the floor's sets are the stored report's. It prints the
median of each, the ratio a/b (target: at most 3), the tracemalloc peak of (a)
(measured in a separate, untimed round; target at most 300 MiB), the peak resident set size of
the process (the evidence is generated in a child process, so this is the measured work plus
the interpreter, Django and the two documents held for the rounds), and where the time of one
more round of (a) and of (c) goes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/freezedebt \\
        .venv/bin/python bench/bench_ingest.py [--records 200000] [--rounds 5] [--profile]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import cProfile
import gc
import gzip
import json
import os
import pstats
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import evidence_gen  # beside this script

# Django and the apps are imported inside the functions: only once setup_django() has
# configured the settings and created the throwaway database.

ROOT = Path(__file__).resolve().parent.parent
SEED = 2026
TARGET_RATIO = 3.0
TARGET_PEAK_MIB = 300
# Tests the repositories' ledger freezes (of the base's skipped ones): runs store their results.
FROZEN_TESTS = 50
LABEL = "bench"
BASE_SHA = "ba5e" * 10
HEAD_SHA = "4ead" * 10

_BUCKET_NUMBERS = {"passed": 1, "failed": 2, "skipped": 3, "xfail": 4}


# --- the evidence ---------------------------------------------------------------------------


def generate(records: int) -> tuple[bytes, bytes]:
    """The base and head evidence JSON: the head removes, flips and adds some tests."""
    rng = random.Random(SEED)  # noqa: S311 - reproducible test data, not secrets
    universe = evidence_gen.nodeids(rng, records + records // 100, files=2000)
    base, head = evidence_gen.base_and_head(rng, universe, records)
    meta = {"python": "3.11.7", "image_digest": "sha256:" + "ab" * 32}
    documents = []
    for outcomes in (base, head):
        order = list(outcomes)
        rng.shuffle(order)
        document = {
            "format": "freezedebt-evidence/1",
            "exit": 1 if "failed" in outcomes.values() else 0,
            "meta": meta,
            "records": [
                evidence_gen.record(rng, nodeid, outcomes[nodeid], signature=True)
                for nodeid in order
            ],
        }
        documents.append(json.dumps(document).encode())
    return documents[0], documents[1]


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise RuntimeError(message)


# --- Django and the throwaway database ------------------------------------------------------


def setup_django() -> Callable[[], None]:
    """Configure Django, create and migrate the throwaway database; return its teardown."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
        sys.exit(
            "bench_ingest: set DATABASE_URL=postgres://… to a server where a throwaway "
            "database may be created (the benchmark measures the PostgreSQL path)."
        )
    sys.path.insert(0, str(ROOT))
    # The test settings: tasks run in-process, nothing mailed, no throttle state shared.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    setup_test_environment()
    settings.FREEZEDEBT_UPLOADS_PER_MINUTE = 1_000_000
    # A name of its own, so a test suite running meanwhile keeps its database.
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"freezedebt_bench_{os.getpid()}"
    # serialize=False: no test case here restores the database from a snapshot of it.
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)

    def teardown() -> None:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()

    return teardown


class Bench:
    def __init__(self, base: bytes, head: bytes, base_sets: dict[str, set[str]]) -> None:
        from django.test import Client

        from evidence.models import UploadToken
        from evidence.services import repository_create, token_create

        self.repository = repository_create(slug="bench")
        # A ledger freezing some of the suite's tests: each run stores their results too.
        frozen = sorted(base_sets["skipped"])[:FROZEN_TESTS]
        head_nodeids = set().union(*_bucket_sets(json.loads(head)).values())
        self.frozen_in_head = len(head_nodeids.intersection(frozen))
        self.ledger = "".join(_freeze_toml(n, nodeid) for n, nodeid in enumerate(frozen))
        _sync_ledger(self.repository, self.ledger)
        _, token = token_create(repository=self.repository, scope=UploadToken.Scope.EVIDENCE)
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        self.base = base
        self.head = head
        # What the CI client sends for a file over 1 MiB: gzip, level 6.
        self.base_gz = gzip.compress(base, compresslevel=6, mtime=0)
        self.head_gz = gzip.compress(head, compresslevel=6, mtime=0)
        self.rounds = 0
        answer = self._post(BASE_SHA, self.base_gz)
        _check(answer["status"] == "ready", f"base run not ready: {answer}")
        self.base_sets = base_sets
        self.fresh_rounds = 0

    def _post(self, sha: str, body: bytes, client: Any = None) -> dict[str, Any]:
        response = (client or self.client).post(
            f"/api/v1/runs?sha={sha}&label={LABEL}&branch=feature",
            body,
            content_type="application/json",
            HTTP_CONTENT_ENCODING="gzip",
        )
        _check(response.status_code == 202, f"upload refused: {response.content[:500]!r}")
        return response.json()

    def prepare_real(self) -> tuple[str, int]:
        """Untimed: a new head sha and the patch that compares it with the base."""
        from evidence.models import Patch

        self.rounds += 1
        sha = f"{self.rounds:040x}"
        patch = Patch.objects.create(
            repository=self.repository,
            ref=f"PR-{self.rounds}",
            base_sha=BASE_SHA,
            head_sha=sha,
            label=LABEL,
            changed=[{"status": "M", "path": "src/pricing/rounding.py"}],
        )
        return sha, patch.pk

    def real(self, sha: str) -> None:
        answer = self._post(sha, self.head_gz)
        _check(answer["status"] == "ready", f"head run not ready: {answer}")

    def check_real(self, patch_id: int, records: int) -> dict[str, int]:
        """The stored report is ready, counts every head test, and the head run has the results
        of its frozen tests; returns the report's sets' sizes."""
        from evidence.models import Report, Run, TestResult

        report = Report.objects.select_related("patch").get(patch_id=patch_id)
        patch = report.patch
        head = Run.objects.get(repository_id=patch.repository_id, sha=patch.head_sha, label=LABEL)
        tracked = TestResult.objects.filter(run=head).count()
        _check(tracked == self.frozen_in_head, f"{tracked} results of frozen tests stored")
        _check(report.status == "ready", f"report not ready: {report.body}")
        counted = sum(report.body["figures"]["head"].values())
        _check(counted == records, f"the report counts {counted} head tests, not {records}")
        body = report.body
        return {
            **{key: len(body[key]) for key in ("new_skips", "retired_skips", "lost", "new_xfails")},
            "earned": body["figures"]["earned"],
            "borrowed": body["figures"]["borrowed"],
        }

    def prepare_fresh(self) -> tuple[Any, int]:
        """Untimed: a new repository, its token, and the patch of its first two runs."""
        from django.test import Client

        from evidence.models import Patch, UploadToken
        from evidence.services import repository_create, token_create

        self.fresh_rounds += 1
        repository = repository_create(slug=f"fresh-{self.fresh_rounds}")
        _sync_ledger(repository, self.ledger)
        _, token = token_create(repository=repository, scope=UploadToken.Scope.EVIDENCE)
        patch = Patch.objects.create(
            repository=repository,
            ref="PR-1",
            base_sha=BASE_SHA,
            head_sha=HEAD_SHA,
            label=LABEL,
            changed=[{"status": "M", "path": "src/pricing/rounding.py"}],
        )
        return Client(HTTP_AUTHORIZATION=f"Bearer {token}"), patch.pk

    def fresh(self, client: Any) -> None:
        for sha, body in ((BASE_SHA, self.base_gz), (HEAD_SHA, self.head_gz)):
            answer = self._post(sha, body, client)
            _check(answer["status"] == "ready", f"fresh run not ready: {answer}")

    def floor_fresh(self) -> dict[str, int]:
        """Both files parsed, both runs' sets, both runs' rows COPYed, the report's sets."""
        base, base_rows = _read_run(self.base)
        head, head_rows = _read_run(self.head)
        _copy_rows(base_rows + head_rows)
        return _report_sets(base, head)

    def floor(self) -> dict[str, int]:
        head, rows = _read_run(self.head)
        _copy_rows(rows)
        return _report_sets(self.base_sets, head)


def _freeze_toml(number: int, nodeid: str) -> str:
    return (
        f'[[freeze]]\nid = "FRZ-{number:03d}"\ntest = {json.dumps(nodeid)}\n'
        'covers = ["src/**"]\nowner = "team-bench"\nopened = 2026-11-20\n'
        'expires = 2099-12-31\nreason = "quarantined while the bench runs"\n'
    )


def _sync_ledger(repository: Any, raw: str) -> None:
    from ledger.sync import ledger_sync

    ledger_sync(repository=repository, sha="1ed9e7" + "0" * 34, raw=raw, path="freeze_ledger.toml")


def _read_run(data: bytes) -> tuple[dict[str, set[str]], list[tuple[str, int, Any]]]:
    document = json.loads(data)
    sets: dict[str, set[str]] = {"passed": set(), "failed": set(), "skipped": set(), "xfail": set()}
    rows = []
    for record in document["records"]:
        key = "xfail" if record["xfail"] else record["outcome"]
        sets[key].add(record["nodeid"])
        rows.append((record["nodeid"], _BUCKET_NUMBERS[key], record.get("duration")))
    return sets, rows


def _copy_rows(rows: list[tuple[str, int, Any]]) -> None:
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE floor_rows "
            "(nodeid text, bucket smallint, duration double precision)"
        )
        with cursor.copy("COPY floor_rows (nodeid, bucket, duration) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute("DROP TABLE floor_rows")


def _report_sets(base: dict[str, set[str]], head: dict[str, set[str]]) -> dict[str, int]:
    """The report's sets (freezedebt_ci.report), as set differences."""
    return {
        "new_skips": len(head["skipped"] - base["skipped"]),
        "retired_skips": len(base["skipped"] - head["skipped"]),
        "lost": len(base["passed"] - head["passed"]),
        "earned": len(head["passed"] - base["passed"]),
        "borrowed": len(head["passed"] & base["passed"]),
        "new_xfails": len(head["xfail"] - base["xfail"]),
    }


def prepare(records: int) -> tuple[bytes, bytes, dict[str, set[str]]]:
    """Both documents and the floor's bucket sets of the base (the floor reads the base as
    ready-made sets, as the real path reads it from the database)."""
    base, head = generate(records)
    return base, head, _bucket_sets(json.loads(base))


def _bucket_sets(document: dict[str, Any]) -> dict[str, set[str]]:
    sets: dict[str, set[str]] = {"passed": set(), "failed": set(), "skipped": set(), "xfail": set()}
    for record in document["records"]:
        sets["xfail" if record["xfail"] else record["outcome"]].add(record["nodeid"])
    return sets


# --- measurement ----------------------------------------------------------------------------


def _timed(func: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    func()
    return time.perf_counter() - started


def _maxrss_mib() -> float:
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 2**10


def _profile(func: Callable[[], object], order: str, lines: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    func()
    profiler.disable()
    pstats.Stats(profiler).sort_stats(order).print_stats(lines)


def breakdown(bench: Bench, *, fresh: bool = False) -> dict[str, float]:
    """One untimed round of (a), or of (c) when ``fresh``, with the main steps timed (by
    wrapping them)."""
    from evidence import api, parsing, reports, results, tasks

    spent: dict[str, float] = {}

    def timed(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - started

        return wrapper

    # (owner, attribute, label); the steps from "parse" on happen inside "store the run", and
    # each indented one inside the step above it.
    wrapped = [
        (api.uploads, "read_body", "read, inflate and hash the body"),
        (api, "run_receive", "store the run, other bookkeeping"),
        (parsing, "run_parse", "parse and check the evidence"),
        (reports, "reports_ahead", "read the reports' other runs, ledger"),
        (results, "results_store", "store the outcomes and tracked results"),
        (results, "outcomes_store", "  of which: store the packed outcomes"),
        (reports, "compute_report", "the rules (compute_report)"),
        (reports, "store_reports_ahead", "store the reports"),
        (tasks, "report_compute", "compute and store a report (task)"),
    ]
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in wrapped]
    for owner, name, label in wrapped:
        setattr(owner, name, timed(label, getattr(owner, name)))
    try:
        if fresh:
            client, _ = bench.prepare_fresh()
            spent["total"] = _timed(lambda: bench.fresh(client))
        else:
            sha, _ = bench.prepare_real()
            spent["total"] = _timed(lambda: bench.real(sha))
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    # The receive step includes everything its commit triggered (tasks run in-process).
    nested = sum(spent.get(label, 0.0) for _, _, label in wrapped[2:] if label[0] != " ")
    spent["store the run, other bookkeeping"] -= nested
    # In the order of the steps, each followed by those inside it.
    return {label: spent[label] for _, _, label in wrapped if label in spent} | {
        "total": spent["total"]
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--profile", action="store_true", help="print a cProfile of paths (a) and (c)"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    # In a child process: building 400,000 records as dicts would otherwise set the peak RSS.
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:
        base, head, base_sets = pool.submit(prepare, args.records).result()
    teardown = setup_django()
    try:
        print(
            f"generated in {time.perf_counter() - started:.1f}s: base {len(base) / 2**20:.1f} "
            f"MiB, head {len(head) / 2**20:.1f} MiB (JSON)"
        )
        bench = Bench(base, head, base_sets)
        del base, base_sets  # the bench keeps what it needs
        print(f"head as sent (gzip -6): {len(bench.head_gz) / 2**20:.1f} MiB")

        # Untimed: the floor computes the sets the report holds, or it is no floor of it.
        sha, patch_id = bench.prepare_real()
        bench.real(sha)
        real_sets, floor_sets = bench.check_real(patch_id, args.records), bench.floor()
        _check(real_sets == floor_sets, f"floor {floor_sets} != report {real_sets}")

        rss_before = _maxrss_mib()
        times: dict[str, list[float]] = {"a": [], "b": []}
        for round_number in range(args.rounds):
            order = ("a", "b") if round_number % 2 == 0 else ("b", "a")
            for which in order:
                if which == "a":
                    sha, patch_id = bench.prepare_real()
                    times["a"].append(_timed(lambda sha=sha: bench.real(sha)))
                    bench.check_real(patch_id, args.records)
                else:
                    times["b"].append(_timed(bench.floor))
        median_a, median_b = statistics.median(times["a"]), statistics.median(times["b"])
        ratio = median_a / median_b

        # A fresh repository: untimed first, to check the floor's sets are its report's.
        client, patch_id = bench.prepare_fresh()
        bench.fresh(client)
        fresh_sets, fresh_floor = bench.check_real(patch_id, args.records), bench.floor_fresh()
        _check(fresh_sets == fresh_floor, f"floor {fresh_floor} != report {fresh_sets}")
        for round_number in range(args.rounds):
            order = ("c", "d") if round_number % 2 == 0 else ("d", "c")
            for which in order:
                if which == "c":
                    client, patch_id = bench.prepare_fresh()
                    times.setdefault("c", []).append(_timed(lambda c=client: bench.fresh(c)))
                    bench.check_real(patch_id, args.records)
                else:
                    times.setdefault("d", []).append(_timed(bench.floor_fresh))
        median_c, median_d = statistics.median(times["c"]), statistics.median(times["d"])
        fresh_ratio = median_c / median_d

        sha, patch_id = bench.prepare_real()
        peak_a = evidence_gen.traced_peak(lambda: bench.real(sha))
        bench.check_real(patch_id, args.records)
        peak_b = evidence_gen.traced_peak(bench.floor)
        maxrss_mib = _maxrss_mib()

        def series(values: list[float]) -> str:
            return ", ".join(f"{value * 1000:.0f}" for value in values)

        print(f"records per run      : {args.records:,}   rounds: {args.rounds}")
        print(f"(a) upload+report    : {median_a * 1000:8.1f} ms   [{series(times['a'])}]")
        print(f"(b) floor            : {median_b * 1000:8.1f} ms   [{series(times['b'])}]")
        print(f"ratio a/b            : {ratio:8.2f}   (target <= {TARGET_RATIO:g})")
        print(f"(c) fresh repository : {median_c * 1000:8.1f} ms   [{series(times['c'])}]")
        print(f"(d) its floor        : {median_d * 1000:8.1f} ms   [{series(times['d'])}]")
        print(f"ratio c/d            : {fresh_ratio:8.2f}   (target <= {TARGET_RATIO:g})")
        print(f"tracemalloc peak (a) : {peak_a / 2**20:8.1f} MiB (target <= {TARGET_PEAK_MIB})")
        print(f"tracemalloc peak (b) : {peak_b / 2**20:8.1f} MiB")
        print(f"ru_maxrss before (a) : {rss_before:8.1f} MiB (Django, both documents, base run)")
        print(f"ru_maxrss (process)  : {maxrss_mib:8.1f} MiB")
        print("one more round of (a), by step:")
        for label, seconds in breakdown(bench).items():
            print(f"  {label:40s} {seconds * 1000:8.1f} ms")
        print("one more round of (c), both runs, by step:")
        for label, seconds in breakdown(bench, fresh=True).items():
            print(f"  {label:40s} {seconds * 1000:8.1f} ms")

        if args.profile:
            sha, _ = bench.prepare_real()
            _profile(lambda: bench.real(sha), "cumulative", 40)
            client, _ = bench.prepare_fresh()
            _profile(lambda: bench.fresh(client), "tottime", 25)
    finally:
        teardown()
    within = ratio <= TARGET_RATIO and fresh_ratio <= TARGET_RATIO
    return 0 if within and peak_a <= TARGET_PEAK_MIB * 2**20 else 1


if __name__ == "__main__":
    sys.exit(main())
