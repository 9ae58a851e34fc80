"""Evidence of one test run: the reader of evidence JSON, and the entry point for JUnit XML too.

Every node id of a run falls in exactly one bucket: ``passed``, ``failed``, ``skipped`` or
``xfail``. When a node id has several records (reruns), the last record that decides anything
wins; setup and teardown records decide only when they fail (or, for setup, when they skip).

Subtests (pytest's ``subtests`` fixture, unittest's ``subTest``) report several ``call``
records under one node id; the plugin marks them with a ``subtest`` field. Marked records do
not close an attempt: they join the next unmarked record of the node id (the test's own call
report), and the attempt's bucket is the worst of them, failed > skipped > xfail > passed. So a
failing subtest fails its node id whatever the test's own report says, and a rerun that passes
whole still decides.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from .compression import maybe_gunzip
from .errors import InputError, ProblemCollector
from .jsonread import load_json
from .junit import parse_junit
from .outcomes import (
    BUCKETS,
    DEFAULT_MAX_NODEID_LENGTH,
    DEFAULT_MAX_RECORDS,
    FAILED,
    FORMAT,
    PASSED,
    RANK,
    SKIPPED,
    SUBTEST_FIELD,
    XFAIL,
    Evidence,
)

_OUTCOMES = frozenset((PASSED, FAILED, SKIPPED))
_PHASES = frozenset(("setup", "call", "teardown"))


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError.single(
            source, f"byte {exc.start}", "is not valid UTF-8 (evidence must be UTF-8 JSON or XML)"
        ) from None


def load_json_document(data: bytes, source: str) -> Any:
    """The decoded JSON of an evidence file (see :func:`~freezedebt_ci.jsonread.load_json`),
    with errors that name the line and column."""
    return load_json(_decode(data, source), source=source)


def evidence_from_json(
    document: Any,
    *,
    source: str = "evidence",
    max_records: int = DEFAULT_MAX_RECORDS,
    max_nodeid_length: int = DEFAULT_MAX_NODEID_LENGTH,
) -> Evidence:
    """Validate a decoded evidence JSON document (SPEC 4.1) and bucket its records."""
    problems = ProblemCollector(source)
    if not isinstance(document, dict):
        raise InputError.single(source, "$", "expected a JSON object with 'exit' and 'records'")
    fmt = document.get("format", FORMAT)
    if fmt != FORMAT:
        problems.add("$.format", f"expected {FORMAT!r}, got {fmt!r}")
    exit_status = document.get("exit")
    if type(exit_status) is not int:
        problems.add("$.exit", "expected the run's exit status as an integer")
    meta = document.get("meta", {})
    if not isinstance(meta, dict):
        problems.add("$.meta", "expected an object")
    records = document.get("records")
    if not isinstance(records, list):
        problems.add("$.records", "expected a list of records")
        problems.raise_if_any()
        raise AssertionError("unreachable")
    if len(records) > max_records:
        problems.add("$.records", f"{len(records)} records exceed the limit of {max_records}")
    problems.raise_if_any()

    outcomes: dict[str, str] = {}
    extras: dict[str, Mapping[str, Any]] = {}
    # Subtest records of the attempt under way, per node id: their worst bucket, and the
    # record of the first of them that failed (its text and signature explain the failure).
    open_subtests: dict[str, str] = {}
    subtest_failures: dict[str, Mapping[str, Any]] = {}
    for index, record in enumerate(records):
        if type(record) is not dict:
            problems.add(f"$.records[{index}]", "expected an object")
            continue
        nodeid = record.get("nodeid")
        outcome = record.get("outcome")
        when = record.get("when", "call")
        xfail = record.get("xfail", False)
        # One combined check keeps the common, valid case to a single branch.
        if not (
            type(nodeid) is str
            and 0 < len(nodeid) <= max_nodeid_length
            and outcome in _OUTCOMES
            and when in _PHASES
            and type(xfail) is bool
        ):
            _record_problems(problems, index, nodeid, outcome, when, xfail, max_nodeid_length)
            continue
        if when != "call" and outcome != FAILED and not (when == "setup" and outcome == SKIPPED):
            continue  # a passing setup/teardown says nothing about the test
        # bucket_of(outcome, xfail), inline: one call fewer per record.
        bucket = FAILED if outcome == FAILED else XFAIL if xfail else outcome
        if SUBTEST_FIELD in record:
            _add_subtest(problems, index, record, bucket, open_subtests, subtest_failures)
            continue
        failure = None
        if open_subtests and nodeid in open_subtests:
            worst = open_subtests.pop(nodeid)
            failure = subtest_failures.pop(nodeid, None)
            if RANK[worst] > RANK[bucket]:
                bucket = worst
            else:
                failure = None
        outcomes[nodeid] = bucket
        if failure is not None:
            extras[nodeid] = failure
        elif (
            "duration" in record
            or "signature" in record
            or "freeze" in record
            or ("longrepr" in record)
        ):
            extras[nodeid] = record
        elif nodeid in extras:
            del extras[nodeid]
    # Subtests whose test never reported its own call (a crashed worker): they still count.
    for nodeid, worst in open_subtests.items():
        if nodeid not in outcomes or RANK[worst] > RANK[outcomes[nodeid]]:
            outcomes[nodeid] = worst
            if nodeid in subtest_failures:
                extras[nodeid] = subtest_failures[nodeid]
    problems.raise_if_any()
    # exit_status was checked to be an int above; cast() only tells the type checker
    return Evidence(cast(int, exit_status), outcomes, meta, extras, source)


def _add_subtest(
    problems: ProblemCollector,
    index: int,
    record: Mapping[str, Any],
    bucket: str,
    open_subtests: dict[str, str],
    subtest_failures: dict[str, Mapping[str, Any]],
) -> None:
    """Join a subtest's record to the attempt under way of its node id."""
    mark = record[SUBTEST_FIELD]
    if not isinstance(mark, dict | str):
        problems.add(
            f"$.records[{index}].{SUBTEST_FIELD}",
            f"expected an object with the subtest's msg and params, got {mark!r}",
        )
        return
    if record.get("when", "call") != "call":
        problems.add(f"$.records[{index}].when", "a subtest's record is a 'call' record")
        return
    nodeid: str = record["nodeid"]
    worst = open_subtests.get(nodeid)
    if worst is None or RANK[bucket] > RANK[worst]:
        open_subtests[nodeid] = bucket
    if bucket == FAILED and nodeid not in subtest_failures:
        subtest_failures[nodeid] = record


