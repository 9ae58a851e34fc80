"""An analysis judged for a report (SPEC 5.7, 5.8): problems under policy, the section."""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
from typing import Any

import pytest

from freezedebt_ci.analysis.judge import SYMBOLS_CAP, analysis_problems, analysis_section
from freezedebt_ci.ledger import Freeze
from freezedebt_ci.policy import Policy
from freezedebt_ci.report import compute_report, report_json

TODAY = dt.date(2026, 12, 1)
LOCK_SHA, MAP_SHA, LEDGER_SHA = "a" * 64, "b" * 64, "c" * 64


def symbol(module: str, name: str, **extra: Any) -> dict[str, Any]:
    return {
        "path": f"src/{module.replace('.', '/')}.py",
        "module": module,
        "name": name,
        "kind": "function",
        "change": "modified",
        "public": True,
        "signature_changed": False,
        "callers": [],
        "tests": [],
        "untested_callers": [],
        **extra,
    }


def analysis() -> dict[str, Any]:
    """Each finding once, shaped as ``freezedebt-ci analyze`` writes them."""
    return {
        "format": "freezedebt-analysis/1",
        "base": "ba5e" * 10,
        "head": "4ead" * 10,
        "class": "cross",
        "complete": True,
        "files": [
            {
                "path": "src/shop/pricing.py",
                "old_path": None,
                "status": "M",
                "kind": "production",
                "class": "contract",
            },
            {
                "path": "src/shop/tax.py",
                "old_path": None,
                "status": "M",
                "kind": "production",
                "class": "local",
            },
        ],
        "symbols": [
            symbol(
                "shop.pricing",
                "round_price",
                callers=["shop.cart:cart_total", "shop.invoice:invoice_line"],
                tests=["tests/test_pricing.py::test_round_price"],
                untested_callers=["shop.invoice:invoice_line"],
            ),
            symbol(
                "shop.pricing",
                "apply_discount",
                signature_changed=True,
                tests=["tests/test_pricing.py::test_apply_discount"],
            ),
            symbol("shop.tax", "vat", tests=["tests/test_tax.py::test_vat"], frozen_by=["FRZ-OLD"]),
            symbol(
                "shop.shipping",
                "shipping_cost",
                change="added",
                tests=["tests/test_shipping.py::test_shipping_cost"],
                candidate_only=True,
            ),
        ],
        "cone": ["shop.cart:cart_total"],
        "cone_count": 1,
        "fixtures": {
            "lock": "fixtures.lock",
            "missing": [],
            "mutated": ["tests/fixtures/p.json"],
            "unregistered": ["tests/fixtures/new.json"],
        },
        "oracle": {
            "map": "oracle_map.json",
            "co_modified": [
                {
                    "feature": "pricing",
                    "prod": ["src/shop/pricing.py"],
                    "oracle": ["tests/fixtures/p.json"],
                }
            ],
            "unlabeled": ["src/shop/shipping.py"],
        },
        "governance": {
            "ledger": {"path": "freeze_ledger.toml", "source": "base", "sha256": LEDGER_SHA},
            "fixture_lock": {"path": "fixtures.lock", "source": "base", "sha256": LOCK_SHA},
            "oracle_map": {"path": "oracle_map.json", "source": "base", "sha256": MAP_SHA},
        },
        # Written under the analyzing side's policy, which turned untested-caller off.
        "problems": [],
        "candidates": ["tests/test_shipping.py"],
    }


def freeze(fid: str, **extra: Any) -> Freeze:
    values: dict[str, Any] = {
        "id": fid,
        "test": "tests/test_other.py::test_x",
        "covers": ("src/other/**",),
        "owner": "team",
        "opened": TODAY - dt.timedelta(days=1),
        "expires": TODAY + dt.timedelta(days=3),
        "reason": "Timeout in the sandbox",
        **extra,
    }
    return Freeze(**values)


SERVER_LEDGER = [freeze("FRZ-201", blocks_symbols=("shop.tax:vat",))]


def problems(data: dict[str, Any] | None, **kwargs: Any) -> dict[str, dict[str, Any]]:
    kwargs.setdefault("freezes", SERVER_LEDGER)
    kwargs.setdefault("policy", Policy())
    found = analysis_problems(data, today=TODAY, **kwargs)
    return {p["code"]: p for p in found}


def test_each_finding_is_a_problem_with_the_default_severity() -> None:
    found = problems(analysis())
    assert {code: p["severity"] for code, p in found.items()} == {
        "untested-caller": "block",
        "contract-change": "warn",
        "fixture-lock": "block",
        "co-modified": "block",
        "unlabeled-path": "warn",
        "frozen-symbol": "block",
        "candidate-only": "warn",
    }
    assert found["untested-caller"]["items"] == ["shop.invoice:invoice_line"]
    assert found["contract-change"]["items"] == ["shop.pricing:apply_discount"]
    assert found["fixture-lock"]["items"] == ["tests/fixtures/new.json", "tests/fixtures/p.json"]
    assert found["co-modified"]["items"] == ["src/shop/pricing.py", "tests/fixtures/p.json"]
    assert found["candidate-only"]["items"] == ["shop.shipping:shipping_cost"]


