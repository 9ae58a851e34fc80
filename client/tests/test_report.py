"""The patch report: evidence delta (SPEC 5.1), freezes and the patch (5.2), the JSON (5.8)."""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any

import pytest

from freezedebt_ci.changes import Change
from freezedebt_ci.evidence import Evidence, evidence_from_json
from freezedebt_ci.ledger import Freeze
from freezedebt_ci.policy import Policy
from freezedebt_ci.report import ACTIONS, compute_report, file_of, report_json
from freezedebt_ci.summary import markdown_summary, text_summary

TODAY = dt.date(2026, 11, 5)
TOP_KEYS = [
    "format",
    "status",
    "verdict",
    "today",
    "figures",
    "new_skips",
    "retired_skips",
    "lost",
    "new_xfails",
    "frozen_surface_hits",
    "expired_freezes",
    "per_file",
    "problems",
    "analysis",
    # added after SPEC 5.8's list: why a pending report waits (None when ready)
    "pending_reason",
]
LIST_KEYS = ["new_skips", "retired_skips", "lost", "new_xfails", "expired_freezes"]
FROZEN = "tests/test_pricing.py::test_rounding_boundary"
CHECK = "tests/property/test_rounding.py::test_fee_monotonic"


def run(
    passed: list[str] | tuple[str, ...] = (),
    failed: list[str] | tuple[str, ...] = (),
    skipped: list[str] | tuple[str, ...] = (),
    xfail: list[str] | tuple[str, ...] = (),
    exit: int | None = None,
    meta: dict[str, Any] | None = None,
) -> Evidence:
    records: list[dict[str, Any]] = [{"nodeid": n, "outcome": "passed"} for n in passed]
    records += [{"nodeid": n, "outcome": "failed"} for n in failed]
    records += [{"nodeid": n, "outcome": "skipped", "when": "setup"} for n in skipped]
    records += [{"nodeid": n, "outcome": "skipped", "xfail": True} for n in xfail]
    status = (1 if failed else 0) if exit is None else exit
    return evidence_from_json({"exit": status, "records": records, "meta": meta or {}})


def freeze(**fields: Any) -> Freeze:
    values: dict[str, Any] = {
        "id": "FRZ-014",
        "test": FROZEN,
        "covers": ("src/pricing/rounding.py",),
        "owner": "finley",
        "opened": dt.date(2026, 10, 30),
        "expires": dt.date(2026, 11, 13),
        "reason": "wall-clock boundary; fails ~1/40 CI runs, see run 8812",
        "compensating_check": CHECK,
    }
    values.update(fields)
    return Freeze(**values)


def report(
    base: Evidence | None,
    head: Evidence | None,
    freezes: list[Freeze] | None = None,
    changes: list[Change] | None = None,
    today: dt.date = TODAY,
    policy: Policy | None = None,
) -> dict[str, Any]:
    return compute_report(
        base=base,
        head=head,
        freezes=freezes or [],
        changes=changes or [],
        today=today,
        policy=policy,
    )


def codes(rep: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["code"], p["severity"]) for p in rep["problems"]]


def names(prefix: str, count: int) -> list[str]:
    return [f"{prefix}::test_{i}" for i in range(count)]


# --- 5.1 evidence delta --------------------------------------------------------------------


def test_net_executed_delta_is_head_passed_minus_base_passed() -> None:
    base = run(passed=names("tests/test_a.py", 412), skipped=[FROZEN])
    head = run(passed=names("tests/test_a.py", 414), skipped=[FROZEN])
    figures = report(base, head)["figures"]
    assert figures["net_executed_delta"] == 2
    assert figures["base"] == {"passed": 412, "failed": 0, "skipped": 1, "xfail": 0}
    assert figures["head"] == {"passed": 414, "failed": 0, "skipped": 1, "xfail": 0}


def test_new_skip_is_listed_and_retired_skip_is_listed() -> None:
    base = run(passed=["t.py::a"], skipped=["t.py::old"])
    head = run(passed=["t.py::old"], skipped=["t.py::a", "t.py::new"])
    rep = report(base, head)
    assert rep["new_skips"] == ["t.py::a", "t.py::new"]
    assert rep["retired_skips"] == ["t.py::old"]


