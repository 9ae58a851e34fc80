"""An analysis judged for a report (SPEC 5.7 and 5.8): its findings as report problems under
the repository's policy, and the report's ``analysis`` section.

The findings are read again from the analysis's data (symbols, fixtures, oracle), not only from
its ``problems``: those were written under the analyzing side's policy, which may have turned a
code off. ``frozen-symbol`` is judged against the freezes given here (the server's ledger), never
against the ledger the analysis read. Pure and order-independent: the server stores the analysis
as JSON whose key order may change, and its report must equal the offline one byte for byte.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..ledger import Freeze
from ..policy import OFF, Policy

#: The governance files an analysis records (``governance`` of ``freezedebt-analysis/1``).
GOVERNANCE_KINDS = ("ledger", "fixture_lock", "oracle_map")
#: Report problem codes that come from an analysis.
ANALYSIS_CODES = (
    "untested-caller",
    "contract-change",
    "fixture-lock",
    "co-modified",
    "unlabeled-path",
    "frozen-symbol",
    "candidate-only",
)
MISSING, COMPLETE, INCOMPLETE, PENDING = "missing", "complete", "incomplete", "pending"
SYMBOLS_CAP = 50  # changed symbols in the report's section
LIST_CAP = 20  # callers, tests, paths per entry
_CLASSES = ("unchanged", "cosmetic", "local", "contract", "cross")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return sorted({item for item in _list(value) if isinstance(item, str)})


def _count(value: Any, floor: int) -> int:
    return value if type(value) is int and value >= floor else floor


def _capped(items: Sequence[str], cap: int = LIST_CAP) -> list[str]:
    return list(items[:cap])


def symbol_key(symbol: Mapping[str, Any]) -> str:
    """A changed symbol as ``module:qualname``, as callers and cone entries are written."""
    return f"{symbol.get('module', '')}:{symbol.get('name', '')}"


def names_symbol(blocks_symbols: Iterable[str], module: str, name: str) -> bool:
    """Whether a freeze's ``blocks_symbols`` names a symbol: by ``module:qualname``,
    ``module.qualname``, the qualified name, or its last part."""
    names = {name, f"{module}:{name}", f"{module}.{name}", name.rsplit(".", 1)[-1]}
    return any(entry in names for entry in blocks_symbols)


def test_freezes(active: Iterable[Freeze]) -> dict[str, list[str]]:
    """Whole tests under an active freeze, to the freezes' ids. A freeze of one parameter case
    (``test_x[case-1]``) leaves the test's other cases running: it freezes no whole test."""
    by_test: dict[str, list[str]] = {}
    for freeze in active:
        if freeze.test and "[" not in freeze.test:
            by_test.setdefault(freeze.test, []).append(freeze.id)
    return by_test


def frozen_by(symbol: Mapping[str, Any], active: Sequence[Freeze]) -> list[str]:
    """The active freezes that block a changed symbol: those naming it in ``blocks_symbols``,
    and, when every test that names it is frozen, the freezes of those tests."""
    module, name = str(symbol.get("module", "")), str(symbol.get("name", ""))
    found = {f.id for f in active if names_symbol(f.blocks_symbols, module, name)}
    tests = _strings(symbol.get("tests"))
    # A capped list cannot show that *every* test is frozen.
    whole = _count(symbol.get("tests_count"), len(tests)) == len(tests)
    by_test = test_freezes(active)
    if tests and whole and all(test in by_test for test in tests):
        found.update(i for test in tests for i in by_test[test])
    return sorted(found)


def governance_mismatches(
    analysis: Mapping[str, Any], expected: Mapping[str, str | None]
) -> list[str]:
    """The governance files whose sha256 in the analysis is not the one expected (the server's
    version for the base), as ``kind: analysis <sha> != expected <sha>``."""
    used = _dict(analysis.get("governance"))
    out = []
    for kind in GOVERNANCE_KINDS:
        if kind not in expected:
            continue
        want = expected[kind]
        got = _dict(used.get(kind)).get("sha256")
        if got != want:
            out.append(f"{kind}: analysis {_short(got)} != expected {_short(want)}")
    return out


def _short(sha: Any) -> str:
    return sha[:12] if isinstance(sha, str) else "none"


def _is_contract(symbol: Mapping[str, Any]) -> bool:
    """The analysis says so (``contract``); an analysis without that key is read by the rule
    it stands for: a public symbol removed, or a signature or shape changed."""
    if isinstance(symbol.get("contract"), bool):
        return bool(symbol["contract"])
    return (
        symbol.get("signature_changed") is True
        or symbol.get("shape_changed") is True
        or (symbol.get("change") == "removed" and symbol.get("public") is True)
    )


