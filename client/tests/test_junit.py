"""JUnit XML as a run (SPEC 4.2): node ids, outcomes, and hostile or malformed documents."""

from __future__ import annotations

import gzip
import time

import pytest

from freezedebt_ci.errors import InputError
from freezedebt_ci.evidence import parse_evidence
from freezedebt_ci.junit import generic_nodeid, parse_junit, pytest_nodeid

PYTEST_JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites>
  <testsuite name="pytest" errors="0" failures="1" skipped="2" tests="6" time="1.2">
    <testcase classname="tests.test_pricing" name="test_total" file="tests/test_pricing.py"
              line="3" time="0.01"/>
    <testcase classname="tests.test_pricing.TestFee" name="test_min" time="0.02"/>
    <testcase classname="tests.test_pricing" name="test_boundary" time="0.00">
      <skipped type="pytest.skip" message="FRZ-014 frozen until 2026-11-13">skip</skipped>
    </testcase>
    <testcase classname="tests.test_pricing" name="test_known_bug" time="0.00">
      <skipped type="pytest.xfail" message="bug 12"/>
    </testcase>
    <testcase classname="tests.test_pricing" name="test_fee[1-2]" time="0.03">
      <failure message="assert 1 == 2">def test_fee():
&gt;       assert 1 == 2
E       assert 1 == 2

tests/test_pricing.py:9: AssertionError</failure>
    </testcase>
    <testcase classname="tests.test_db" name="test_conn" time="0.5">
      <error message="failed on setup with ConnectionError">ConnectionError: refused</error>
    </testcase>
  </testsuite>