def test_skip_present_in_both_runs_is_neither_new_nor_retired() -> None:
    rep = report(run(skipped=[FROZEN]), run(skipped=[FROZEN]))
    assert rep["new_skips"] == rep["retired_skips"] == []


@pytest.mark.parametrize("fate", ["failed", "skipped", "xfail", "gone"])
def test_test_passing_on_base_and_not_on_head_is_lost_whatever_the_reason(fate: str) -> None:
    base = run(passed=["t.py::keep", "t.py::x"])
    head = run(
        passed=["t.py::keep"],
        failed=["t.py::x"] if fate == "failed" else [],
        skipped=["t.py::x"] if fate == "skipped" else [],
        xfail=["t.py::x"] if fate == "xfail" else [],
        exit=0,
    )
    rep = report(base, head)
    assert rep["lost"] == ["t.py::x"]
    assert ("lost-tests", "block") in codes(rep)


def test_test_not_passing_on_base_is_never_lost() -> None:
    rep = report(run(failed=["t.py::x"], exit=0), run(skipped=["t.py::x"]))
    assert rep["lost"] == []


def test_new_xfails_are_reported_apart_from_skips() -> None:
    base = run(passed=["t.py::a"], xfail=["t.py::old"])
    head = run(passed=["t.py::a"], xfail=["t.py::old", "t.py::new"])
    rep = report(base, head)
    assert rep["new_xfails"] == ["t.py::new"]
    assert rep["new_skips"] == []
    assert codes(rep) == []  # an xfail is not a skip: no unaccounted-skip


def test_xfail_turning_into_skip_is_a_new_skip() -> None:
    rep = report(run(xfail=["t.py::a"]), run(skipped=["t.py::a"]))
    assert rep["new_skips"] == ["t.py::a"]
    assert rep["new_xfails"] == []


def test_earned_and_borrowed() -> None:
    base = run(passed=["t.py::a", "t.py::b", "t.py::c"], failed=["t.py::d"], exit=0)
    head = run(passed=["t.py::a", "t.py::b", "t.py::d", "t.py::e"])
    figures = report(base, head)["figures"]
    assert figures["earned"] == 2  # d (fixed) and e (new)
    assert figures["borrowed"] == 2  # a and b passed on base already
    assert figures["earned"] + figures["borrowed"] == figures["head"]["passed"]


def test_ten_cheap_added_one_expensive_deleted_is_visible_per_file() -> None:
    base = run(passed=[*names("tests/test_cheap.py", 5), "tests/test_e2e.py::test_checkout"])
    head = run(passed=names("tests/test_cheap.py", 15))
    rep = report(base, head)
    assert rep["figures"]["net_executed_delta"] == 9
    assert rep["per_file"] == [
        {
            "file": "tests/test_cheap.py",
            "base_passed": 5,
            "head_passed": 15,
            "delta": 10,
            "new_skips": 0,
            "retired_skips": 0,
            "lost": 0,
        },
        {
            "file": "tests/test_e2e.py",
            "base_passed": 1,
            "head_passed": 0,
            "delta": -1,
            "new_skips": 0,
            "retired_skips": 0,
            "lost": 1,
        },
    ]


def test_per_file_counts_skips_and_lists_files_without_passes() -> None:
    base = run(passed=["a.py::x"], skipped=["b.py::s"], xfail=["c.py::q"])
    head = run(passed=["a.py::x"], skipped=["a.py::new"], failed=["d.py::f"], exit=1)
    rows = {row["file"]: row for row in report(base, head)["per_file"]}
    assert sorted(rows) == ["a.py", "b.py", "c.py", "d.py"]
    assert rows["a.py"]["new_skips"] == 1
    assert rows["b.py"]["retired_skips"] == 1
    assert rows["d.py"]["delta"] == 0


def test_file_of_node_id() -> None:
    assert file_of("tests/a.py::TestX::test_y[1::2]") == "tests/a.py"
    assert file_of("no_separator") == "no_separator"


# --- 5.2 freezes and the patch ---------------------------------------------------------------


def seed_runs(check_in_head: bool = False, check_failed: bool = False) -> tuple[Evidence, Evidence]:
    base = run(passed=names("tests/test_pricing.py", 412), skipped=[FROZEN])
    head_passed = names("tests/test_pricing.py", 414)
    failed: list[str] = []
    if check_in_head:
        (failed if check_failed else head_passed).append(CHECK)
    return base, run(passed=head_passed, skipped=[FROZEN], failed=failed, exit=0)