def _contract_items(analysis: Mapping[str, Any], symbols: list[dict[str, Any]]) -> set[str]:
    items = {symbol_key(s) for s in symbols if _is_contract(s)}
    for problem in _list(analysis.get("problems")):
        if _dict(problem).get("code") == "contract-change":
            items.update(_strings(problem.get("items")))
    return items


def _problem(code: str, severity: str, message: str, items: Iterable[str]) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, "items": sorted(set(items))}


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {plural or word + 's'}"


def analysis_problems(
    analysis: Mapping[str, Any] | None,
    *,
    freezes: Sequence[Freeze],
    today: dt.date,
    policy: Policy,
    governance: Mapping[str, str | None] | None = None,
    own: Mapping[str, Any] | None = None,
    own_error: str | None = None,
) -> list[dict[str, Any]]:
    """The report problems of an analysis under ``policy`` (codes of SPEC 5.7).

    ``own``: the judge's own analysis of the patch (made by a process the patch cannot edit).
    When given, it is the one judged, and an uploaded ``analysis`` that disagrees with it is
    an ``analysis-mismatch``; so is ``own_error``, the judge's own analysis having failed
    (fail closed: the patch is then graded by no process it cannot edit).

    ``freezes`` are the ledger the report judges by; ``governance`` maps a governance file's
    kind (``ledger``, ``fixture_lock``, ``oracle_map``) to the sha256 the judge holds for the
    base: an analysis that used another version is an ``analysis-mismatch``. Kinds not given
    are not checked. Without an analysis there is a problem only under ``require_analysis``.
    """
    out: list[dict[str, Any]] = []

    def add(code: str, message: str, items: Iterable[str]) -> None:
        severity = policy.severity(code)
        if severity != OFF:
            out.append(_problem(code, severity, message, items))

    if own_error is not None:
        add(
            "analysis-mismatch",
            f"the server could not analyze the patch itself: {own_error}",
            ["server-analysis"],
        )
    if own is not None:
        if analysis is not None:
            differing = analysis_disagreement(own, analysis)
            if differing:
                add(
                    "analysis-mismatch",
                    "the uploaded analysis disagrees with the server's own analysis of the "
                    "patch on " + ", ".join(differing),
                    differing,
                )
        analysis = own
    if analysis is None:
        if policy.require_analysis:
            add("analysis-missing", "the patch was declared without an analysis", [])
        return out
    if analysis.get("complete") is not True and policy.require_analysis:
        reason = analysis.get("incomplete_reason")
        add(
            "analysis-missing",
            "the analysis is incomplete" + (f": {reason}" if isinstance(reason, str) else ""),
            [],
        )
    symbols = [_dict(s) for s in _list(analysis.get("symbols"))]
    active = [f for f in freezes if f.is_active(today)]

    untested = {c for s in symbols for c in _strings(s.get("untested_callers"))}
    if untested:
        add(
            "untested-caller",
            f"{_n(len(untested), 'production caller')} of changed symbols "
            f"{'is' if len(untested) == 1 else 'are'} named by no test",
            untested,
        )
    contract = _contract_items(analysis, symbols)
    if contract:
        cone = _count(analysis.get("cone_count"), len(_list(analysis.get("cone"))))
        add(
            "contract-change",
            f"public interface changed ({_n(len(contract), 'symbol')}); impact cone: "
            f"{_n(cone, 'public entry', 'public entries')}",
            contract,
        )
    fixtures = _dict(analysis.get("fixtures"))
    lock_items: set[str] = set()
    parts = []
    for key, noun, what in (
        ("missing", "locked fixture", "missing"),
        ("mutated", "locked fixture", "mutated"),
        ("unregistered", "fixture file", "not in the lock"),
    ):
        paths = _strings(fixtures.get(key))
        if paths:
            lock_items.update(paths)
            parts.append(f"{_n(len(paths), noun)} {what}")
    if fixtures.get("changed_by_patch") is True:
        parts.append("the patch changes the fixture lock itself")
        lock = fixtures.get("lock")
        lock_items.add(lock if isinstance(lock, str) else "fixture lock")
    if lock_items:
        add("fixture-lock", "; ".join(parts), lock_items)
    oracle = _dict(analysis.get("oracle"))
    rows = [_dict(row) for row in _list(oracle.get("co_modified"))]
    co_items = {p for row in rows for key in ("prod", "oracle") for p in _strings(row.get(key))}
    parts = []
    if rows:
        features = sorted({str(row.get("feature", "")) for row in rows})
        parts.append(
            f"production code changed together with its own oracle ({', '.join(features)})"
        )
    if oracle.get("changed_by_patch") is True:
        parts.append("the patch changes the oracle map that judges it")
        map_path = oracle.get("map")
        co_items.add(map_path if isinstance(map_path, str) else "oracle map")
    if co_items:
        add("co-modified", "; ".join(parts), co_items)
    unlabeled = _strings(oracle.get("unlabeled"))
    if unlabeled:
        add(
            "unlabeled-path",
            f"{_n(len(unlabeled), 'changed path')} "
            f"{'belongs' if len(unlabeled) == 1 else 'belong'} to no feature of the oracle map",
            unlabeled,
        )
    frozen = {symbol_key(s): ids for s in symbols if (ids := frozen_by(s, active))}
    if frozen:
        add(
            "frozen-symbol",
            "; ".join(
                f"{key} is blocked by {', '.join(ids)}" for key, ids in sorted(frozen.items())
            ),
            frozen,
        )
    candidates = set(_strings(analysis.get("candidates")))
    only = {
        symbol_key(s)
        for s in symbols
        if s.get("candidate_only") is True
        or (
            (tests := _strings(s.get("tests")))
            and all(test.partition("::")[0] in candidates for test in tests)
        )
    }
    if only:
        add(
            "candidate-only",
            f"{_n(len(only), 'changed symbol')} "
            f"{'is' if len(only) == 1 else 'are'} named only by tests this patch added or edited",
            only,
        )
    if governance:
        mismatched = governance_mismatches(analysis, governance)
        if mismatched:
            add(
                "analysis-mismatch",
                "the analysis used governance files other than the default branch's: "
                + "; ".join(mismatched),
                [item.partition(":")[0] for item in mismatched],
            )
    return out


