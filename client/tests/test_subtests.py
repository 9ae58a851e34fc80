"""One real suite with subtests, reruns, xfail/xpass and setup errors, run by pytest (with
pytest-rerunfailures) through the plugin and through pytest's own JUnit XML at once: both
files must give every node id the same bucket, the exit status must be explained, and
pytest's own count of failed tests must be the evidence's."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from freezedebt_ci.evidence import read_evidence
from freezedebt_ci.report import compute_report

pytest.importorskip("pytest_rerunfailures")

SUITE = {
    "test_subtests": """
import unittest

import pytest


class TestNumbers(unittest.TestCase):
    def test_each_subtest_fails_alone(self):
        for n in range(4):
            with self.subTest(n=n):
                self.assertNotEqual(n, 2)

    def test_all_subtests_pass(self):
        for n in range(3):
            with self.subTest(n=n):
                self.assertGreaterEqual(n, 0)


def test_fixture_subtests_fail_two(subtests):
    for n in range(5):
        with subtests.test(msg="odd", n=n):
            assert n % 2 == 0 or n == 1


def test_fixture_subtests_pass(subtests):
    for n in range(3):
        with subtests.test(n=n):
            assert n < 3


def test_a_subtest_skips(subtests):
    with subtests.test(msg="runs"):
        pass
    with subtests.test(msg="no service"):
        pytest.skip("no service here")


def test_a_subtest_xfails(subtests):
    with subtests.test(msg="known"):
        pytest.xfail("known bug")


def test_plain():
    pass
""",
    "test_reruns": """
from pathlib import Path

import pytest


def attempt(name):
    counter = Path(name)
    seen = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(seen + 1))
    return seen


@pytest.mark.flaky(reruns=2)
def test_flaky_passes_second():
    assert attempt("flaky.count") >= 1


@pytest.mark.flaky(reruns=1)
def test_always_fails():
    assert False, "still broken"


@pytest.mark.flaky(reruns=2)
def test_flaky_subtest_passes_second(subtests):
    seen = attempt("flaky-subtest.count")
    with subtests.test(msg="first"):
        assert seen >= 1
    with subtests.test(msg="second"):
        pass


@pytest.mark.flaky(reruns=1)
def test_subtest_fails_every_attempt(subtests):
    with subtests.test(msg="never"):
        assert False, "never passes"
""",
    "test_kinds": """
import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup boom")


def test_setup_error(broken_setup):
    pass


def test_xfail_call():
    pytest.xfail("not yet")


@pytest.mark.xfail(reason="known")
def test_xfail_mark():
    assert False


@pytest.mark.xfail(reason="known")
def test_xpass():
    pass