def test_findings_the_analyzing_policy_turned_off_still_count() -> None:
    # The analysis lists no problems at all; its data still shows the untested caller.
    assert "untested-caller" in problems(analysis())


@pytest.mark.parametrize("severity", ["block", "warn", "off"])
def test_policy_decides_each_analysis_code(severity: str) -> None:
    policy = Policy(severities={"untested-caller": severity})
    found = problems(analysis(), policy=policy)
    if severity == "off":
        assert "untested-caller" not in found
    else:
        assert found["untested-caller"]["severity"] == severity


def test_frozen_symbol_is_judged_against_the_given_ledger_not_the_analysis() -> None:
    # The analysis says FRZ-OLD; the server's ledger says FRZ-201.
    assert problems(analysis())["frozen-symbol"]["items"] == ["shop.tax:vat"]
    assert "FRZ-201" in problems(analysis())["frozen-symbol"]["message"]
    # A ledger without the freeze: the analysis's own claim counts for nothing.
    assert "frozen-symbol" not in problems(analysis(), freezes=[])
    # An expired freeze blocks nothing.
    expired = freeze("FRZ-201", blocks_symbols=("vat",), expires=TODAY - dt.timedelta(days=1))
    assert "frozen-symbol" not in problems(analysis(), freezes=[expired])


def test_frozen_symbol_when_every_test_naming_it_is_frozen() -> None:
    # one frozen parameter case leaves the test's other cases running: not the whole test
    case = freeze("FRZ-8", test="tests/test_pricing.py::test_apply_discount[case-1]")
    assert "frozen-symbol" not in problems(analysis(), freezes=[case])
    only = freeze("FRZ-9", test="tests/test_pricing.py::test_apply_discount")
    found = problems(analysis(), freezes=[only])["frozen-symbol"]
    assert found["items"] == ["shop.pricing:apply_discount"]
    # A capped test list cannot show that every test is frozen.
    data = analysis()
    data["symbols"][1]["tests_count"] = 300
    assert "frozen-symbol" not in problems(data, freezes=[only])


def test_governance_versions_other_than_the_servers_are_a_mismatch() -> None:
    same = {"ledger": LEDGER_SHA, "fixture_lock": LOCK_SHA, "oracle_map": MAP_SHA}
    assert "analysis-mismatch" not in problems(analysis(), governance=same)
    other = {**same, "fixture_lock": "d" * 64}
    found = problems(analysis(), governance=other)["analysis-mismatch"]
    assert (found["severity"], found["items"]) == ("block", ["fixture_lock"])
    assert "aaaaaaaaaaaa != expected dddddddddddd" in found["message"]
    # The server holds a lock the analysis did not read at all.
    data = analysis()
    del data["governance"]["fixture_lock"]
    assert problems(data, governance=same)["analysis-mismatch"]["items"] == ["fixture_lock"]


def test_missing_analysis_is_a_problem_only_when_required() -> None:
    assert problems(None) == {}
    required = Policy(require_analysis=True)
    assert problems(None, policy=required)["analysis-missing"]["severity"] == "block"
    incomplete = {**analysis(), "complete": False, "incomplete_reason": "the budget ran out"}
    assert "budget" in problems(incomplete, policy=required)["analysis-missing"]["message"]
    assert "analysis-missing" not in problems(incomplete)


def test_section_has_the_caller_map() -> None:
    section = analysis_section(analysis(), freezes=SERVER_LEDGER, today=TODAY)
    assert section["status"] == "complete"
    assert section["class"] == "cross"
    assert section["counts"] == {
        "files": 2,
        "symbols": 4,
        "callers": 2,
        "untested_callers": 1,
        "tests": 4,
        "cone": 1,
    }
    by_symbol = {entry["symbol"]: entry for entry in section["symbols"]}
    assert by_symbol["shop.pricing:round_price"]["untested_callers"] == [
        "shop.invoice:invoice_line"
    ]
    assert by_symbol["shop.pricing:round_price"]["class"] == "contract"
    assert by_symbol["shop.tax:vat"]["frozen_by"] == ["FRZ-201"]
    assert by_symbol["shop.shipping:shipping_cost"]["candidate_tests"] == [
        "tests/test_shipping.py::test_shipping_cost"
    ]
    assert section["co_modified"][0]["feature"] == "pricing"


def test_section_is_capped_with_totals() -> None:
    data = analysis()
    callers = [f"shop.m{i:03d}:f" for i in range(30)]
    data["symbols"] = [
        symbol("shop.big", f"f{i:03d}", callers=callers, callers_count=250)
        for i in range(SYMBOLS_CAP + 7)
    ]
    section = analysis_section(data, freezes=[], today=TODAY)
    assert len(section["symbols"]) == SYMBOLS_CAP
    assert section["symbols_total"] == SYMBOLS_CAP + 7
    assert len(section["symbols"][0]["callers"]) == 20
    assert section["symbols"][0]["callers_count"] == 250