def _co_modified(oracle: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {
            "feature": str(row.get("feature", "")),
            "prod": _capped(_strings(row.get("prod"))),
            "oracle": _capped(_strings(row.get("oracle"))),
        }
        for row in map(_dict, _list(oracle.get("co_modified")))
    ]
    rows.sort(key=lambda row: (row["feature"], row["prod"], row["oracle"]))
    return rows[:LIST_CAP]


def analysis_section(
    analysis: Mapping[str, Any] | None,
    *,
    freezes: Sequence[Freeze],
    today: dt.date,
    governance: Mapping[str, str | None] | None = None,
    own: Mapping[str, Any] | None = None,
    own_pending: bool = False,
) -> dict[str, Any]:
    """The report's ``analysis`` section: class, counts, and the changed symbols with their
    callers, untested callers and tests (frozen ones judged against ``freezes``), capped, each
    list with its total. ``source`` says whose analysis it is: ``server`` (``own``, the
    judge's) or ``upload``."""
    source = "upload"
    if own_pending:
        return {
            "status": PENDING,
            "source": "server",
            "message": "the server's own analysis of the patch is not finished yet",
        }
    if own is not None:
        analysis, source = own, "server"
    if analysis is None:
        return {"status": MISSING, "message": "no analysis was sent with this patch"}
    files = [_dict(f) for f in _list(analysis.get("files"))]
    class_of = {str(f.get("path")): f.get("class") for f in files}
    candidates = set(_strings(analysis.get("candidates")))
    active = [f for f in freezes if f.is_active(today)]
    symbols = sorted(
        (_dict(s) for s in _list(analysis.get("symbols"))),
        key=lambda s: (symbol_key(s), str(s.get("path", ""))),
    )
    entries = []
    for symbol in symbols[:SYMBOLS_CAP]:
        callers = _strings(symbol.get("callers"))
        untested = _strings(symbol.get("untested_callers"))
        tests = _strings(symbol.get("tests"))
        entries.append(
            {
                "symbol": symbol_key(symbol),
                "path": str(symbol.get("path", "")),
                "kind": symbol.get("kind"),
                "change": symbol.get("change"),
                "class": class_of.get(str(symbol.get("path"))),
                "public": symbol.get("public") is True,
                "signature_changed": symbol.get("signature_changed") is True,
                "callers": _capped(callers),
                "callers_count": _count(symbol.get("callers_count"), len(callers)),
                "untested_callers": _capped(untested),
                "untested_count": len(untested),
                "tests": _capped(tests),
                "tests_count": _count(symbol.get("tests_count"), len(tests)),
                "candidate_tests": _capped(
                    [t for t in tests if t.partition("::")[0] in candidates]
                ),
                "frozen_by": frozen_by(symbol, active),
            }
        )
    fixtures = _dict(analysis.get("fixtures"))
    oracle = _dict(analysis.get("oracle"))
    cone = _strings(analysis.get("cone"))
    used = _dict(analysis.get("governance"))
    governance_rows = []
    for kind in GOVERNANCE_KINDS:
        entry = _dict(used.get(kind))
        if not entry and not (governance and kind in governance):
            continue
        row: dict[str, Any] = {
            "kind": kind,
            "path": entry.get("path") if isinstance(entry.get("path"), str) else None,
            "sha256": entry.get("sha256") if isinstance(entry.get("sha256"), str) else None,
        }
        if governance and kind in governance:
            row["expected"] = governance[kind]
            row["matches"] = row["sha256"] == governance[kind]
        governance_rows.append(row)
    all_callers = {c for s in symbols for c in _strings(s.get("callers"))}
    all_untested = {c for s in symbols for c in _strings(s.get("untested_callers"))}
    all_tests = {t for s in symbols for t in _strings(s.get("tests"))}
    klass = analysis.get("class")
    complete = analysis.get("complete") is True
    section: dict[str, Any] = {
        "status": COMPLETE if complete else INCOMPLETE,
        "source": source,
        "class": klass if klass in _CLASSES else None,
        "base": analysis.get("base") if isinstance(analysis.get("base"), str) else None,
        "head": analysis.get("head") if isinstance(analysis.get("head"), str) else None,
        "counts": {
            "files": len(files),
            "symbols": len(symbols),
            "callers": len(all_callers),
            "untested_callers": len(all_untested),
            "tests": len(all_tests),
            "cone": _count(analysis.get("cone_count"), len(cone)),
        },
        "symbols": entries,
        "symbols_total": len(symbols),
        "cone": _capped(cone, SYMBOLS_CAP),
        "fixtures": {
            "lock": fixtures.get("lock") if isinstance(fixtures.get("lock"), str) else None,
            **{
                key: _capped(_strings(fixtures.get(key)))
                for key in ("missing", "mutated", "unregistered")
            },
        },
        "co_modified": _co_modified(oracle),
        "unlabeled": _capped(_strings(oracle.get("unlabeled"))),
        "governance": governance_rows,
    }
    if not complete:
        reason = analysis.get("incomplete_reason")
        section["message"] = reason if isinstance(reason, str) else "the analysis is incomplete"
    return section


