"""Policy (SPEC 5.3): every problem code, its default severity, and block / warn / off."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from freezedebt_ci.changes import Change
from freezedebt_ci.errors import InputError
from freezedebt_ci.evidence import Evidence, evidence_from_outcomes
from freezedebt_ci.ledger import Freeze
from freezedebt_ci.policy import DEFAULT_SEVERITIES, Policy, read_policy
from freezedebt_ci.report import compute_report

TODAY = dt.date(2026, 11, 5)
SPEC_53_DEFAULTS = {
    "head-failed": "block",
    "unaccounted-skip": "block",
    "lost-tests": "block",
    "frozen-surface": "block",
    "expired-freeze": "block",
    "invalid-freeze": "block",
    "ledger-in-patch": "block",
    "environment-drift": "warn",
    "fixture-touched": "warn",
    "base-missing": "block",
}


def run(
    passed: tuple[str, ...] = ("tests/test_a.py::t1", "tests/test_a.py::t2"),
    failed: tuple[str, ...] = (),
    skipped: tuple[str, ...] = (),
    exit: int = 0,
    meta: dict[str, Any] | None = None,
) -> Evidence:
    pairs = [(n, "passed") for n in passed] + [(n, "failed") for n in failed]
    pairs += [(n, "skipped") for n in skipped]
    return evidence_from_outcomes(pairs, exit_status=exit, meta=meta)


def freeze(**fields: Any) -> Freeze:
    values: dict[str, Any] = {
        "id": "FRZ-1",
        "test": "tests/test_slow.py::t",
        "covers": ("src/slow.py",),
        "owner": "finley",
        "opened": dt.date(2026, 11, 1),
        "expires": dt.date(2026, 11, 10),
        "reason": "timeout on the shared runner",
    }
    values.update(fields)
    return Freeze(**values)


Scenario = dict[str, Any]


def clean() -> Scenario:
    return {
        "base": run(),
        "head": run(),
        "freezes": [],
        "changes": [Change("src/a.py")],
        "today": TODAY,
    }


def with_(**changes: Any) -> Callable[[], Scenario]:
    def build() -> Scenario:
        scenario = clean()
        scenario.update(changes)
        return scenario

    return build


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "head-failed": with_(
        head=run(failed=("tests/test_a.py::new",), exit=1),
    ),
    "unaccounted-skip": with_(head=run(skipped=("tests/test_a.py::new",))),
    "lost-tests": with_(head=run(passed=("tests/test_a.py::t1",))),
    "frozen-surface": with_(freezes=[freeze()], changes=[Change("src/slow.py")]),
    # expired yesterday (TODAY - 1), otherwise a sound freeze
    "expired-freeze": with_(
        freezes=[freeze(opened=dt.date(2026, 10, 25), expires=dt.date(2026, 11, 4))]
    ),
    "invalid-freeze": with_(freezes=[freeze(owner=None, missing=("owner",))]),
    "ledger-in-patch": with_(changes=[Change("freeze_ledger.toml")]),
    "environment-drift": with_(
        base=run(meta={"image_digest": "sha256:aaa"}),
        head=run(meta={"image_digest": "sha256:bbb"}),
    ),
    "fixture-touched": with_(changes=[Change("tests/fixtures/prices.json")]),
    "base-missing": with_(base=None),
}


def report_for(code: str, policy: Policy | None = None) -> dict[str, Any]:
    return compute_report(**SCENARIOS[code](), policy=policy)


def codes(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["code"], p["severity"]) for p in report["problems"]]


def test_defaults_are_those_of_spec_53() -> None:
    for code, severity in SPEC_53_DEFAULTS.items():
        assert DEFAULT_SEVERITIES[code] == severity
        assert Policy().severity(code) == severity


def test_clean_scenario_has_no_problem_and_passes() -> None:
    report = compute_report(**clean())
    assert report["problems"] == []
    assert report["verdict"] == "pass"


@pytest.mark.parametrize("code", sorted(SCENARIOS))
def test_each_problem_code_fires_alone_with_its_default_severity(code: str) -> None:
    report = report_for(code)
    assert codes(report) == [(code, SPEC_53_DEFAULTS[code])]
    problem = report["problems"][0]
    assert problem["message"]
    assert problem["items"] == sorted(problem["items"])
    if code == "base-missing":
        assert report["verdict"] == "pending"
    else:
        assert report["verdict"] == ("block" if SPEC_53_DEFAULTS[code] == "block" else "pass")


@pytest.mark.parametrize("code", sorted(set(SCENARIOS) - {"base-missing"}))
@pytest.mark.parametrize("severity", ["block", "warn", "off"])
def test_policy_severity_decides_the_verdict(code: str, severity: str) -> None:
    report = report_for(code, Policy(severities={code: severity}))
    if severity == "off":
        assert codes(report) == []
    else:
        assert codes(report) == [(code, severity)]
    assert report["verdict"] == ("block" if severity == "block" else "pass")


@pytest.mark.parametrize("severity", ["block", "warn", "off"])
def test_missing_base_stays_pending_whatever_its_severity(severity: str) -> None:
    report = report_for("base-missing", Policy(severities={"base-missing": severity}))
    assert report["status"] == report["verdict"] == "pending"
    assert codes(report) == ([] if severity == "off" else [("base-missing", severity)])


def test_missing_head_stays_pending_and_never_passes() -> None:
    scenario = clean()
    scenario["head"] = None
    report = compute_report(**scenario)
    assert report["status"] == report["verdict"] == "pending"
    assert report["figures"]["head"] is None
    assert report["figures"]["net_executed_delta"] is None
    assert report["figures"]["base"] == {"passed": 2, "failed": 0, "skipped": 0, "xfail": 0}


def test_pending_report_still_lists_ledger_problems() -> None:
    scenario = SCENARIOS["invalid-freeze"]()
    scenario["base"] = None
    report = compute_report(**scenario)
    assert report["verdict"] == "pending"
    assert [c for c, _ in codes(report)] == ["base-missing", "invalid-freeze"]


# --- settings --------------------------------------------------------------------------------


def test_max_freeze_days_default_is_14_inclusive() -> None:
    ok = freeze(opened=dt.date(2026, 10, 30), expires=dt.date(2026, 11, 13))
    too_long = freeze(opened=dt.date(2026, 10, 30), expires=dt.date(2026, 11, 14))
    assert codes(compute_report(**with_(freezes=[ok])())) == []
    report = compute_report(**with_(freezes=[too_long])())
    assert codes(report) == [("invalid-freeze", "block")]
    assert "15 days" in report["problems"][0]["message"]


def test_max_freeze_days_comes_from_policy() -> None:
    span_20 = freeze(opened=dt.date(2026, 10, 25), expires=dt.date(2026, 11, 14))
    scenario = with_(freezes=[span_20])
    assert codes(compute_report(**scenario(), policy=Policy(max_freeze_days=19)))
    assert codes(compute_report(**scenario(), policy=Policy(max_freeze_days=20))) == []
    short = freeze(opened=dt.date(2026, 11, 1), expires=dt.date(2026, 11, 6))
    report = compute_report(**with_(freezes=[short])(), policy=Policy(max_freeze_days=3))
    assert codes(report) == [("invalid-freeze", "block")]


def test_custom_fixture_paths_replace_the_defaults() -> None:
    policy = Policy(fixture_paths=("data/golden/**",))
    changes = [Change("data/golden/a.json"), Change("tests/fixtures/b.json")]
    report = compute_report(**with_(changes=changes)(), policy=policy)
    assert codes(report) == [("fixture-touched", "warn")]
    assert report["problems"][0]["items"] == ["data/golden/a.json"]


@pytest.mark.parametrize(
    "path",
    ["tests/fixtures/prices.json", "tests/factories/user.py", "conftest.py", "src/app/conftest.py"],
)
def test_default_fixture_paths(path: str) -> None:
    report = compute_report(**with_(changes=[Change(path)])())
    assert codes(report) == [("fixture-touched", "warn")]
    assert report["problems"][0]["items"] == [path]


def test_renaming_a_fixture_away_still_touches_it() -> None:
    change = Change("tests/data/prices.json", "R", "tests/fixtures/prices.json")
    report = compute_report(**with_(changes=[change])())
    assert report["problems"][0]["items"] == ["tests/fixtures/prices.json"]


def test_custom_ledger_path_is_the_one_watched() -> None:
    policy = Policy(ledger_path="ops/freezes.toml")
    assert (
        codes(compute_report(**with_(changes=[Change("freeze_ledger.toml")])(), policy=policy))
        == []
    )
    report = compute_report(**with_(changes=[Change("ops/freezes.toml")])(), policy=policy)
    assert codes(report) == [("ledger-in-patch", "block")]
    assert report["problems"][0]["items"] == ["ops/freezes.toml"]


def test_ledger_changed_flag_and_renamed_ledger_count_as_ledger_in_patch() -> None:
    report = compute_report(**clean(), ledger_changed=True)
    assert codes(report) == [("ledger-in-patch", "block")]
    moved = Change("ops/ledger.toml", "R", "freeze_ledger.toml")
    assert codes(compute_report(**with_(changes=[moved])())) == [("ledger-in-patch", "block")]


@pytest.mark.parametrize("key", ["image_digest", "lockfile_sha256", "python"])
def test_environment_drift_keys(key: str) -> None:
    scenario = with_(base=run(meta={key: "1", "sha": "a"}), head=run(meta={key: "2", "sha": "b"}))
    report = compute_report(**scenario())
    assert codes(report) == [("environment-drift", "warn")]
    assert report["problems"][0]["items"] == [key]


def test_no_drift_when_equal_or_unknown_on_one_side() -> None:
    same = with_(base=run(meta={"python": "3.11.7"}), head=run(meta={"python": "3.11.7"}))
    one_side = with_(base=run(meta={"python": "3.11.7"}), head=run(meta={}))
    other_key = with_(base=run(meta={"platform": "a"}), head=run(meta={"platform": "b"}))
    for scenario in (same, one_side, other_key):
        assert codes(compute_report(**scenario())) == []


# --- reading a policy ----------------------------------------------------------------------


def test_policy_from_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "policy.toml"
    toml.write_text(
        'max_freeze_days = 7\nfixture_paths = ["golden/**"]\nledger_path = "ops/ledger.toml"\n'
        '[severities]\nenvironment-drift = "block"\nlost-tests = "warn"\n',
        encoding="utf-8",
    )
    json_file = tmp_path / "policy.json"
    json_file.write_text(
        '{"max_freeze_days": 7, "fixture_paths": ["golden/**"], "ledger_path": "ops/ledger.toml",'
        ' "severities": {"environment-drift": "block", "lost-tests": "warn"}}',
        encoding="utf-8",
    )
    for path in (toml, json_file):
        policy = read_policy(path)
        assert policy.max_freeze_days == 7
        assert policy.fixture_paths == ("golden/**",)
        assert policy.ledger_path == "ops/ledger.toml"
        assert policy.severity("environment-drift") == "block"
        assert policy.severity("lost-tests") == "warn"
        assert policy.severity("head-failed") == "block"
    assert read_policy(toml) == read_policy(json_file)


def test_policy_as_dict_lists_every_code() -> None:
    data = Policy().as_dict()
    assert set(data["severities"]) == set(DEFAULT_SEVERITIES)
    assert data["max_freeze_days"] == 14
    assert data["ledger_path"] == "freeze_ledger.toml"
    assert data["fixture_paths"] == ["tests/fixtures/**", "tests/factories/**", "**/conftest.py"]


def test_bad_policy_names_every_fault() -> None:
    with pytest.raises(InputError) as info:
        Policy.from_mapping(
            {
                "severities": {"lost-tests": "maybe", "no-such-code": "off"},
                "max_freeze_days": 0,
                "fixture_paths": ["tests/*.json"],
                "ledger_path": "../ledger.toml",
                "colour": "red",
            },
            source="policy.toml",
        )
    assert info.value.source == "policy.toml"
    assert [p.where for p in info.value.problems] == [
        "severities.lost-tests",
        "severities.no-such-code",
        "max_freeze_days",
        "fixture_paths[0]",
        "ledger_path",
        "colour",
    ]


def test_unreadable_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("max_freeze_days = \n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid policy file"):
        read_policy(path)
    with pytest.raises(InputError, match="cannot be read"):
        read_policy(tmp_path / "absent.toml")
