"""Evidence JSON: buckets (SPEC 4.1, 5) and the reader's handling of malformed input."""

from __future__ import annotations

import gzip
import hashlib
import json
import time
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest

from freezedebt_ci.compression import gunzip_limited
from freezedebt_ci.errors import MAX_PROBLEMS, InputError
from freezedebt_ci.evidence import (
    Evidence,
    evidence_from_json,
    evidence_from_outcomes,
    parse_evidence,
    read_evidence,
)


def rec(
    nodeid: str, outcome: str, when: str = "call", xfail: object = False, **extra: Any
) -> dict[str, Any]:
    return {"nodeid": nodeid, "when": when, "outcome": outcome, "xfail": xfail, **extra}


def run(*records: dict[str, Any], exit: int = 0) -> Evidence:
    return evidence_from_json({"exit": exit, "records": list(records)})


def doc(*records: object, exit: int = 0, **top: Any) -> bytes:
    return json.dumps({"exit": exit, "records": list(records), **top}).encode()


def bad(data: bytes, **limits: Any) -> InputError:
    with pytest.raises(InputError) as info:
        parse_evidence(data, source="head.json", **limits)
    return info.value


# --- buckets --------------------------------------------------------------------------------


def test_minimal_conftest_form_is_accepted_as_is() -> None:
    data = (
        b'{"exit": 0, "records": [{"nodeid": "tests/test_a.py::test_x", "when": "call",\n'
        b'  "outcome": "passed", "xfail": false}]}'
    )
    evidence = parse_evidence(data)
    assert evidence.exit == 0
    assert evidence.outcomes == {"tests/test_a.py::test_x": "passed"}


def test_each_outcome_lands_in_its_bucket() -> None:
    evidence = run(
        rec("t.py::p", "passed"),
        rec("t.py::f", "failed"),
        rec("t.py::s", "skipped", when="setup"),
        rec("t.py::x", "skipped", xfail=True),
    )
    buckets = evidence.buckets()
    assert buckets.passed == {"t.py::p"}
    assert buckets.failed == {"t.py::f"}
    assert buckets.skipped == {"t.py::s"}
    assert buckets.xfail == {"t.py::x"}
    assert evidence.counts() == {"passed": 1, "failed": 1, "skipped": 1, "xfail": 1}
    assert buckets.counts() == evidence.counts()


def test_last_record_of_a_rerun_node_decides_its_bucket() -> None:
    evidence = run(rec("t.py::a", "failed"), rec("t.py::a", "passed"))
    assert evidence.outcomes == {"t.py::a": "passed"}
    evidence = run(rec("t.py::a", "passed"), rec("t.py::a", "failed"))
    assert evidence.outcomes == {"t.py::a": "failed"}
    evidence = run(rec("t.py::a", "passed"), rec("t.py::a", "skipped", when="setup"))
    assert evidence.outcomes == {"t.py::a": "skipped"}


def test_failed_setup_counts_as_failure() -> None:
    evidence = run(rec("t.py::a", "failed", when="setup"))
    assert evidence.buckets().failed == {"t.py::a"}


def test_failed_teardown_after_passed_call_counts_as_failure() -> None:
    evidence = run(rec("t.py::a", "passed"), rec("t.py::a", "failed", when="teardown"))
    assert evidence.outcomes == {"t.py::a": "failed"}


def test_passing_teardown_after_failed_call_does_not_turn_it_passed() -> None:
    evidence = run(
        rec("t.py::a", "passed", when="setup"),
        rec("t.py::a", "failed"),
        rec("t.py::a", "passed", when="teardown"),
    )
    assert evidence.outcomes == {"t.py::a": "failed"}


def test_passing_setup_alone_puts_node_in_no_bucket() -> None:
    evidence = run(rec("t.py::a", "passed", when="setup"))
    assert evidence.outcomes == {}


def test_setup_failure_then_passing_teardown_stays_failed() -> None:
    evidence = run(rec("t.py::a", "failed", when="setup"), rec("t.py::a", "passed", "teardown"))
    assert evidence.outcomes == {"t.py::a": "failed"}


def test_xfailed_test_is_xfail_never_skipped() -> None:
    buckets = run(rec("t.py::a", "skipped", xfail=True)).buckets()
    assert buckets.xfail == {"t.py::a"}
    assert buckets.skipped == frozenset()


