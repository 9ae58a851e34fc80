"""Properties of the accounting rules (SPEC 5, 5.1), in the pinned lane: the same examples on
every run, no example database, so a failure here reproduces byte for byte."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from freezedebt_ci.changes import Change
from freezedebt_ci.evidence import BUCKETS, Evidence, evidence_from_json
from freezedebt_ci.ledger import Freeze
from freezedebt_ci.report import compute_report, file_of, report_json

PINNED = settings(derandomize=True, database=None, max_examples=200, deadline=None)
TODAY = dt.date(2026, 11, 5)

NODEIDS = st.builds(
    "{}::test_{}".format,
    st.sampled_from(["tests/test_a.py", "tests/test_b.py", "tests/sub/test_c.py", "test_d.py"]),
    st.integers(0, 7),
)
RECORDS = st.lists(
    st.fixed_dictionaries(
        {
            "nodeid": NODEIDS,
            "when": st.sampled_from(["call", "call", "call", "setup", "teardown"]),
            "outcome": st.sampled_from(["passed", "failed", "skipped"]),
            "xfail": st.booleans(),
        }
    ),
    max_size=40,
)
FREEZES = st.lists(
    st.builds(
        lambda number, nodeid, cover, days: Freeze(
            id=f"FRZ-{number}",
            test=nodeid,
            covers=(cover,),
            owner="finley",
            opened=TODAY - dt.timedelta(days=7),
            expires=TODAY + dt.timedelta(days=days),
            reason="timeout on the shared runner",
        ),
        st.integers(0, 9),
        NODEIDS,
        st.sampled_from(["src/a.py", "src/b/**", "tests/test_a.py"]),
        st.integers(-3, 3),
    ),
    max_size=4,
    unique_by=lambda f: f.id,
)
CHANGES = st.lists(
    st.sampled_from(
        [
            Change("src/a.py"),
            Change("src/b/x.py", "A"),
            Change("src/c.py", "R", "src/a.py"),
            Change("tests/test_a.py"),
            Change("tests/fixtures/p.json"),
        ]
    ),
    max_size=3,
    unique=True,
)


def evidence(records: list[dict[str, Any]], exit: int = 0) -> Evidence:
    return evidence_from_json({"exit": exit, "records": records})


def reference_buckets(records: list[dict[str, Any]]) -> dict[str, str]:
    """The bucket rule written out plainly: the last deciding record of a node id wins."""
    out: dict[str, str] = {}
    for r in records:
        deciding = (
            r["when"] == "call"
            or r["outcome"] == "failed"
            or (r["when"] == "setup" and r["outcome"] == "skipped")
        )
        if not deciding:
            continue
        if r["outcome"] == "failed":
            out[r["nodeid"]] = "failed"
        elif r["xfail"]:
            out[r["nodeid"]] = "xfail"
        else:
            out[r["nodeid"]] = r["outcome"]
    return out


def delta(base: Evidence, head: Evidence, **kw: Any) -> dict[str, Any]:
    kw.setdefault("freezes", [])
    kw.setdefault("changes", [])
    return compute_report(base=base, head=head, today=TODAY, **kw)


@PINNED
@given(RECORDS)
def test_buckets_partition_the_node_ids(records: list[dict[str, Any]]) -> None:
    buckets = evidence(records).buckets()
    groups = [getattr(buckets, name) for name in BUCKETS]
    union = frozenset().union(*groups)
    assert sum(map(len, groups)) == len(union)  # pairwise disjoint
    assert union == set(reference_buckets(records))  # and covering every decided node id


@PINNED
@given(RECORDS)
def test_buckets_follow_the_last_deciding_record(records: list[dict[str, Any]]) -> None:
    assert evidence(records).outcomes == reference_buckets(records)


@PINNED
@given(RECORDS, RECORDS)
def test_net_delta_is_earned_minus_lost(
    base: list[dict[str, Any]], head: list[dict[str, Any]]
) -> None:
    rep = delta(evidence(base), evidence(head))
    figures = rep["figures"]
    assert figures["net_executed_delta"] == figures["earned"] - len(rep["lost"])


@PINNED
@given(RECORDS, RECORDS)
def test_earned_plus_borrowed_is_head_passed(
    base: list[dict[str, Any]], head: list[dict[str, Any]]
) -> None:
    figures = delta(evidence(base), evidence(head))["figures"]
    assert figures["earned"] + figures["borrowed"] == figures["head"]["passed"]
    assert 0 <= figures["borrowed"] <= figures["base"]["passed"]


@PINNED
@given(RECORDS, RECORDS)
def test_per_file_rows_add_up_to_the_totals(
    base: list[dict[str, Any]], head: list[dict[str, Any]]
) -> None:
    rep = delta(evidence(base), evidence(head))
    rows = rep["per_file"]
    assert sum(r["delta"] for r in rows) == rep["figures"]["net_executed_delta"]
    assert sum(r["new_skips"] for r in rows) == len(rep["new_skips"])
    assert sum(r["retired_skips"] for r in rows) == len(rep["retired_skips"])
    assert sum(r["lost"] for r in rows) == len(rep["lost"])
    for row in rows:
        assert row["lost"] == sum(1 for n in rep["lost"] if file_of(n) == row["file"])


@PINNED
@given(RECORDS, RECORDS)
def test_swapping_base_and_head_swaps_skips_and_earned_with_lost(
    base: list[dict[str, Any]], head: list[dict[str, Any]]
) -> None:
    forward = delta(evidence(base), evidence(head))
    backward = delta(evidence(head), evidence(base))
    assert forward["new_skips"] == backward["retired_skips"]
    assert forward["retired_skips"] == backward["new_skips"]
    assert forward["figures"]["earned"] == len(backward["lost"])
    assert len(forward["lost"]) == backward["figures"]["earned"]
    assert forward["figures"]["borrowed"] == backward["figures"]["borrowed"]
    assert forward["figures"]["net_executed_delta"] == -backward["figures"]["net_executed_delta"]


@PINNED
@given(
    RECORDS,
    RECORDS,
    FREEZES,
    CHANGES,
    st.randoms(use_true_random=False),
)
def test_report_is_independent_of_record_order(
    base: list[dict[str, Any]],
    head: list[dict[str, Any]],
    freezes: list[Freeze],
    changes: list[Change],
    rnd: Any,
) -> None:
    def shuffled(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Any order, except that the records of one node id keep their own order (reruns:
        # the last one decides, SPEC 4.1): shuffle the slots, then fill each slot with the
        # next record of the node id that landed there.
        queues: dict[str, list[dict[str, Any]]] = {}
        for record in records:
            queues.setdefault(record["nodeid"], []).append(record)
        slots = [record["nodeid"] for record in records]
        rnd.shuffle(slots)
        return [queues[nodeid].pop(0) for nodeid in slots]

    exit_base, exit_head = len(base) % 2, len(head) % 3
    first = delta(
        evidence(base, exit_base), evidence(head, exit_head), freezes=freezes, changes=changes
    )
    again = delta(
        evidence(shuffled(base), exit_base),
        evidence(shuffled(head), exit_head),
        freezes=list(reversed(freezes)),
        changes=list(reversed(changes)),
    )
    assert report_json(again) == report_json(first)