def test_freeze_is_active_through_its_expiry_day() -> None:
    base, head = seed_runs()
    changes = [Change("src/pricing/rounding.py")]
    expires = dt.date(2026, 11, 13)
    on_the_day = report(base, head, [freeze()], changes, today=expires)
    assert [h["freeze"] for h in on_the_day["frozen_surface_hits"]] == ["FRZ-014"]
    assert on_the_day["expired_freezes"] == []
    day_after = report(base, head, [freeze()], changes, today=expires + dt.timedelta(days=1))
    assert day_after["frozen_surface_hits"] == []
    assert day_after["expired_freezes"] == ["FRZ-014"]
    assert codes(day_after) == [("expired-freeze", "block")]


def test_frozen_surface_hit_on_exact_path_blocks() -> None:
    base, head = seed_runs()
    rep = report(base, head, [freeze()], [Change("src/pricing/rounding.py")])
    assert rep["frozen_surface_hits"] == [
        {
            "freeze": "FRZ-014",
            "test": FROZEN,
            "paths": ["src/pricing/rounding.py"],
            "compensated": False,
        }
    ]
    (problem,) = rep["problems"]
    assert problem == {
        "code": "frozen-surface",
        "severity": "block",
        "message": "src/pricing/rounding.py is guarded only by frozen FRZ-014",
        "items": ["src/pricing/rounding.py"],
        "origin": "patch",
        "owners": ["finley"],
        "action": ACTIONS["frozen-surface"],
    }
    assert rep["verdict"] == "block"


def test_untouched_blast_radius_is_no_hit() -> None:
    base, head = seed_runs()
    rep = report(base, head, [freeze()], [Change("src/pricing/tax.py")])
    assert rep["frozen_surface_hits"] == []
    assert rep["verdict"] == "pass"


def test_dir_glob_cover_matches_every_path_under_it() -> None:
    base, head = seed_runs()
    f = freeze(covers=("src/pricing/**",))
    changes = [Change("src/pricing/deep/x.py"), Change("src/pricing.py"), Change("src/other.py")]
    (hit,) = report(base, head, [f], changes)["frozen_surface_hits"]
    assert hit["paths"] == ["src/pricing/deep/x.py"]


@pytest.mark.parametrize("side", ["old", "new"])
def test_rename_hits_the_frozen_surface_on_either_side(side: str) -> None:
    base, head = seed_runs()
    if side == "old":
        change = Change("src/pricing/round.py", "R", "src/pricing/rounding.py")
    else:
        change = Change("src/pricing/rounding.py", "R", "src/pricing/legacy.py")
    (hit,) = report(base, head, [freeze()], [change])["frozen_surface_hits"]
    assert hit["paths"] == ["src/pricing/rounding.py"]


def test_compensated_hit_warns_only_and_passes() -> None:
    base, head = seed_runs(check_in_head=True)
    rep = report(base, head, [freeze()], [Change("src/pricing/rounding.py")])
    assert rep["frozen_surface_hits"][0]["compensated"] is True
    assert codes(rep) == [("frozen-surface", "warn")]
    assert CHECK in rep["problems"][0]["message"]
    assert rep["verdict"] == "pass"


def test_compensating_check_absent_from_head_blocks() -> None:
    base, head = seed_runs(check_in_head=False)
    rep = report(base, head, [freeze()], [Change("src/pricing/rounding.py")])
    assert rep["frozen_surface_hits"][0]["compensated"] is False
    assert codes(rep) == [("frozen-surface", "block")]


def test_compensating_check_failing_in_head_blocks() -> None:
    base, head = seed_runs(check_in_head=True, check_failed=True)
    rep = report(base, head, [freeze()], [Change("src/pricing/rounding.py")])
    assert rep["frozen_surface_hits"][0]["compensated"] is False
    assert ("frozen-surface", "block") in codes(rep)
    assert rep["verdict"] == "block"


def test_freeze_without_compensating_check_is_never_compensated() -> None:
    base, head = seed_runs(check_in_head=True)
    rep = report(base, head, [freeze(compensating_check=None)], [Change("src/pricing/rounding.py")])
    assert codes(rep) == [("frozen-surface", "block")]