def test_non_strict_xpass_is_xfail_not_passed() -> None:
    buckets = run(rec("t.py::a", "passed", xfail=True)).buckets()
    assert buckets.xfail == {"t.py::a"}
    assert buckets.passed == frozenset()


def test_strict_xpass_counts_as_failed() -> None:
    # pytest reports a strict xpass as outcome "failed"; some collectors keep the xfail flag
    buckets = run(rec("t.py::a", "failed", xfail=True), rec("t.py::b", "failed")).buckets()
    assert buckets.failed == {"t.py::a", "t.py::b"}
    assert buckets.xfail == frozenset()


def test_unknown_fields_are_kept_and_ignored() -> None:
    evidence = evidence_from_json(
        {
            "exit": 0,
            "records": [rec("t.py::a", "passed", worker="gw1")],
            "meta": {"sha": "abc", "property_lane": "pinned"},
            "ci": {"provider": "x"},
        }
    )
    assert evidence.outcomes == {"t.py::a": "passed"}
    assert evidence.meta["property_lane"] == "pinned"


def test_extras_come_from_the_deciding_record() -> None:
    evidence = run(
        rec("t.py::a", "failed", longrepr="boom", duration=0.5),
        rec("t.py::a", "passed"),
        rec("t.py::b", "skipped", when="setup", freeze="FRZ-1"),
    )
    assert "t.py::a" not in evidence.extras
    assert evidence.extras["t.py::b"]["freeze"] == "FRZ-1"


def test_to_json_round_trips_buckets() -> None:
    evidence = run(
        rec("t.py::p", "passed"),
        rec("t.py::f", "failed", longrepr="E assert 1 == 2"),
        rec("t.py::s", "skipped", when="setup"),
        rec("t.py::x", "skipped", xfail=True),
        exit=1,
    )
    again = evidence_from_json(json.loads(json.dumps(evidence.to_json())))
    assert again.outcomes == evidence.outcomes
    assert again.exit == 1
    assert again.extras["t.py::f"]["longrepr"] == "E assert 1 == 2"


def test_evidence_from_outcomes_rejects_unknown_bucket() -> None:
    assert evidence_from_outcomes([("a", "xfail")]).outcomes == {"a": "xfail"}
    with pytest.raises(ValueError, match="flaky"):
        evidence_from_outcomes([("a", "flaky")])


# --- malformed input: each error names the source, the place and what was expected ---------


@pytest.mark.parametrize("cut", [1, 2, 7, 10, 20, 40])
def test_truncated_json_names_line_and_says_truncated(cut: int) -> None:
    data = doc(rec("t.py::a", "passed"))[:-cut]
    error = bad(data)
    assert error.source == "head.json"
    assert error.problems[0].where.startswith("line 1 column ")
    assert "invalid JSON: Expecting" in error.problems[0].message or "Unterminated" in str(error)
    assert "truncated" in error.problems[0].message
    assert str(error).startswith("head.json: line 1 column ")


def test_extra_data_after_json_is_not_called_truncated() -> None:
    error = bad(doc() + b" x")
    assert "Extra data" in error.problems[0].message
    assert "truncated" not in error.problems[0].message


def test_json_syntax_error_names_line_and_column() -> None:
    error = bad(b'{"exit": 0,\n "records": [\n  {"nodeid": oops}]}')
    assert error.problems[0].where == "line 3 column 14"
    assert "truncated" not in error.problems[0].message


def test_top_level_not_an_object_is_refused() -> None:
    error = bad(b"[1, 2]")
    assert error.problems[0].where == "$"
    assert "object" in error.problems[0].message


def test_exit_as_string_is_refused_at_its_path() -> None:
    error = bad(json.dumps({"exit": "0", "records": []}).encode())
    assert [(p.where, "integer" in p.message) for p in error.problems] == [("$.exit", True)]


def test_exit_as_boolean_is_refused() -> None:
    error = bad(json.dumps({"exit": False, "records": []}).encode())
    assert error.problems[0].where == "$.exit"


def test_records_not_a_list_is_refused() -> None:
    error = bad(json.dumps({"exit": 0, "records": {"a": 1}}).encode())
    assert error.problems[-1].where == "$.records"
    assert "list" in error.problems[-1].message


def test_missing_records_is_refused() -> None:
    error = bad(b'{"exit": 0}')
    assert error.problems[0].where == "$.records"


