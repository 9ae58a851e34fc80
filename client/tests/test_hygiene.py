"""Freeze hygiene (SPEC 5.3 ``invalid-freeze``, 5.5): only environmental signals may be frozen,
never an assertion and never a fixture."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from freezedebt_ci.changes import Change
from freezedebt_ci.evidence import evidence_from_outcomes
from freezedebt_ci.hygiene import freeze_problems, names_signal
from freezedebt_ci.ledger import FREEZE_CLASSES, Freeze, parse_ledger
from freezedebt_ci.policy import Policy
from freezedebt_ci.report import compute_report


def freeze(**fields: Any) -> Freeze:
    values: dict[str, Any] = {
        "id": "FRZ-014",
        "test": "tests/test_pricing.py::test_rounding_boundary",
        "covers": ("src/pricing/rounding.py",),
        "owner": "finley",
        "opened": dt.date(2026, 10, 30),
        "expires": dt.date(2026, 11, 13),
        "reason": "wall-clock boundary; fails ~1/40 CI runs, see run 8812",
    }
    values.update(fields)
    return Freeze(**values)


def problems(f: Freeze, policy: Policy | None = None) -> list[str]:
    return freeze_problems(f, policy or Policy())


def test_seed_freeze_is_sound() -> None:
    assert problems(freeze()) == []


@pytest.mark.parametrize("freeze_class", FREEZE_CLASSES)
def test_every_environmental_class_is_accepted(freeze_class: str) -> None:
    assert problems(freeze(freeze_class=freeze_class)) == []


def test_assertion_class_is_invalid() -> None:
    (why,) = problems(freeze(freeze_class="assertion"))
    assert "'assertion' is not an environmental signal" in why


def test_unknown_class_is_invalid() -> None:
    assert problems(freeze(freeze_class="flaky"))


@pytest.mark.parametrize(
    "reason",
    [
        "assert round_fee(Decimal('10.005')) == Decimal('10.01')",
        "AssertionError: assert 3 == 4",
        "E       assert total == expected",
        "expected 10.01 but was 10.00",
        "Expected 2 to equal 3",
        "fee == 0.01",
    ],
)
def test_reason_that_is_only_an_assertion_message_is_invalid(reason: str) -> None:
    assert problems(freeze(reason=reason)) == [
        "reason is an assertion message, not an environmental signal"
    ]


def test_assertion_reason_is_invalid_even_with_an_environmental_class() -> None:
    reason = "AssertionError: assert 3 == 4"
    assert problems(freeze(reason=reason, freeze_class="timeout")) == [
        "reason is an assertion message, not an environmental signal"
    ]


@pytest.mark.parametrize(
    "reason",
    [
        "wall-clock boundary; fails ~1/40 CI runs, see run 8812",
        "connection reset by peer from the payments sandbox",
        "Timed out after 30s waiting for the worker",
        "redis not installed on the arm runners",
        "fails under xdist ordering",
        "assert fails when the clock crosses midnight UTC",
    ],
)
def test_reason_naming_an_environmental_signal_is_sound(reason: str) -> None:
    assert names_signal(reason)
    assert problems(freeze(reason=reason)) == []


def test_reason_naming_no_signal_needs_a_class() -> None:
    vague = "flaky, will look later"
    assert problems(freeze(reason=vague)) == [
        "reason names no environmental signal (timeout, network, clock, …)"
    ]
    assert problems(freeze(reason=vague, freeze_class="order-dependent")) == []


@pytest.mark.parametrize(
    "cover",
    [
        "tests/fixtures/prices.json",
        "tests/fixtures/**",
        "tests/factories/**",
        "tests/conftest.py",
        "conftest.py",
        "tests/**",
    ],
)
def test_cover_reaching_a_fixture_path_is_invalid(cover: str) -> None:
    (why,) = problems(freeze(covers=("src/pricing/rounding.py", cover)))
    assert why == f"covers fixture path(s) {cover}"


def test_tests_glob_overlaps_any_depth_conftest() -> None:
    policy = Policy(fixture_paths=("**/conftest.py",))
    assert problems(freeze(covers=("tests/**",)), policy) == ["covers fixture path(s) tests/**"]


def test_fixture_check_follows_the_policy_fixture_paths() -> None:
    cover = ("golden/expected.json",)
    assert problems(freeze(covers=cover)) == []
    (why,) = problems(freeze(covers=cover), Policy(fixture_paths=("golden/**",)))
    assert "golden/expected.json" in why


def test_expiry_before_opened_is_invalid() -> None:
    assert problems(freeze(expires=dt.date(2026, 10, 29))) == ["expires before it was opened"]


def test_missing_fields_are_listed() -> None:
    (f,) = parse_ledger('[[freeze]]\nid = "FRZ-1"\ntest = "t.py::t"\n')
    assert problems(f) == [
        "missing required field 'covers'",
        "missing required field 'owner'",
        "missing required field 'opened'",
        "missing required field 'expires'",
        "missing required field 'reason'",
    ]


def test_hygiene_problems_surface_as_invalid_freeze_in_the_report() -> None:
    run = evidence_from_outcomes([("tests/test_a.py::t", "passed")])
    bad = [
        freeze(id="FRZ-2", freeze_class="assertion"),
        freeze(id="FRZ-1", covers=("tests/fixtures/**",)),
        freeze(id="FRZ-3"),
    ]
    report = compute_report(
        base=run, head=run, freezes=bad, changes=[Change("README.md")], today=dt.date(2026, 11, 5)
    )
    (problem,) = report["problems"]
    assert problem["code"] == "invalid-freeze"
    assert problem["severity"] == "block"
    assert problem["items"] == ["FRZ-1", "FRZ-2"]
    assert problem["message"].index("FRZ-1") < problem["message"].index("FRZ-2")
    assert report["verdict"] == "block"


def test_folder_cover_of_production_code_is_sound_under_default_fixture_paths() -> None:
    assert freeze_problems(freeze(covers=("src/pricing/**",)), Policy()) == []


def test_signal_words_count_only_as_whole_words() -> None:
    problems = freeze_problems(freeze(reason="assert order_total == 10"), Policy())
    assert any("assertion message" in p for p in problems)