@pytest.mark.xfail(reason="known", strict=True)
def test_xpass_strict():
    pass


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass
""",
    "test_broken_import": "import no_such_module_anywhere\n\n\ndef test_never():\n    pass\n",
}

S, R, K = "test_subtests.py::", "test_reruns.py::", "test_kinds.py::"

EXPECTED = {
    S + "TestNumbers::test_each_subtest_fails_alone": "failed",
    S + "TestNumbers::test_all_subtests_pass": "passed",
    S + "test_fixture_subtests_fail_two": "failed",
    S + "test_fixture_subtests_pass": "passed",
    S + "test_a_subtest_skips": "skipped",
    S + "test_a_subtest_xfails": "xfail",
    S + "test_plain": "passed",
    R + "test_flaky_passes_second": "passed",
    R + "test_always_fails": "failed",
    R + "test_flaky_subtest_passes_second": "passed",
    R + "test_subtest_fails_every_attempt": "failed",
    K + "test_setup_error": "failed",
    K + "test_xfail_call": "xfail",
    K + "test_xfail_mark": "xfail",
    K + "test_xpass": "xfail",
    K + "test_xpass_strict": "failed",
    K + "test_skipped": "skipped",
    "test_broken_import.py": "failed",
}


@pytest.fixture
def ran(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    for name in ("EVIDENCE_OUT", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(**SUITE)
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        "--evidence-out",
        "evidence.json",
        "--junitxml",
        "junit.xml",
        "-rA",
    )


def records(path: Path) -> list[dict[str, Any]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    found = document["records"]
    assert isinstance(found, list)
    return found


def test_plugin_and_junit_give_the_same_bucket_to_every_node_id(
    pytester: pytest.Pytester, ran: pytest.RunResult
) -> None:
    assert ran.ret == 1
    from_plugin = read_evidence(pytester.path / "evidence.json")
    from_junit = read_evidence(pytester.path / "junit.xml")
    assert from_plugin.outcomes == EXPECTED
    assert from_junit.outcomes == EXPECTED
    assert from_plugin.buckets() == from_junit.buckets()
    assert from_plugin.exit == from_junit.exit == 1


def test_every_failure_pytest_reports_is_a_failed_node_id(
    pytester: pytest.Pytester, ran: pytest.RunResult
) -> None:
    # pytest's short summary names every failed node id, a subtest's under its test's
    failed = {
        re.sub(r"^(?:SUB)?(?:FAILED|ERROR)(?:\[[^]]*\])?(?: ?\([^)]*\))? (\S+).*$", r"\1", line)
        for line in ran.outlines
        if re.match(r"^(SUB)?(FAILED|ERROR)", line)
    }
    assert failed == {nodeid for nodeid, bucket in EXPECTED.items() if bucket == "failed"}
    assert read_evidence(pytester.path / "evidence.json").buckets().failed == failed


def test_the_plugin_marks_subtest_records_with_their_message_and_parameters(
    pytester: pytest.Pytester, ran: pytest.RunResult
) -> None:
    found = records(pytester.path / "evidence.json")
    unittest_case = [
        r for r in found if r["nodeid"] == S + "TestNumbers::test_each_subtest_fails_alone"
    ]
    assert [(r.get("subtest"), r["outcome"]) for r in unittest_case] == [
        ({"msg": None, "params": {"n": "0"}}, "passed"),
        ({"msg": None, "params": {"n": "1"}}, "passed"),
        ({"msg": None, "params": {"n": "2"}}, "failed"),
        ({"msg": None, "params": {"n": "3"}}, "passed"),
        # the test's own report: pytest passes it, its failed subtest fails it
        (None, "passed"),
    ]
    fixture_case = [r for r in found if r["nodeid"] == S + "test_fixture_subtests_fail_two"]
    marks = [r["subtest"] for r in fixture_case if "subtest" in r]
    assert marks == [{"msg": "odd", "params": {"n": str(n)}} for n in range(5)]
    failing = [r for r in fixture_case if r.get("subtest") and r["outcome"] == "failed"]
    assert [r["subtest"]["params"]["n"] for r in failing] == ["3"]
    assert "assert" in failing[0]["longrepr"]
    # the failure text the evidence keeps for the node id is its first failing subtest's
    extras = read_evidence(pytester.path / "evidence.json").extras
    assert extras[S + "TestNumbers::test_each_subtest_fails_alone"]["subtest"] == {
        "msg": None,
        "params": {"n": "2"},
    }


def test_reruns_keep_their_meaning_with_and_without_subtests(
    pytester: pytest.Pytester, ran: pytest.RunResult
) -> None:
    found = records(pytester.path / "evidence.json")
    flaky = [r for r in found if r["nodeid"] == R + "test_flaky_subtest_passes_second"]
    # first attempt: a failed subtest, then the test's own report as a rerun; second: all pass
    assert [(r.get("subtest", {}).get("msg"), r["outcome"]) for r in flaky] == [
        ("first", "failed"),
        ("second", "passed"),
        (None, "failed"),
        ("first", "passed"),
        ("second", "passed"),
        (None, "passed"),
    ]
    assert flaky[2]["reported_outcome"] == "rerun"
    evidence = read_evidence(pytester.path / "evidence.json")
    assert evidence.outcomes[R + "test_flaky_subtest_passes_second"] == "passed"
    assert evidence.outcomes[R + "test_subtest_fails_every_attempt"] == "failed"


def test_a_report_on_the_run_counts_what_pytest_counted(
    pytester: pytest.Pytester, ran: pytest.RunResult
) -> None:
    import datetime as dt

    head = read_evidence(pytester.path / "evidence.json")
    report = compute_report(base=head, head=head, freezes=[], changes=[], today=dt.date(2030, 1, 1))
    (problem,) = [p for p in report["problems"] if p["code"] == "head-failed"]
    assert problem["message"] == (
        "the head run exited with status 1 (6 failed tests, 1 file that could not be collected)"
    )
    assert report["figures"]["head"]["failed"] == 7


def test_under_xdist_the_buckets_are_the_same(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("EVIDENCE_OUT", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(**SUITE)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--continue-on-collection-errors",
        "--evidence-out",
        "evidence.json",
        "--junitxml",
        "junit.xml",
    )
    assert result.ret == 1
    assert read_evidence(pytester.path / "evidence.json").outcomes == EXPECTED
    assert read_evidence(pytester.path / "junit.xml").outcomes == EXPECTED