def test_wrong_format_tag_is_refused() -> None:
    error = bad(doc(format="freezedebt-evidence/9"))
    assert error.problems[0].where == "$.format"
    assert "freezedebt-evidence/1" in error.problems[0].message


def test_meta_not_an_object_is_refused() -> None:
    error = bad(doc(meta=["x"]))
    assert error.problems[0].where == "$.meta"


def test_unknown_outcome_is_refused_at_its_record() -> None:
    error = bad(doc(rec("t.py::a", "passed"), rec("t.py::b", "error")))
    problem = error.problems[0]
    assert problem.where == "$.records[1].outcome"
    assert "passed, failed or skipped" in problem.message and "'error'" in problem.message


def test_xfail_as_string_is_refused() -> None:
    error = bad(doc(rec("t.py::a", "skipped", xfail="true")))
    assert error.problems[0].where == "$.records[0].xfail"
    assert "true or false" in error.problems[0].message


def test_unknown_phase_is_refused() -> None:
    error = bad(doc(rec("t.py::a", "passed", when="collect")))
    assert error.problems[0].where == "$.records[0].when"


def test_record_not_an_object_is_refused() -> None:
    error = bad(doc("t.py::a"))
    assert error.problems[0].where == "$.records[0]"


@pytest.mark.parametrize("nodeid", ["", None, 7])
def test_empty_or_non_string_nodeid_is_refused(nodeid: object) -> None:
    error = bad(doc({"nodeid": nodeid, "when": "call", "outcome": "passed", "xfail": False}))
    assert error.problems[0].where == "$.records[0].nodeid"
    assert "non-empty string" in error.problems[0].message


def test_nodeid_over_the_length_limit_is_refused() -> None:
    data = doc(rec("t.py::" + "a" * 100, "passed"))
    error = bad(data, max_nodeid_length=50)
    assert error.problems[0].where == "$.records[0].nodeid"
    assert "50" in error.problems[0].message
    assert parse_evidence(data, max_nodeid_length=106).outcomes


def test_nodeid_default_limit_is_4_kib() -> None:
    assert parse_evidence(doc(rec("a" * 4096, "passed"))).outcomes
    assert bad(doc(rec("a" * 4097, "passed"))).problems[0].where == "$.records[0].nodeid"


def test_too_many_records_are_refused_by_the_limit_argument() -> None:
    data = doc(*(rec(f"t.py::t{i}", "passed") for i in range(11)))
    error = bad(data, max_records=10)
    assert error.problems[0].where == "$.records"
    assert "11 records exceed the limit of 10" in error.problems[0].message
    assert len(parse_evidence(data, max_records=11).outcomes) == 11


def test_many_bad_records_are_all_reported_up_to_the_cap() -> None:
    error = bad(doc(*(rec(f"t.py::t{i}", "boom") for i in range(200))))
    assert len(error.problems) == MAX_PROBLEMS
    assert error.problems[3].where == "$.records[3].outcome"


def test_invalid_utf8_names_the_byte() -> None:
    data = b'{"exit": 0, "records": [{"nodeid": "t.py::caf\xe9", "outcome": "passed"}]}'
    error = bad(data)
    position = data.index(b"\xe9")
    assert error.problems[0].where == f"byte {position}"
    assert "UTF-8" in error.problems[0].message


def test_utf8_bom_is_accepted() -> None:
    assert parse_evidence(b"\xef\xbb\xbf" + doc(rec("t.py::a", "passed"))).outcomes