def _record_problems(
    problems: ProblemCollector,
    index: int,
    nodeid: object,
    outcome: object,
    when: object,
    xfail: object,
    max_nodeid_length: int,
) -> None:
    where = f"$.records[{index}]"
    if type(nodeid) is not str or not nodeid:
        problems.add(f"{where}.nodeid", "expected a non-empty string")
    elif len(nodeid) > max_nodeid_length:
        problems.add(f"{where}.nodeid", f"longer than {max_nodeid_length} characters")
    if outcome not in _OUTCOMES:
        problems.add(f"{where}.outcome", f"expected passed, failed or skipped, got {outcome!r}")
    if when not in _PHASES:
        problems.add(f"{where}.when", f"expected setup, call or teardown, got {when!r}")
    if type(xfail) is not bool:
        problems.add(f"{where}.xfail", f"expected true or false, got {xfail!r}")


def meta_from_prefix(data: bytes) -> dict[str, Any] | None:
    """The ``meta`` object of evidence JSON read from the first bytes of the document alone,
    or None when those bytes do not hold it whole before ``records`` (the plugin writes it
    first, so a server can judge it before reading the rest)."""
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "ignore")
    except UnicodeDecodeError:  # pragma: no cover - "ignore" never raises
        return None
    decoder = json.JSONDecoder()
    position = len(text) - len(text.lstrip())
    if text[position : position + 1] != "{":
        return None
    position += 1
    try:
        while True:
            while text[position : position + 1] in (" ", "\t", "\r", "\n", ","):
                position += 1
            key, position = decoder.raw_decode(text, position)
            if not isinstance(key, str):
                return None
            while text[position : position + 1] in (" ", "\t", "\r", "\n"):
                position += 1
            if text[position : position + 1] != ":" or key == "records":
                return None
            position += 1
            while text[position : position + 1] in (" ", "\t", "\r", "\n"):
                position += 1
            value, position = decoder.raw_decode(text, position)
            if key == "meta":
                return value if isinstance(value, dict) else None
    except (ValueError, RecursionError, TypeError):  # hostile JSON too (huge numbers)
        return None


def sha_conflict(meta: Mapping[str, Any], sha: str) -> str | None:
    """The evidence's own ``meta.sha`` when it names another commit than ``sha`` (one may be
    an abbreviation of the other), else None."""
    own = meta.get("sha")
    if not isinstance(own, str) or not own.strip():
        return None
    a, b = own.strip().lower(), sha.strip().lower()
    return None if a.startswith(b) or b.startswith(a) else own


def parse_evidence(
    data: bytes,
    *,
    source: str = "evidence",
    max_records: int = DEFAULT_MAX_RECORDS,
    max_nodeid_length: int = DEFAULT_MAX_NODEID_LENGTH,
    max_decompressed: int | None = None,
) -> Evidence:
    """Read evidence JSON or JUnit XML, gzip-compressed or not; the content decides which."""
    data = maybe_gunzip(data, source=source, limit=max_decompressed)
    if data.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"<":  # XML, maybe after a BOM
        return parse_junit(
            data, source=source, max_records=max_records, max_nodeid_length=max_nodeid_length
        )
    return evidence_from_json(
        load_json_document(data, source),
        source=source,
        max_records=max_records,
        max_nodeid_length=max_nodeid_length,
    )


def read_evidence(path: str | Path, **limits: int) -> Evidence:
    """Read an evidence file (JSON or JUnit XML, optionally gzip-compressed)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError.single(str(path), "", f"cannot be read ({exc.strerror})") from None
    return parse_evidence(data, source=str(path), **limits)


def evidence_from_outcomes(
    items: Iterable[tuple[str, str]], *, exit_status: int = 0, meta: dict[str, Any] | None = None
) -> Evidence:
    """Build evidence from ``(nodeid, bucket)`` pairs (stored runs, tests)."""
    outcomes = dict(items)
    bad = sorted(set(outcomes.values()) - set(BUCKETS))
    if bad:
        raise ValueError(f"unknown bucket(s): {', '.join(bad)}")
    return Evidence(exit_status, outcomes, dict(meta or {}))