def test_allowed_in_merge_freeze_warns_only() -> None:
    base, head = seed_runs()
    rep = report(base, head, [freeze(allowed_in_merge=True)], [Change("src/pricing/rounding.py")])
    assert codes(rep) == [("frozen-surface", "warn")]
    assert "allowed in merges" in rep["problems"][0]["message"]
    assert rep["verdict"] == "pass"


def test_expired_freeze_blast_radius_is_not_a_hit() -> None:
    base, head = seed_runs()
    rep = report(base, head, [freeze()], [Change("src/pricing/rounding.py")], dt.date(2026, 11, 14))
    assert rep["frozen_surface_hits"] == []


def test_one_path_guarded_by_two_freezes_names_both() -> None:
    base, head = seed_runs()
    freezes = [freeze(id="FRZ-020", test="t.py::u"), freeze(compensating_check=None)]
    rep = report(base, head, freezes, [Change("src/pricing/rounding.py")])
    assert [h["freeze"] for h in rep["frozen_surface_hits"]] == ["FRZ-014", "FRZ-020"]
    assert rep["problems"][0]["message"] == (
        "src/pricing/rounding.py is guarded only by frozen FRZ-014, FRZ-020"
    )


def test_new_skip_named_by_active_freeze_is_accounted() -> None:
    base = run(passed=["t.py::a"])
    head = run(passed=["t.py::a"], skipped=[FROZEN])
    rep = report(base, head, [freeze()])
    assert rep["new_skips"] == [FROZEN]
    assert codes(rep) == []
    assert rep["verdict"] == "pass"


def test_new_skip_named_only_by_expired_freeze_is_unaccounted() -> None:
    base = run(passed=["t.py::a"])
    head = run(passed=["t.py::a"], skipped=[FROZEN])
    rep = report(base, head, [freeze()], today=dt.date(2026, 11, 14))
    assert codes(rep) == [("expired-freeze", "block"), ("unaccounted-skip", "block")]
    assert rep["problems"][1]["items"] == [FROZEN]


def test_new_skip_that_no_freeze_names_is_unaccounted() -> None:
    base = run(passed=["t.py::a"])
    head = run(passed=["t.py::a"], skipped=["t.py::b", FROZEN])
    rep = report(base, head, [freeze()])
    assert codes(rep) == [("unaccounted-skip", "block")]
    assert rep["problems"][0]["items"] == ["t.py::b"]


def test_head_failure_items_are_the_failed_tests() -> None:
    rep = report(run(passed=["t.py::a"]), run(passed=["t.py::a"], failed=["t.py::z"]))
    assert codes(rep) == [("head-failed", "block")]
    assert rep["problems"][0]["items"] == ["t.py::z"]
    assert "exited with status 1" in rep["problems"][0]["message"]


# --- 5.8 the report JSON ---------------------------------------------------------------------


def busy_inputs(seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)  # noqa: S311 - a shuffle, not a secret
    files = [f"tests/test_{c}.py" for c in "zyxwv"]
    base = run(
        passed=[f"{f}::t{i}" for f in files for i in range(6)],
        skipped=["tests/test_v.py::s1", "tests/test_z.py::s0"],
        xfail=["tests/test_w.py::q"],
        meta={"python": "3.11.7"},
    )
    head_passed = [f"{f}::t{i}" for f in files for i in range(6) if (i + len(f)) % 5]
    head = run(
        passed=[*head_passed, "tests/test_new.py::a"],
        skipped=["tests/test_z.py::s0", "tests/test_y.py::t1", "tests/test_x.py::t9"],
        xfail=["tests/test_w.py::q", "tests/test_z.py::q2"],
        failed=["tests/test_v.py::t0"],
        meta={"python": "3.12.1"},
    )
    freezes = [
        freeze(id="FRZ-3", test="tests/test_x.py::t9", covers=("src/b/**",), expires=TODAY),
        freeze(id="FRZ-1", covers=("src/a.py", "src/c.py")),
        freeze(id="FRZ-2", opened=dt.date(2026, 10, 1), expires=dt.date(2026, 10, 9)),
        freeze(id="FRZ-4", owner=None, missing=("owner",), covers=("tests/fixtures/**",)),
    ]
    changes = [
        Change("src/c.py"),
        Change("src/b/z.py", "R", "src/a.py"),
        Change("tests/fixtures/p.json"),
        Change("freeze_ledger.toml"),
        Change("src/b/a.py", "A"),
    ]
    rng.shuffle(freezes)
    rng.shuffle(changes)
    return {"base": base, "head": head, "freezes": freezes, "changes": changes, "today": TODAY}