def test_deeply_nested_json_is_refused_cleanly() -> None:
    error = bad(b'{"exit": 0, "records": [], "meta": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    assert error.source == "head.json"


# --- gzip -----------------------------------------------------------------------------------


def test_gzip_evidence_is_read_transparently() -> None:
    data = doc(rec("t.py::a", "passed"))
    assert parse_evidence(gzip.compress(data)).outcomes == {"t.py::a": "passed"}


def test_concatenated_gzip_members_are_read() -> None:
    data = doc(rec("t.py::a", "passed"))
    packed = gzip.compress(data[:10]) + gzip.compress(data[10:])
    assert parse_evidence(packed).outcomes == {"t.py::a": "passed"}


def test_large_gzip_members_padded_with_nuls_are_read_whole() -> None:
    # Members larger than one slice of input, the first ending inside a slice, NUL padding
    # between them (as some tools write).
    names = (hashlib.sha256(str(i).encode()).hexdigest() for i in range(20_000))
    data = doc(*(rec(f"t.py::test_{name}", "passed") for name in names))
    first = gzip.compress(data[:300_001], compresslevel=1)
    second = gzip.compress(data[300_001:], compresslevel=1)
    assert len(first) > 1 << 16
    packed = first + b"\x00" * 7 + second
    assert gunzip_limited(packed, source="x", limit=len(data)) == data
    with pytest.raises(InputError, match="more than"):
        gunzip_limited(packed, source="x", limit=len(data) - 1)


def test_gzip_garbage_is_refused() -> None:
    error = bad(b"\x1f\x8b" + b"this is not deflate data" * 4)
    assert error.source == "head.json"
    assert "gzip" in error.problems[0].message


def test_truncated_gzip_is_refused() -> None:
    packed = gzip.compress(doc(*(rec(f"t.py::t{i}", "passed") for i in range(500))))
    error = bad(packed[: len(packed) // 2])
    assert "truncated" in error.problems[0].message


def test_trailing_bytes_after_gzip_are_refused() -> None:
    error = bad(gzip.compress(doc()) + b"garbage")
    assert "trailing" in error.problems[0].message


@pytest.fixture(scope="module")
def zeros_bomb() -> bytes:
    """200 MB of zeros, gzip-compressed (about 200 KB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    parts = [packer.compress(block) for _ in range(200)]
    parts.append(packer.flush())
    return b"".join(parts)


def test_gzip_bomb_over_the_limit_is_refused_without_inflating_it(zeros_bomb: bytes) -> None:
    assert len(zeros_bomb) < 1 << 20
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(InputError) as info:
            parse_evidence(zeros_bomb, source="bomb.json.gz", max_decompressed=1 << 20)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.source == "bomb.json.gz"
    assert f"more than {1 << 20} bytes" in info.value.problems[0].message
    assert elapsed < 2.0
    assert peak < 16 << 20  # nowhere near the 200 MB it would inflate to


def test_gzip_exactly_at_the_limit_is_accepted() -> None:
    data = doc(rec("t.py::a", "passed"))
    assert parse_evidence(gzip.compress(data), max_decompressed=len(data)).outcomes
    with pytest.raises(InputError):
        parse_evidence(gzip.compress(data), max_decompressed=len(data) - 1)


def test_read_evidence_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    path.write_bytes(b'{"exit": "1", "records": []}')
    with pytest.raises(InputError) as info:
        read_evidence(path)
    assert info.value.source == str(path)
    assert str(info.value).startswith(f"{path}: $.exit: ")


def test_read_evidence_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read_evidence(tmp_path / "nope.json")
    assert "cannot be read" in str(info.value)


def test_read_evidence_passes_limits(tmp_path: Path) -> None:
    path = tmp_path / "head.json.gz"
    path.write_bytes(gzip.compress(doc(rec("t.py::a", "passed"), rec("t.py::b", "passed"))))
    with pytest.raises(InputError, match="limit of 1"):
        read_evidence(path, max_records=1)
    with pytest.raises(InputError, match="decompresses"):
        read_evidence(path, max_decompressed=10)


# --- subtests -----------------------------------------------------------------------------


def sub(nodeid: str, outcome: str, n: int, xfail: bool = False, **extra: Any) -> dict[str, Any]:
    return rec(
        nodeid, outcome, xfail=xfail, subtest={"msg": None, "params": {"n": str(n)}}, **extra
    )


def test_a_failed_subtest_fails_its_node_id_whatever_the_test_reports() -> None:
    evidence = run(
        sub("t.py::a", "passed", 0),
        sub("t.py::a", "failed", 1, longrepr="AssertionError: 1", signature="s1"),
        sub("t.py::a", "failed", 2, longrepr="AssertionError: 2", signature="s2"),
        rec("t.py::a", "passed", duration=0.1),
        rec("t.py::b", "passed"),
    )
    assert evidence.outcomes == {"t.py::a": "failed", "t.py::b": "passed"}
    assert evidence.extras["t.py::a"]["longrepr"] == "AssertionError: 1"


def test_subtests_combine_failed_over_skipped_over_xfail_over_passed() -> None:
    evidence = run(
        sub("t.py::skip", "skipped", 0),
        sub("t.py::skip", "skipped", 1, xfail=True),
        rec("t.py::skip", "passed"),
        sub("t.py::xf", "skipped", 0, xfail=True),
        sub("t.py::xf", "passed", 1),
        rec("t.py::xf", "passed"),
        sub("t.py::ok", "passed", 0),
        rec("t.py::ok", "passed"),
        sub("t.py::own", "passed", 0),
        rec("t.py::own", "failed"),
    )
    assert evidence.outcomes == {
        "t.py::skip": "skipped",
        "t.py::xf": "xfail",
        "t.py::ok": "passed",
        "t.py::own": "failed",
    }


def test_a_rerun_after_failed_subtests_decides_again() -> None:
    evidence = run(
        sub("t.py::a", "failed", 0),
        rec("t.py::a", "failed", reported_outcome="rerun"),
        sub("t.py::a", "passed", 0),
        rec("t.py::a", "passed"),
        sub("t.py::b", "passed", 0),
        rec("t.py::b", "failed", reported_outcome="rerun"),
        sub("t.py::b", "failed", 0),
        rec("t.py::b", "passed"),
    )
    assert evidence.outcomes == {"t.py::a": "passed", "t.py::b": "failed"}
    # without the marks the same records read as reruns: the last one decides
    unmarked = run(rec("t.py::b", "failed"), rec("t.py::b", "passed"))
    assert unmarked.outcomes == {"t.py::b": "passed"}


def test_subtests_without_the_tests_own_report_still_count() -> None:
    evidence = run(sub("t.py::a", "passed", 0), sub("t.py::a", "failed", 1))
    assert evidence.outcomes == {"t.py::a": "failed"}


@pytest.mark.parametrize(
    ("record", "where", "message"),
    [
        (rec("t.py::a", "passed", subtest=3), "$.records[0].subtest", "expected an object"),
        (
            rec("t.py::a", "failed", when="teardown", subtest={}),
            "$.records[0].when",
            "a subtest's record is a 'call' record",
        ),
    ],
)
def test_a_malformed_subtest_mark_is_refused(
    record: dict[str, Any], where: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        run(record)
    (problem,) = caught.value.problems
    assert problem.where == where
    assert message in problem.message


# --- meta before the records --------------------------------------------------------------


def test_meta_is_read_from_the_first_bytes_when_it_precedes_the_records() -> None:
    from freezedebt_ci.evidence import meta_from_prefix

    document = {
        "format": "freezedebt-evidence/1",
        "exit": 1,
        "meta": {"sha": "ab" * 20, "nested": {"a": [1, 2]}},
        "records": [rec(f"t.py::t{i}", "passed") for i in range(1000)],
    }
    text = json.dumps(document, indent=1).encode()
    assert meta_from_prefix(b"\xef\xbb\xbf" + text[:300]) == document["meta"]
    # meta after the records, or cut off, or no object at all: not known from the prefix
    after = json.dumps({"exit": 0, "records": [], "meta": {"sha": "x"}}).encode()
    assert meta_from_prefix(after) is None
    assert meta_from_prefix(text[:60]) is None
    assert meta_from_prefix(b"<testsuite/>") is None
    assert meta_from_prefix(b'{"meta": 3, "records": []}') is None
    assert meta_from_prefix(b"") is None


@pytest.mark.parametrize(
    ("own", "given", "conflict"),
    [
        ("ab" * 20, "ab" * 20, None),
        ("ab" * 20, "abababa", None),
        ("ABABABAB", "ab" * 20, None),
        ("cd" * 20, "ab" * 20, "cd" * 20),
        ("", "ab" * 20, None),
        (7, "ab" * 20, None),
    ],
)
def test_a_sha_conflict_is_another_commit_not_an_abbreviation(
    own: object, given: str, conflict: str | None
) -> None:
    from freezedebt_ci.evidence import sha_conflict

    assert sha_conflict({"sha": own}, given) == conflict
    assert sha_conflict({}, given) is None


def test_meta_from_a_hostile_prefix_is_unknown_not_an_error() -> None:
    from freezedebt_ci.evidence import meta_from_prefix

    assert meta_from_prefix(b'{"exit": ' + b"9" * 5000 + b', "meta": {}}') is None
    assert meta_from_prefix(b'{"meta": ' + b"[" * 100_000) is None
