"""The patch report (SPEC 5.1-5.3 and 5.8): one pure function from evidence, ledger, changed
paths, policy and date to the report JSON. The server and ``freezedebt-ci delta`` both call
:func:`compute_report`, so their reports are identical for identical input.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

from .analysis.judge import analysis_problems, analysis_section
from .changes import Change, touched_paths
from .hygiene import freeze_problems
from .ledger import Freeze
from .outcomes import Buckets, Evidence
from .paths import matches_any
from .policy import BLOCK, OFF, WARN, Policy

FORMAT = "freezedebt-report/1"
DRIFT_KEYS = ("image_digest", "lockfile_sha256", "python")
READY, PENDING = "ready", "pending"
PASS = "pass"  # noqa: S105 - the verdict, not a password


def file_of(nodeid: str) -> str:
    """The file part of a node id (before the first ``::``)."""
    return nodeid.partition("::")[0]


def _problem(code: str, severity: str, message: str, items: Iterable[str]) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, "items": sorted(set(items))}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _files(nodeids: Iterable[str]) -> Counter[str]:
    """The number of node ids per file (``file_of`` of each, without a Python call apiece)."""
    return Counter(map(itemgetter(0), map(str.partition, nodeids, repeat("::"))))


def _per_file(
    base: Buckets,
    head: Buckets,
    new_skips: set[str],
    retired: set[str],
    lost: set[str],
    earned: frozenset[str],
) -> list[dict[str, Any]]:
    # head.passed is base.passed without the lost tests and with the earned ones (both sets
    # are usually small): the head's counts follow from the base's without a second count.
    base_passed = _files(base.passed)
    lost_by_file = _files(lost)
    earned_by_file = _files(earned)
    head_passed = Counter(base_passed)
    head_passed.subtract(lost_by_file)
    head_passed.update(earned_by_file)
    new_by_file = _files(new_skips)
    retired_by_file = _files(retired)
    files = set(base_passed) | set(earned_by_file)
    for buckets in (base, head):
        for group in (buckets.failed, buckets.skipped, buckets.xfail):
            files.update(map(file_of, group))
    return [
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
    ]


def _surface_hits(
    active: Sequence[Freeze], touched: set[str], head: Buckets | None
) -> list[dict[str, Any]]:
    hits = []
    for freeze in active:
        if not freeze.covers:
            continue
        paths = sorted(p for p in touched if matches_any(freeze.covers, p))
        if not paths:
            continue
        compensated = bool(
            head is not None
            and freeze.compensating_check
            and freeze.compensating_check in head.passed
        )
        hits.append(
            {"freeze": freeze.id, "test": freeze.test, "paths": paths, "compensated": compensated}
        )
    return sorted(hits, key=lambda hit: hit["freeze"])


def _surface_problems(
    hits: list[dict[str, Any]], freezes: dict[str, Freeze], policy: Policy
) -> list[dict[str, Any]]:
    severity = policy.severity("frozen-surface")
    if severity == OFF:
        return []
    open_paths: dict[str, list[str]] = {}
    eased: list[str] = []
    eased_paths: list[str] = []
    for hit in hits:
        freeze = freezes[hit["freeze"]]
        if hit["compensated"] or freeze.allowed_in_merge:
            why = (
                f"compensating check {freeze.compensating_check} passed"
                if hit["compensated"]
                else "the freeze is allowed in merges"
            )
            eased.append(f"{', '.join(hit['paths'])} touch frozen {freeze.id} ({why})")
            eased_paths += hit["paths"]
        else:
            for path in hit["paths"]:
                open_paths.setdefault(path, []).append(freeze.id)
    problems = []
    if open_paths:
        message = "; ".join(
            f"{path} is guarded only by frozen {', '.join(ids)}"
            for path, ids in sorted(open_paths.items())
        )
        problems.append(_problem("frozen-surface", severity, message, open_paths))
    if eased:
        problems.append(_problem("frozen-surface", WARN, "; ".join(eased), eased_paths))
    return problems


#: Why pytest exits with a status other than 0 when no test failed (pytest's ``ExitCode``).
EXIT_REASONS = {
    1: "yet no test failed: something outside the tests failed, such as a plugin's hook",
    2: "no test failed: the run was interrupted, by a collection error or by hand",
    3: "no test failed: an internal error of pytest or of a plugin or conftest hook",
    4: "no test failed: pytest was called wrongly and ran no test (a usage error)",
    5: "no tests were collected",
}


def exit_reason(status: int, failed: Iterable[str]) -> str:
    """Why a run exited with ``status``: its failed tests and the files that could not be
    collected (pytest's records of a module that failed to import), or, when nothing failed,
    what the status means, so the verdict never rests on an unexplained "0 failed tests"."""
    tests = collection = 0
    for nodeid in failed:
        if "::" not in nodeid and nodeid.endswith(".py"):
            collection += 1
        else:
            tests += 1
    parts = []
    if tests:
        parts.append(_plural(tests, "failed test"))
    if collection:
        parts.append(_plural(collection, "file that could not be collected"))
    if parts:
        return ", ".join(parts)
    return EXIT_REASONS.get(
        status, "no test failed: the test command itself failed, its log says why"
    )


#: Who a problem is for: the patch's own doing, or inherited from the ledger (its owners act).
PATCH, LEDGER = "patch", "ledger"
_INHERITED = frozenset(("expired-freeze", "invalid-freeze"))
#: What to do about each problem, in a line.
ACTIONS = {
    "head-failed": "make the head run pass: fix the failing tests, or what failed around them",
    "unaccounted-skip": "run the skipped tests again, or freeze each in the ledger (its own "
    "reviewed commit) with an owner, a reason and an expiry",
    "lost-tests": "make the lost tests pass on the head commit again, or restore the removed ones",
    "frozen-surface": "add a compensating check that passes on the head run, or fix the frozen "
    "test and retire its freeze before changing what it guards",
    "expired-freeze": "the owner fixes the test and retires the freeze, or renews it with a new "
    "reason, in a reviewed commit of the ledger",
    "invalid-freeze": "the owner corrects the freeze in the ledger: every required field, an "
    "environmental reason, and an expiry within the policy",
    "ledger-in-patch": "move the ledger change into its own reviewed commit",
    "environment-drift": "run base and head on the same image, lock file and Python",
    "fixture-touched": "have the fixture change signed off by whoever owns those fixtures",
    "base-missing": "upload the base commit's run (freezedebt-ci upload --sha BASE_SHA)",
}


def _attribute(problem: dict[str, Any], freezes: dict[str, Freeze]) -> dict[str, Any]:
    """``problem`` with who must act: its ``origin`` (the patch, or the ledger it inherited),
    the ``owners`` of the freezes it names, and a one-line ``action``."""
    code = problem["code"]
    named = [freezes[item] for item in problem["items"] if item in freezes]
    if code == "frozen-surface":
        named = [f for f in freezes.values() if f.covers and f.id in problem["message"]]
    owners = sorted({f.owner or "no owner" for f in named})
    return {
        **problem,
        "origin": LEDGER if code in _INHERITED else PATCH,
        "owners": owners,
        "action": ACTIONS.get(code, ""),
    }


def _owned(freeze: Freeze, *, expired: bool = False) -> str:
    when = f", expired {freeze.expires.isoformat()}" if expired and freeze.expires else ""
    return f"owner {freeze.owner or 'none named'}{when}"


def _lost_message(
    lost: set[str], head: Buckets, unaccounted: set[str], frozen_tests: set[str]
) -> str:
    """The lost tests by what became of them, so a lost test that is also a new skip reads as
    the same test as the skip problem, not as another problem."""
    fates: Counter[str] = Counter()
    for nodeid in lost:
        if nodeid in head.failed:
            fates["now failing"] += 1
        elif nodeid in unaccounted:
            fates["skipped with no freeze (the unaccounted-skip problem)"] += 1
        elif nodeid in frozen_tests and nodeid in head.skipped:
            fates["skipped by an active freeze"] += 1
        elif nodeid in head.skipped:
            fates["skipped"] += 1
        elif nodeid in head.xfail:
            fates["xfailed"] += 1
        else:
            fates["gone from the head run"] += 1
    parts = ", ".join(f"{count} {fate}" for fate, count in sorted(fates.items()))
    return f"{_plural(len(lost), 'test')} passed on base and no longer pass: {parts}"


def _drift(base: Evidence, head: Evidence) -> list[str]:
    drift = []
    for key in DRIFT_KEYS:
        a, b = base.meta.get(key), head.meta.get(key)
        if a is not None and b is not None and a != b:
            drift.append(f"{key}: {a} -> {b}")
    return drift


def compute_report(
    *,
    base: Evidence | None,
    head: Evidence | None,
    freezes: Sequence[Freeze],
    changes: Sequence[Change],
    today: dt.date,
    policy: Policy | None = None,
    ledger_changed: bool = False,
    analysis: Mapping[str, Any] | None = None,
    governance: Mapping[str, str | None] | None = None,
    own_analysis: Mapping[str, Any] | None = None,
    own_analysis_error: str | None = None,
    own_analysis_pending: bool = False,
    pending_reason: str | None = None,
) -> dict[str, Any]:
    """The report of a patch. With ``base`` or ``head`` missing the report is ``pending``:
    it lists what the ledger and the paths already show, and never passes.

    ``analysis`` is the patch's ``freezedebt-analysis/1`` (None: none was sent); its findings
    are judged by :mod:`freezedebt_ci.analysis.judge` against ``freezes``. ``governance`` maps
    ``ledger``/``fixture_lock``/``oracle_map`` to the sha256 of the version held for the base:
    an analysis that used another is an ``analysis-mismatch``. ``own_analysis``: the judge's
    own analysis of the patch, judged instead of the upload (which must agree with it);
    ``own_analysis_error`` says it failed (a problem); ``own_analysis_pending`` that it is
    still running: the report stays ``pending``, as for a missing run. ``pending_reason``
    (the server's account of the runs it has) is then kept in the report as it is.
    """
    policy = policy or Policy()
    problems: list[dict[str, Any]] = analysis_problems(
        analysis,
        freezes=freezes,
        today=today,
        policy=policy,
        governance=governance,
        own=own_analysis,
        own_error=own_analysis_error,
    )

    def add(code: str, message: str, items: Iterable[str]) -> None:
        severity = policy.severity(code)
        if severity != OFF:
            problems.append(_problem(code, severity, message, items))

    by_id = {freeze.id: freeze for freeze in freezes}
    active = [f for f in freezes if f.is_active(today)]
    expired = sorted(f.id for f in freezes if f.is_expired(today))
    touched = touched_paths(changes)

    if expired:
        add(
            "expired-freeze",
            f"the ledger holds {_plural(len(expired), 'expired freeze')}: "
            + ", ".join(f"{key} ({_owned(by_id[key], expired=True)})" for key in expired),
            expired,
        )
    invalid = {f.id: freeze_problems(f, policy) for f in freezes}
    invalid = {key: value for key, value in invalid.items() if value}
    if invalid:
        add(
            "invalid-freeze",
            "; ".join(
                f"{key} ({_owned(by_id[key])}): {', '.join(why)}"
                for key, why in sorted(invalid.items())
            ),
            invalid,
        )
    if ledger_changed or policy.ledger_path in touched:
        add(
            "ledger-in-patch",
            f"the patch changes the ledger ({policy.ledger_path}); freeze "
            "records belong in their own reviewed commit",
            [policy.ledger_path],
        )
    fixtures = sorted(p for p in touched if matches_any(policy.fixture_paths, p))
    if fixtures:
        add(
            "fixture-touched",
            f"the patch changes {_plural(len(fixtures), 'fixture path')}: needs sign-off",
            fixtures,
        )

    head_buckets = head.buckets() if head is not None else None
    hits = _surface_hits(active, touched, head_buckets)

    report: dict[str, Any] = {
        "format": FORMAT,
        "status": READY,
        "verdict": PASS,
        "today": today.isoformat(),
        "figures": {},
        "new_skips": [],
        "retired_skips": [],
        "lost": [],
        "new_xfails": [],
        "frozen_surface_hits": hits,
        "expired_freezes": expired,
        "per_file": [],
        "problems": problems,
        "analysis": analysis_section(
            analysis,
            freezes=freezes,
            today=today,
            governance=governance,
            own=own_analysis,
            own_pending=own_analysis_pending,
        ),
        "pending_reason": None,
    }

    if base is None or head is None or head_buckets is None:
        if base is None:
            add("base-missing", "no run of the base commit yet: the report stays pending", [])
        report["status"] = report["verdict"] = PENDING
        report["pending_reason"] = pending_reason or (
            "no run of the base commit yet" if base is None else "no run of the head commit yet"
        )
        report["figures"] = {
            "base": base.counts() if base is not None else None,
            "head": head.counts() if head is not None else None,
            "net_executed_delta": None,
            "earned": None,
            "borrowed": None,
        }
        problems.sort(key=lambda p: (p["code"], p["severity"], p["message"]))
        problems[:] = [_attribute(problem, by_id) for problem in problems]
        return report

    base_buckets = base.buckets()
    new_skips = set(head_buckets.skipped - base_buckets.skipped)
    retired = set(base_buckets.skipped - head_buckets.skipped)
    lost = set(base_buckets.passed - head_buckets.passed)
    earned = head_buckets.passed - base_buckets.passed
    new_xfails = head_buckets.xfail - base_buckets.xfail

    report["figures"] = {
        "base": base_buckets.counts(),
        "head": head_buckets.counts(),
        "net_executed_delta": len(head_buckets.passed) - len(base_buckets.passed),
        "earned": len(earned),
        "borrowed": len(head_buckets.passed) - len(earned),
    }
    report["new_skips"] = sorted(new_skips)
    report["retired_skips"] = sorted(retired)
    report["lost"] = sorted(lost)
    report["new_xfails"] = sorted(new_xfails)
    report["per_file"] = _per_file(base_buckets, head_buckets, new_skips, retired, lost, earned)

    if head.exit != 0:
        add(
            "head-failed",
            f"the head run exited with status {head.exit} "
            f"({exit_reason(head.exit, head_buckets.failed)})",
            head_buckets.failed,
        )
    frozen_tests = {f.test for f in active if f.test}
    unaccounted = new_skips - frozen_tests
    if unaccounted:
        add(
            "unaccounted-skip",
            f"{_plural(len(unaccounted), 'new skip')} that no active freeze names",
            unaccounted,
        )
    if lost:
        add("lost-tests", _lost_message(lost, head_buckets, unaccounted, frozen_tests), lost)
    problems.extend(_surface_problems(hits, by_id, policy))
    drift = _drift(base, head)
    if drift:
        add(
            "environment-drift",
            "base and head ran in different environments: " + "; ".join(drift),
            [item.split(":")[0] for item in drift],
        )

    problems.sort(key=lambda p: (p["code"], p["severity"], p["message"]))
    problems[:] = [_attribute(problem, by_id) for problem in problems]
    report["verdict"] = BLOCK if any(p["severity"] == BLOCK for p in problems) else PASS
    if own_analysis_pending:
        # Graded once the judge's own analysis is in; never a pass before.
        report["status"] = report["verdict"] = PENDING
        report["pending_reason"] = pending_reason or "the server's own analysis is still running"
    return report


def report_json(report: dict[str, Any]) -> str:
    """The report as text: stable key order and indentation, so equal reports are equal bytes."""
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