def test_report_has_exactly_the_spec_keys_in_order() -> None:
    rep = compute_report(**busy_inputs())
    assert list(rep) == TOP_KEYS
    assert rep["format"] == "freezedebt-report/1"
    assert rep["status"] == "ready"
    assert rep["today"] == "2026-11-05"
    assert list(rep["figures"]) == ["base", "head", "net_executed_delta", "earned", "borrowed"]
    for counts in (rep["figures"]["base"], rep["figures"]["head"]):
        assert list(counts) == ["passed", "failed", "skipped", "xfail"]
    for hit in rep["frozen_surface_hits"]:
        assert list(hit) == ["freeze", "test", "paths", "compensated"]
    for row in rep["per_file"]:
        assert list(row) == [
            "file",
            "base_passed",
            "head_passed",
            "delta",
            "new_skips",
            "retired_skips",
            "lost",
        ]
    for problem in rep["problems"]:
        assert list(problem) == [
            "code",
            "severity",
            "message",
            "items",
            # added after SPEC 5.8's list: who must act, and what to do
            "origin",
            "owners",
            "action",
        ]
        assert problem["severity"] in ("block", "warn")


def test_pending_report_has_the_same_keys() -> None:
    inputs = busy_inputs()
    inputs["base"] = None
    rep = compute_report(**inputs)
    assert list(rep) == TOP_KEYS
    assert rep["status"] == rep["verdict"] == "pending"
    assert rep["pending_reason"] == "no run of the base commit yet"
    assert compute_report(**busy_inputs())["pending_reason"] is None


def test_every_list_in_the_report_is_sorted() -> None:
    rep = compute_report(**busy_inputs())
    for key in LIST_KEYS:
        assert rep[key] == sorted(rep[key]), key
    assert rep["new_skips"] and rep["lost"] and rep["new_xfails"] and rep["expired_freezes"]
    hits = rep["frozen_surface_hits"]
    assert len(hits) >= 2
    assert [h["freeze"] for h in hits] == sorted(h["freeze"] for h in hits)
    for hit in hits:
        assert hit["paths"] == sorted(hit["paths"])
    files = [row["file"] for row in rep["per_file"]]
    assert files == sorted(files)
    keys = [(p["code"], p["severity"], p["message"]) for p in rep["problems"]]
    assert keys == sorted(keys)
    assert len(keys) >= 8
    for problem in rep["problems"]:
        assert problem["items"] == sorted(set(problem["items"]))


def test_same_input_gives_byte_identical_json() -> None:
    first = report_json(compute_report(**busy_inputs(0)))
    for seed in range(1, 6):
        assert report_json(compute_report(**busy_inputs(seed))) == first
    assert first.endswith("}\n")
    assert json.loads(first) == compute_report(**busy_inputs(0))


def test_report_json_is_stable_text() -> None:
    rep = compute_report(**busy_inputs())
    text = report_json(rep)
    assert text == json.dumps(rep, indent=2, ensure_ascii=False) + "\n"
    assert report_json(json.loads(text)) == text


def test_report_keeps_non_ascii_node_ids_readable() -> None:
    rep = report(run(passed=["tests/test_café.py::t"]), run())
    assert "test_café.py" in report_json(rep)


def test_summaries_render_ready_and_pending_reports() -> None:
    rep = compute_report(**busy_inputs())
    text = text_summary(rep)
    assert text.startswith("verdict: BLOCK")
    assert "net executed delta" in text
    markdown = markdown_summary(rep)
    assert markdown.startswith("## ⛔ Freeze Debt report: **block**")
    assert "### Problems" in markdown and "### Per-file delta" in markdown
    inputs = busy_inputs()
    inputs["head"] = None
    pending = compute_report(**inputs)
    assert "pending" in markdown_summary(pending)
    assert text_summary(pending).startswith("verdict: PENDING")


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (1, "yet no test failed: something outside the tests failed, such as a plugin's hook"),
        (2, "no test failed: the run was interrupted, by a collection error or by hand"),
        (3, "no test failed: an internal error of pytest or of a plugin or conftest hook"),
        (4, "no test failed: pytest was called wrongly and ran no test (a usage error)"),
        (5, "no tests were collected"),
        (137, "no test failed: the test command itself failed, its log says why"),
    ],
)
def test_a_head_run_failing_without_a_failed_test_says_why(status: int, reason: str) -> None:
    rep = report(run(["t.py::a"]), run(["t.py::a"], exit=status))
    (problem,) = rep["problems"]
    assert problem["code"] == "head-failed"
    assert problem["message"] == f"the head run exited with status {status} ({reason})"
    assert "0 failed" not in problem["message"]