def test_without_analysis_the_section_says_so() -> None:
    assert analysis_section(None, freezes=[], today=TODAY)["status"] == "missing"


def test_report_is_independent_of_key_and_list_order() -> None:
    """The server stores the analysis as JSON that may come back reordered."""
    first = analysis()
    shuffled = copy.deepcopy(first)
    rng = random.Random(13)  # noqa: S311 - a shuffle, not a secret
    rng.shuffle(shuffled["symbols"])
    for item in shuffled["symbols"]:
        rng.shuffle(item["callers"])
    shuffled = json.loads(json.dumps(dict(reversed(list(shuffled.items())))))

    def report(data: dict[str, Any]) -> str:
        return report_json(
            compute_report(
                base=None, head=None, freezes=SERVER_LEDGER, changes=[], today=TODAY, analysis=data
            )
        )

    assert report(first) == report(shuffled)


def test_analysis_findings_decide_the_verdict() -> None:
    from freezedebt_ci.evidence import Evidence

    run = Evidence(0, {"tests/test_a.py::test_a": "passed"}, {})
    clean = compute_report(base=run, head=run, freezes=[], changes=[], today=TODAY)
    assert clean["verdict"] == "pass"
    blocked = compute_report(
        base=run, head=run, freezes=[], changes=[], today=TODAY, analysis=analysis()
    )
    assert blocked["verdict"] == "block"
    assert blocked["analysis"]["symbols_total"] == 4


def test_markdown_summary_has_a_short_analysis_block_and_a_folded_caller_map() -> None:
    from freezedebt_ci.evidence import Evidence
    from freezedebt_ci.summary import markdown_summary

    run = Evidence(0, {"tests/test_a.py::test_a": "passed"}, {})
    report = compute_report(
        base=run, head=run, freezes=SERVER_LEDGER, changes=[], today=TODAY, analysis=analysis()
    )
    text = markdown_summary(report, page_url="https://fd.example.com/r/shop/patches/3/")
    assert "[The report on Freeze Debt](https://fd.example.com/r/shop/patches/3/)" in text
    block = text[text.index("### Analysis") :]
    assert "Class **cross**: 2 files, 4 changed symbols, 2 callers (1 untested)" in block
    details = block[block.index("<details>") : block.index("</details>")]
    assert "<summary>Caller map (4 changed symbols)</summary>" in details
    row = next(line for line in details.splitlines() if "round_price" in line)
    assert "`shop.invoice:invoice_line` ⚠" in row
    assert "`shop.cart:cart_total`," in row
    vat = next(line for line in details.splitlines() if "shop.tax:vat" in line)
    assert vat.endswith("| FRZ-201 |")
    shipping = next(line for line in details.splitlines() if "shipping_cost" in line)
    assert "`tests/test_shipping.py::test_shipping_cost` ⚠" in shipping


def test_markdown_summary_says_when_there_is_no_analysis() -> None:
    from freezedebt_ci.summary import markdown_summary

    report = compute_report(base=None, head=None, freezes=[], changes=[], today=TODAY)
    assert "No analysis was sent with this patch." in markdown_summary(report)
    assert "Freeze Debt](" not in markdown_summary(report)


def test_an_upload_that_disagrees_with_the_judges_own_analysis_is_a_mismatch() -> None:
    own = analysis()
    same = json.loads(json.dumps(own))
    same["stats"] = {"seconds": 9.0}  # timings may differ
    assert "analysis-mismatch" not in problems(same, own=own)
    forged = analysis()
    forged["symbols"][0]["untested_callers"] = []
    forged["class"] = "local"
    found = problems(forged, own=own)
    assert found["analysis-mismatch"]["items"] == [
        "the changed symbols, their callers or tests",
        "the patch's class",
    ]
    # The judge's own analysis is the one judged.
    assert found["untested-caller"]["items"] == ["shop.invoice:invoice_line"]
    section = analysis_section(forged, freezes=[], today=TODAY, own=own)
    assert (section["source"], section["class"]) == ("server", "cross")


def test_a_failed_or_running_own_analysis() -> None:
    failed = problems(analysis(), own_error="commit abc is not in the remote")
    assert "commit abc" in failed["analysis-mismatch"]["message"]
    from freezedebt_ci.evidence import Evidence

    run = Evidence(0, {"tests/test_a.py::test_a": "passed"}, {})
    report = compute_report(
        base=run, head=run, freezes=[], changes=[], today=TODAY, own_analysis_pending=True
    )
    assert (report["status"], report["verdict"]) == ("pending", "pending")
    assert report["analysis"]["status"] == "pending"


def test_markdown_summary_of_a_pending_and_of_a_servers_analysis() -> None:
    from freezedebt_ci.summary import markdown_summary

    pending = compute_report(
        base=None, head=None, freezes=[], changes=[], today=TODAY, own_analysis_pending=True
    )
    assert "The server is still analyzing this patch itself." in markdown_summary(pending)
    own = compute_report(
        base=None, head=None, freezes=[], changes=[], today=TODAY, own_analysis=analysis()
    )
    assert "Analyzed by the server itself." in markdown_summary(own)
