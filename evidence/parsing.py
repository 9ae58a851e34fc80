"""An uploaded run read and checked for storing: the shared reader's evidence, plus the checks
the database needs that the reader does not make; a row of results made for each tracked test."""

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from config.jsontext import unstorable
from evidence.models import TestResult
from evidence.run_outcomes import BUCKETS
from freezedebt_ci.errors import ProblemCollector
from freezedebt_ci.evidence import parse_evidence, sha_conflict

# meta is shown on pages and copied into reports; a few KiB is what the plugin writes.
MAX_META_BYTES = 64 << 10
# Bounds of the database columns the reader does not know about.
_EXIT_RANGE = range(-(2**31), 2**31)
_SIGNATURE_LENGTH = TestResult._meta.get_field("signature").max_length
_FREEZE_LENGTH = TestResult._meta.get_field("freeze").max_length

# One row of a run's results before it is stored: nodeid, bucket, duration, signature, freeze.
Row = tuple[str, int, float | None, str, str]


@dataclass(frozen=True, slots=True)
class ParsedRun:
    outcomes: dict[str, str]
    # The optional extras of some node ids (duration, signature, freeze), as the reader kept them.
    extras: Mapping[str, Mapping[str, Any]]
    counts: dict[str, int]
    exit_code: int
    meta: dict[str, Any]

    def row(self, nodeid: str) -> Row:
        """The row of results of one of the run's node ids, its extras made storable."""
        bucket = BUCKETS[self.outcomes[nodeid]]
        extra = self.extras.get(nodeid)
        if extra is None:
            return (nodeid, bucket, None, "", "")
        signature = extra.get("signature")
        frozen_by = extra.get("freeze")
        return (
            nodeid,
            bucket,
            _duration(extra.get("duration")),
            "" if signature is None else _text(signature, _SIGNATURE_LENGTH),
            "" if frozen_by is None else _text(frozen_by, _FREEZE_LENGTH),
        )


def run_parse(raw: bytes, *, source: str, sha: str | None = None) -> ParsedRun:
    """Read an upload (evidence JSON or JUnit XML, gzip or not) within the configured limits;
    InputError with every problem found when it cannot be stored."""
    evidence = parse_evidence(
        raw,
        source=source,
        max_records=settings.FREEZEDEBT_MAX_RECORDS,
        max_nodeid_length=settings.FREEZEDEBT_MAX_NODEID_LENGTH,
        max_decompressed=settings.FREEZEDEBT_MAX_DECOMPRESSED_BYTES,
    )
    problems = ProblemCollector(source)
    if evidence.exit not in _EXIT_RANGE:
        shown = evidence.exit if abs(evidence.exit) < 10**12 else "the number"
        problems.add("$.exit", f"{shown} is outside the range of exit statuses")
    meta_problem = _json_problem(evidence.meta)
    if meta_problem:
        problems.add("$.meta", meta_problem)
    # The upload refuses this when meta comes first (409); the rest is caught here.
    own_sha = sha_conflict(evidence.meta, sha) if sha else None
    if own_sha is not None:
        problems.add(
            "$.meta.sha", f"the evidence was made at commit {own_sha}, not at the run's sha {sha}"
        )
    _check_nodeids(evidence.outcomes, problems)
    problems.raise_if_any()
    return ParsedRun(
        evidence.outcomes, evidence.extras, evidence.counts(), evidence.exit, evidence.meta
    )


def _check_nodeids(outcomes: dict[str, str], problems: ProblemCollector) -> None:
    """Node ids the stored outcomes cannot hold: with a NUL character (their separator), or
    not encodable (a lone surrogate). Checked on all of them at once, in C; one by one only
    when that finds something."""
    text = "\0".join(outcomes)
    try:
        text.encode()
    except UnicodeEncodeError:
        pass
    else:
        if text.count("\0") == max(len(outcomes) - 1, 0):
            return
    for nodeid in outcomes:
        if "\x00" in nodeid:
            problems.add("$.records[*].nodeid", f"{_quote(nodeid)} contains a NUL character")
        elif not nodeid.isascii():
            try:
                nodeid.encode()
            except UnicodeEncodeError:
                problems.add("$.records[*].nodeid", f"{_quote(nodeid)} is not valid Unicode")


def _duration(value: object) -> float | None:
    """Seconds as a finite float; anything else is dropped (the extra is optional)."""
    # x - x is 0.0 for every finite float, and NaN for infinities and NaN.
    if type(value) is float and value - value == 0.0:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds = float(value)
    except OverflowError:
        return None
    return seconds if math.isfinite(seconds) else None


def _text(value: object, length: int | None) -> str:
    """An optional text extra as the column can hold it; anything unstorable is dropped."""
    if not isinstance(value, str) or "\x00" in value:
        return ""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return ""
    return value[:length]


def _json_problem(meta: dict[str, Any]) -> str | None:
    """Why ``meta`` cannot be stored as JSON in the database, or None."""
    problem = unstorable(meta)
    if problem is not None:
        return problem[1]
    if len(json.dumps(meta).encode("utf-8")) > MAX_META_BYTES:
        return f"is larger than {MAX_META_BYTES} bytes"
    return None


def _quote(text: str, limit: int = 80) -> str:
    shown = text if len(text) <= limit else f"{text[:limit]}…"
    return ascii(shown)