def _findings(analysis: Mapping[str, Any]) -> dict[str, Any]:
    """What two analyses of the same patch must agree on: the files' classes, each changed
    symbol's callers and tests, the fixture and oracle findings, the governance files used.
    Timings, caches and statistics may differ."""
    fixtures = _dict(analysis.get("fixtures"))
    oracle = _dict(analysis.get("oracle"))
    used = _dict(analysis.get("governance"))
    return {
        "class": analysis.get("class"),
        "complete": analysis.get("complete") is True,
        "files": sorted(
            (str(f.get("path")), str(f.get("kind")), str(f.get("class")))
            for f in map(_dict, _list(analysis.get("files")))
        ),
        "symbols": sorted(
            (
                symbol_key(s),
                str(s.get("change")),
                s.get("signature_changed") is True,
                tuple(_strings(s.get("callers"))),
                tuple(_strings(s.get("untested_callers"))),
                tuple(_strings(s.get("tests"))),
            )
            for s in map(_dict, _list(analysis.get("symbols")))
        ),
        "cone": _strings(analysis.get("cone")),
        "fixtures": {k: _strings(fixtures.get(k)) for k in ("missing", "mutated", "unregistered")},
        "co_modified": _co_modified(oracle),
        "unlabeled": _strings(oracle.get("unlabeled")),
        "governance": {kind: _dict(used.get(kind)).get("sha256") for kind in GOVERNANCE_KINDS},
    }


_FINDING_NAMES = {
    "class": "the patch's class",
    "complete": "completeness",
    "files": "the changed files or their classes",
    "symbols": "the changed symbols, their callers or tests",
    "cone": "the impact cone",
    "fixtures": "the fixture-lock findings",
    "co_modified": "the co-modified features",
    "unlabeled": "the unlabeled paths",
    "governance": "the governance files used",
}


def analysis_disagreement(own: Mapping[str, Any], uploaded: Mapping[str, Any]) -> list[str]:
    """Where an uploaded analysis disagrees with the judge's own analysis of the same patch
    (the names of the parts that differ; empty when they agree)."""
    mine, theirs = _findings(own), _findings(uploaded)
    return [_FINDING_NAMES[key] for key in _FINDING_NAMES if mine[key] != theirs[key]]