def test_head_failed_counts_tests_and_files_that_could_not_be_collected_apart() -> None:
    head = run(["t.py::a"], failed=["t.py::b", "t.py::c", "pkg/test_broken.py"], exit=2)
    (problem,) = report(run(["t.py::a"]), head)["problems"][:1]
    assert problem["message"] == (
        "the head run exited with status 2 (2 failed tests, 1 file that could not be collected)"
    )
    assert problem["items"] == ["pkg/test_broken.py", "t.py::b", "t.py::c"]


# --- who must act ---------------------------------------------------------------------------


def test_every_problem_says_whose_it_is_and_what_to_do() -> None:
    base, head = seed_runs()
    expired = freeze(
        id="FRZ-001", owner="ops", expires=dt.date(2026, 11, 1), reason="assert total == 3"
    )
    rep = report(base, head, [freeze(), expired], [Change("src/pricing/rounding.py")])
    by_code = {p["code"]: p for p in rep["problems"]}
    assert set(by_code) == {"expired-freeze", "frozen-surface", "invalid-freeze"}
    assert by_code["frozen-surface"]["origin"] == "patch"
    assert by_code["frozen-surface"]["owners"] == ["finley"]
    assert by_code["expired-freeze"]["origin"] == "ledger"
    assert by_code["expired-freeze"]["owners"] == ["ops"]
    assert by_code["expired-freeze"]["message"] == (
        "the ledger holds 1 expired freeze: FRZ-001 (owner ops, expired 2026-11-01)"
    )
    assert by_code["invalid-freeze"]["origin"] == "ledger"
    assert by_code["invalid-freeze"]["message"].startswith("FRZ-001 (owner ops): ")
    for problem in rep["problems"]:
        assert problem["action"] == ACTIONS[problem["code"]]


def test_a_lost_test_that_is_a_new_skip_is_explained_as_that_skip() -> None:
    base = run(["t.py::a", "t.py::b", "t.py::c", "t.py::d"])
    head = run(["t.py::a"], failed=["t.py::b"], skipped=["t.py::c", "t.py::d"])
    frozen_d = freeze(id="FRZ-D", test="t.py::d", expires=TODAY)
    rep = report(base, head, [frozen_d])
    by_code = {p["code"]: p for p in rep["problems"]}
    assert by_code["unaccounted-skip"]["items"] == ["t.py::c"]
    assert by_code["lost-tests"]["items"] == ["t.py::b", "t.py::c", "t.py::d"]  # the policy's
    assert by_code["lost-tests"]["message"] == (
        "3 tests passed on base and no longer pass: 1 now failing, "
        "1 skipped by an active freeze, 1 skipped with no freeze (the unaccounted-skip problem)"
    )


def test_summaries_show_inherited_problems_apart_with_their_owners() -> None:
    base, head = seed_runs()
    expired = freeze(id="FRZ-001", owner="ops", expires=dt.date(2026, 11, 1))
    rep = report(base, head, [freeze(), expired], [Change("src/pricing/rounding.py")])
    markdown = markdown_summary(rep)
    own_at = markdown.index("### Problems of this patch")
    inherited_at = markdown.index("### Inherited from the ledger")
    assert own_at < markdown.index("`frozen-surface`") < inherited_at
    assert markdown.index("`expired-freeze`") > inherited_at
    assert f"  - what to do: {ACTIONS['expired-freeze']} (owners: ops)" in markdown
    text = text_summary(rep)
    assert (
        text.index("frozen-surface")
        < text.index("inherited from the ledger")
        < text.index("expired-freeze")
    )
    assert f"      what to do: {ACTIONS['frozen-surface']}" in text