</testsuites>
"""


def bad(data: bytes, **limits: int) -> InputError:
    with pytest.raises(InputError) as info:
        parse_junit(data, source="junit.xml", **limits)
    return info.value


def test_pytest_junit_maps_to_node_ids_and_buckets() -> None:
    evidence = parse_junit(PYTEST_JUNIT)
    assert evidence.outcomes == {
        "tests/test_pricing.py::test_total": "passed",
        "tests/test_pricing.py::TestFee::test_min": "passed",
        "tests/test_pricing.py::test_boundary": "skipped",
        "tests/test_pricing.py::test_known_bug": "xfail",
        "tests/test_pricing.py::test_fee[1-2]": "failed",
        "tests/test_db.py::test_conn": "failed",
    }
    assert evidence.exit == 1


def test_junit_xfail_is_never_skipped() -> None:
    buckets = parse_junit(PYTEST_JUNIT).buckets()
    assert "tests/test_pricing.py::test_known_bug" in buckets.xfail
    assert "tests/test_pricing.py::test_known_bug" not in buckets.skipped


def test_junit_failure_text_and_duration_become_extras() -> None:
    extras = parse_junit(PYTEST_JUNIT).extras
    longrepr = extras["tests/test_pricing.py::test_fee[1-2]"]["longrepr"]
    assert longrepr.startswith("assert 1 == 2")
    assert "tests/test_pricing.py:9: AssertionError" in longrepr
    assert extras["tests/test_pricing.py::test_total"]["duration"] == pytest.approx(0.01)


def test_all_passing_junit_has_exit_zero() -> None:
    data = b'<testsuite name="pytest"><testcase classname="tests.test_a" name="t"/></testsuite>'
    evidence = parse_junit(data)
    assert evidence.exit == 0
    assert evidence.outcomes == {"tests/test_a.py::t": "passed"}


def test_parse_evidence_detects_junit_by_content() -> None:
    assert parse_evidence(PYTEST_JUNIT).outcomes == parse_junit(PYTEST_JUNIT).outcomes
    assert (
        parse_evidence(gzip.compress(PYTEST_JUNIT)).outcomes == parse_junit(PYTEST_JUNIT).outcomes
    )


def test_junit_with_utf8_bom_is_read_as_junit() -> None:
    assert (
        parse_evidence(b"\xef\xbb\xbf" + PYTEST_JUNIT).outcomes
        == parse_junit(PYTEST_JUNIT).outcomes
    )


def test_other_runners_get_file_classname_name() -> None:
    data = b"""<testsuites><testsuite name="jest">
      <testcase classname="cart totals" name="adds tax" file="web/cart.test.js"/>
      <testcase classname="cart totals" name="rounds"><skipped/></testcase>
    </testsuite></testsuites>"""
    assert parse_junit(data).outcomes == {
        "web/cart.test.js::cart totals::adds tax": "passed",
        "cart totals::rounds": "skipped",
    }


def test_pytest_nodeid_mapping() -> None:
    assert pytest_nodeid("tests.test_a.TestX", "test_y", None) == "tests/test_a.py::TestX::test_y"
    assert pytest_nodeid("tests.test_a.TestX.TestInner", "t", None) == (
        "tests/test_a.py::TestX::TestInner::t"
    )
    assert pytest_nodeid("tests.test_a.TestX", "t", "tests/test_a.py") == (
        "tests/test_a.py::TestX::t"
    )
    assert pytest_nodeid("test_root", "t", None) == "test_root.py::t"
    assert generic_nodeid("", "t", None) == "t"


def test_last_testcase_of_a_rerun_decides() -> None:
    data = b"""<testsuite name="pytest">
      <testcase classname="tests.test_a" name="t"><failure message="x"/></testcase>
      <testcase classname="tests.test_a" name="t"/>
    </testsuite>"""
    assert parse_junit(data).outcomes == {"tests/test_a.py::t": "passed"}
    assert "tests/test_a.py::t" not in parse_junit(data).extras or (
        "longrepr" not in parse_junit(data).extras["tests/test_a.py::t"]
    )


def test_failure_wins_over_a_later_skipped_element() -> None:
    data = b"""<testsuite name="pytest"><testcase classname="tests.test_a" name="t">
      <error message="teardown failed"/><skipped message="x"/></testcase></testsuite>"""
    assert parse_junit(data).outcomes == {"tests/test_a.py::t": "failed"}


def test_billion_laughs_is_refused_quickly() -> None:
    lol = b'<!ENTITY lol0 "lol">' + b"".join(
        b'<!ENTITY lol%d "%s">' % (i, b"&lol%d;" % (i - 1) * 10) for i in range(1, 10)
    )
    data = (
        b'<?xml version="1.0"?><!DOCTYPE testsuite [' + lol + b"]>"
        b'<testsuite name="pytest"><testcase classname="a" name="&lol9;"/></testsuite>'
    )
    started = time.perf_counter()
    error = bad(data)
    assert time.perf_counter() - started < 1.0
    assert error.source == "junit.xml"
    assert error.problems[0].where == "line 1"
    assert "document type" in error.problems[0].message


def test_external_entity_is_refused() -> None:
    data = (
        b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<testsuite><testcase classname="a" name="&x;"/></testsuite>'
    )
    assert "document type" in bad(data).problems[0].message


def test_undeclared_entity_is_invalid_xml() -> None:
    error = bad(b'<testsuite><testcase classname="a" name="&x;"/></testsuite>')
    assert error.problems[0].where.startswith("line 1 column ")
    assert "invalid XML" in error.problems[0].message


def test_wrong_root_is_refused() -> None:
    error = bad(b'<?xml version="1.0"?>\n<html><body/></html>')
    assert error.problems[0].where == "line 2"
    assert "expected <testsuites> or <testsuite>" in error.problems[0].message
    assert "<html>" in error.problems[0].message


def test_truncated_xml_is_refused_with_its_place() -> None:
    error = bad(PYTEST_JUNIT[:300])
    assert error.problems[0].where.startswith("line ")
    assert "invalid XML" in error.problems[0].message


def test_testcase_without_name_is_refused() -> None:
    error = bad(b'<testsuite>\n<testcase classname="a"/></testsuite>')
    assert error.problems[0].where == "line 2"
    assert "name" in error.problems[0].message


def test_too_many_testcases_are_refused() -> None:
    cases = b"".join(b'<testcase classname="a" name="t%d"/>' % i for i in range(5))
    data = b"<testsuite>" + cases + b"</testsuite>"
    assert len(parse_junit(data, max_records=5).outcomes) == 5
    assert "more than 4 test cases" in bad(data, max_records=4).problems[0].message


def test_nodeid_too_long_is_refused() -> None:
    data = b'<testsuite><testcase classname="a" name="' + b"x" * 300 + b'"/></testsuite>'
    assert "longer than 100" in bad(data, max_nodeid_length=100).problems[0].message


def test_invalid_utf8_in_junit_is_refused() -> None:
    error = bad(b'<testsuite><testcase classname="a" name="caf\xe9"/></testsuite>')
    assert "invalid XML" in error.problems[0].message


def suite(*cases: str) -> bytes:
    return ('<testsuite name="pytest">' + "".join(cases) + "</testsuite>").encode()


def test_the_results_of_one_testcase_combine_failed_over_skipped_over_xfail() -> None:
    # pytest writes each failed or skipped subtest of a test into the test's one testcase
    data = suite(
        '<testcase classname="t" name="skips"><skipped type="pytest.skip" message="a"/>'
        '<skipped type="pytest.xfail" message="b"/></testcase>',
        '<testcase classname="t" name="xfails"><skipped type="pytest.xfail" message="b"/>'
        "</testcase>",
        '<testcase classname="t" name="fails"><skipped type="pytest.skip" message="a"/>'
        '<failure message="x"/><skipped type="pytest.xfail" message="b"/></testcase>',
    )
    assert parse_junit(data).outcomes == {
        "t.py::skips": "skipped",
        "t.py::xfails": "xfail",
        "t.py::fails": "failed",
    }


def test_the_plugins_xpass_property_makes_a_pass_an_xfail() -> None:
    data = suite(
        '<testcase classname="t" name="xpass"><properties>'
        '<property name="freezedebt.xpassed" value="true"/></properties></testcase>',
        '<testcase classname="t" name="other"><properties>'
        '<property name="owner" value="me"/></properties></testcase>',
        '<testcase classname="t" name="strict"><failure message="[XPASS(strict)]"/>'
        '<properties><property name="freezedebt.xpassed" value="true"/></properties>'
        "</testcase>",
    )
    assert parse_junit(data).outcomes == {
        "t.py::xpass": "xfail",
        "t.py::other": "passed",
        "t.py::strict": "failed",
    }


def test_a_module_pytest_could_not_collect_gets_its_node_id() -> None:
    data = suite(
        '<testcase classname="" name="pkg.sub.test_broken"><error message="collection failure"/>'
        "</testcase>"
    )
    assert parse_junit(data).outcomes == {"pkg/sub/test_broken.py": "failed"}
