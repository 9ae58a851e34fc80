"""The freeze ledger (SPEC 4.3): its three shapes, its faults, and its history (SPEC 5.4)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from freezedebt_ci.errors import InputError
from freezedebt_ci.ledger import (
    EDITED,
    OPENED,
    RENEWED,
    RETIRED,
    Freeze,
    LedgerEvent,
    diff_ledgers,
    expiry_status,
    ledger_history,
    parse_ledger,
    read_ledger,
)

D = dt.date

SEED_TOML = """\
# freeze_ledger.toml
[[freeze]]
id = "FRZ-014"
test = "tests/test_pricing.py::test_rounding_boundary"
covers = ["src/pricing/rounding.py"]        # blast radius, not a guess
owner = "finley"
opened = 2026-10-30
expires = 2026-11-13
reason = "wall-clock boundary; fails ~1/40 CI runs, see run 8812"
compensating_check = "tests/property/test_rounding.py::test_fee_monotonic"

[[freeze]]
id = "FRZ-015"
nodeid = "tests/test_api.py::test_upload"
covers = ["src/api/**"]
owner = "team-api@example.com"
opened = 2026-11-01
until = 2026-11-10
reason = "connection reset by the staging proxy"
class = "network-dependent"
signature = "0123456789abcdef"
blocks_symbols = ["api.upload"]
allowed_in_merge = true
"""

ENTRIES: list[dict[str, Any]] = [
    {
        "id": "FRZ-014",
        "test": "tests/test_pricing.py::test_rounding_boundary",
        "covers": ["src/pricing/rounding.py"],
        "owner": "finley",
        "opened": "2026-10-30",
        "expires": "2026-11-13",
        "reason": "wall-clock boundary; fails ~1/40 CI runs, see run 8812",
        "compensating_check": "tests/property/test_rounding.py::test_fee_monotonic",
    },
    {
        "id": "FRZ-015",
        "nodeid": "tests/test_api.py::test_upload",
        "covers": ["src/api/**"],
        "owner": "team-api@example.com",
        "opened": "2026-11-01",
        "until": "2026-11-10",
        "reason": "connection reset by the staging proxy",
        "class": "network-dependent",
        "signature": "0123456789abcdef",
        "blocks_symbols": ["api.upload"],
        "allowed_in_merge": True,
    },
]


def expected() -> list[Freeze]:
    return [
        Freeze(
            id="FRZ-014",
            test="tests/test_pricing.py::test_rounding_boundary",
            covers=("src/pricing/rounding.py",),
            owner="finley",
            opened=D(2026, 10, 30),
            expires=D(2026, 11, 13),
            reason="wall-clock boundary; fails ~1/40 CI runs, see run 8812",
            compensating_check="tests/property/test_rounding.py::test_fee_monotonic",
        ),
        Freeze(
            id="FRZ-015",
            test="tests/test_api.py::test_upload",
            covers=("src/api/**",),
            owner="team-api@example.com",
            opened=D(2026, 11, 1),
            expires=D(2026, 11, 10),
            reason="connection reset by the staging proxy",
            freeze_class="network-dependent",
            signature="0123456789abcdef",
            blocks_symbols=("api.upload",),
            allowed_in_merge=True,
        ),
    ]


def bad(text: str | bytes) -> InputError:
    with pytest.raises(InputError) as info:
        parse_ledger(text, source="freeze_ledger.toml")
    return info.value


def toml_entry(**fields: str) -> str:
    base = {
        "id": '"FRZ-1"',
        "test": '"tests/test_a.py::t"',
        "covers": '["src/a.py"]',
        "owner": '"finley"',
        "opened": "2026-11-01",
        "expires": "2026-11-10",
        "reason": '"timeout talking to the sandbox"',
    }
    base.update(fields)
    return "[[freeze]]\n" + "".join(f"{k} = {v}\n" for k, v in base.items() if v)


# --- shapes ---------------------------------------------------------------------------------


def test_seed_toml_ledger_is_normalized() -> None:
    assert parse_ledger(SEED_TOML) == expected()


def test_json_list_gives_the_same_freezes_as_toml() -> None:
    assert parse_ledger(json.dumps(ENTRIES)) == parse_ledger(SEED_TOML) == expected()


def test_json_freeze_wrapper_gives_the_same_freezes() -> None:
    assert parse_ledger(json.dumps({"freeze": ENTRIES})) == expected()


def test_json_map_keyed_by_node_id_gives_the_same_freezes() -> None:
    document: dict[str, Any] = {}
    for entry in ENTRIES:
        entry = dict(entry)
        nodeid = entry.pop("test", None) or entry.pop("nodeid")
        document[nodeid] = entry
    assert parse_ledger(json.dumps(document)) == expected()


def test_json_map_derives_id_from_node_id_and_opened_may_be_absent() -> None:
    document = {
        "tests/test_a.py::t": {
            "covers": ["src/a.py"],
            "owner": "finley",
            "until": "2026-11-10",
            "reason": "timeout on the shared runner",
        }
    }
    (freeze,) = parse_ledger(json.dumps(document))
    assert freeze.id == freeze.test == "tests/test_a.py::t"
    assert freeze.opened is None
    assert freeze.missing == ()


def test_ledger_bytes_with_bom_and_gzip_are_read() -> None:
    data = SEED_TOML.encode()
    assert parse_ledger(b"\xef\xbb\xbf" + data) == expected()
    assert parse_ledger(gzip.compress(data)) == expected()


def test_empty_ledgers_have_no_freezes() -> None:
    assert parse_ledger("") == []
    assert parse_ledger("[]") == []
    assert parse_ledger("{}") == []
    assert parse_ledger('{"freeze": []}') == []


def test_freezes_come_back_sorted_by_id() -> None:
    text = toml_entry(id='"FRZ-9"') + toml_entry(id='"FRZ-10"') + toml_entry(id='"FRZ-1"')
    assert [f.id for f in parse_ledger(text)] == ["FRZ-1", "FRZ-10", "FRZ-9"]


def test_fields_of_a_teams_own_start_with_x_and_are_ignored() -> None:
    # Before unknown fields were refused, any key was ignored; a team's own now say so.
    (freeze,) = parse_ledger(toml_entry(x_ticket='"JIRA-1"'))
    assert freeze.id == "FRZ-1"
    (freeze,) = parse_ledger(json.dumps([{**ENTRIES[0], "x-ticket": "JIRA-1"}]))
    assert freeze.id == ENTRIES[0]["id"]


def test_freeze_dict_round_trip() -> None:
    for freeze in expected():
        assert Freeze.from_dict(json.loads(json.dumps(freeze.as_dict()))) == freeze


def test_read_ledger_reads_a_file_and_names_it_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "freeze_ledger.toml"
    path.write_text(SEED_TOML, encoding="utf-8")
    assert read_ledger(path) == expected()
    path.write_text(toml_entry(expires="2026-11-10T00:00:00"), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_ledger(path)
    assert info.value.source == str(path)
    with pytest.raises(InputError, match="cannot be read"):
        read_ledger(tmp_path / "absent.toml")


# --- required fields: kept, with what they miss -----------------------------------------------


@pytest.mark.parametrize("name", ["test", "covers", "owner", "opened", "expires", "reason"])
def test_missing_required_field_is_kept_with_missing(name: str) -> None:
    (freeze,) = parse_ledger(toml_entry(**{name: ""}))
    assert freeze.missing == (name,)
    assert freeze.id == "FRZ-1"


def test_missing_id_is_kept_under_a_placeholder() -> None:
    (freeze,) = parse_ledger(toml_entry(id=""))
    assert "id" in freeze.missing
    assert freeze.id == "freeze[0] (no id)"


def test_empty_covers_and_blank_strings_count_as_missing() -> None:
    (freeze,) = parse_ledger(toml_entry(covers="[]", owner='"  "'))
    assert freeze.missing == ("covers", "owner")


# --- structural faults: the ledger is unreadable ----------------------------------------------


def test_invalid_toml_is_refused() -> None:
    error = bad("[[freeze]]\nid = FRZ-1\n")
    assert error.source == "freeze_ledger.toml"
    assert "invalid TOML" in error.problems[0].message
    assert "line 2" in error.problems[0].message


def test_invalid_json_names_line_and_column() -> None:
    error = bad('[\n  {"id": "FRZ-1",}\n]')
    assert error.problems[0].where == "line 2 column 18"


def test_freeze_not_a_table_list_is_refused() -> None:
    assert bad('[freeze]\nid = "x"\n').problems[0].where == "freeze"


def test_entry_not_an_object_is_refused() -> None:
    assert bad('["FRZ-1"]'.replace('"FRZ-1"', '{"x_a": 1}, 3')).problems[0].where == "$[1]"


@pytest.mark.parametrize(
    "value",
    ['"2026-13-01"', '"2026/11/10"', '"20261110"', '"2026-W46-2"', '"next week"', "20261110"],
)
def test_bad_date_is_refused_with_its_place(value: str) -> None:
    error = bad(toml_entry(expires=value))
    assert error.problems[0].where == "freeze[0].expires"
    assert "YYYY-MM-DD" in error.problems[0].message


def test_datetime_instead_of_date_is_refused() -> None:
    error = bad(toml_entry(opened="2026-11-01T09:30:00"))
    assert error.problems[0].where == "freeze[0].opened"
    assert "YYYY-MM-DD" in error.problems[0].message
    entry = dict(ENTRIES[0], expires="2026-11-13T00:00:00Z")
    assert bad(json.dumps([entry])).problems[0].where == "$[0].expires"


def test_date_given_as_string_in_toml_is_accepted() -> None:
    (freeze,) = parse_ledger(toml_entry(expires='"2026-11-10"'))
    assert freeze.expires == D(2026, 11, 10)


@pytest.mark.parametrize("pattern", ["src/*.py", "../x", "/abs", "src/**/x.py", "**/x.py", "a//b"])
def test_bad_cover_pattern_is_refused(pattern: str) -> None:
    error = bad(toml_entry(covers=json.dumps(["src/ok.py", pattern])))
    assert error.problems[0].where == "freeze[0].covers[1]"
    assert repr(pattern) in error.problems[0].message


def test_covers_not_a_list_of_strings_is_refused() -> None:
    assert bad(toml_entry(covers='"src/a.py"')).problems[0].where == "freeze[0].covers"
    assert bad(toml_entry(covers="[1]")).problems[0].where == "freeze[0].covers"


def test_wrong_types_are_refused_with_their_place() -> None:
    error = bad(toml_entry(owner="3", allowed_in_merge='"yes"', blocks_symbols='"f"'))
    places = {p.where for p in error.problems}
    assert places == {
        "freeze[0].owner",
        "freeze[0].allowed_in_merge",
        "freeze[0].blocks_symbols",
    }


def test_duplicate_freeze_ids_are_refused() -> None:
    error = bad(toml_entry() + toml_entry(test='"tests/test_b.py::u"'))
    assert error.problems[0].where == "freeze[1].id"
    assert "duplicate freeze id 'FRZ-1'" in error.problems[0].message


def test_duplicate_node_id_in_json_map_is_refused() -> None:
    entry = json.dumps({"covers": ["src/a.py"], "owner": "x", "until": "2026-11-10"})
    text = f'{{"tests/a.py::t": {entry},\n "tests/a.py::t": {entry}}}'
    error = bad(text)
    assert "duplicate" in error.problems[0].message
    assert "tests/a.py::t" in error.problems[0].where + error.problems[0].message


def test_duplicate_key_inside_a_json_entry_is_refused() -> None:
    text = '[{"id": "FRZ-1", "expires": "2026-11-10", "expires": "2027-01-01"}]'
    error = bad(text)
    assert "duplicate" in error.problems[0].message
    assert "expires" in error.problems[0].where + error.problems[0].message


def test_many_faults_are_reported_together() -> None:
    error = bad(toml_entry(expires='"x"', covers='["/abs"]', owner="1"))
    assert len(error.problems) == 3


def test_invalid_utf8_ledger_is_refused() -> None:
    data = b'[[freeze]]\nid = "caf\xe9"\n'
    error = bad(data)
    assert error.problems[0].where == f"byte {data.index(0xE9)}"
    assert "UTF-8" in error.problems[0].message


# --- history (SPEC 5.4) -------------------------------------------------------------------


def freeze(expires: D, reason: str = "timeout on the runner", **changes: object) -> Freeze:
    base = Freeze(
        id="FRZ-1",
        test="tests/test_a.py::t",
        covers=("src/a.py",),
        owner="finley",
        opened=D(2026, 11, 1),
        expires=expires,
        reason=reason,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def kinds(events: list[LedgerEvent]) -> list[tuple[str, str]]:
    return [(event.kind, event.freeze_id) for event in events]


def test_new_freeze_is_opened() -> None:
    (event,) = diff_ledgers([], [freeze(D(2026, 11, 10))])
    assert (event.kind, event.before, event.after) == (OPENED, None, freeze(D(2026, 11, 10)))


def test_removed_freeze_is_retired() -> None:
    (event,) = diff_ledgers([freeze(D(2026, 11, 10))], [])
    assert event.kind == RETIRED
    assert event.after is None


def test_later_expiry_with_new_reason_is_a_renewal_not_silent() -> None:
    old = freeze(D(2026, 11, 10))
    new = freeze(D(2026, 11, 20), reason="timeout: runner pool still undersized, see INC-7")
    (event,) = diff_ledgers([old], [new])
    assert event.kind == RENEWED
    assert event.silent is False
    assert event.chain == 1


def test_renewal_with_unchanged_reason_is_silent() -> None:
    (event,) = diff_ledgers([freeze(D(2026, 11, 10))], [freeze(D(2026, 11, 20))])
    assert event.kind == RENEWED
    assert event.silent is True


def test_other_changes_are_edits() -> None:
    old = freeze(D(2026, 11, 10))
    (event,) = diff_ledgers([old], [freeze(D(2026, 11, 10), owner="sam")])
    assert event.kind == EDITED
    (event,) = diff_ledgers([old], [freeze(D(2026, 11, 5))])  # expiry moved earlier
    assert event.kind == EDITED
    assert event.silent is False


def test_unchanged_freeze_has_no_event() -> None:
    assert diff_ledgers([freeze(D(2026, 11, 10))], [freeze(D(2026, 11, 10))]) == []


def test_events_are_sorted_by_freeze_id() -> None:
    old = [freeze(D(2026, 11, 10), id="FRZ-2"), freeze(D(2026, 11, 10), id="FRZ-9")]
    new = [freeze(D(2026, 11, 10), id="FRZ-1"), freeze(D(2026, 11, 10), id="FRZ-9", owner="x")]
    assert kinds(diff_ledgers(old, new)) == [
        (OPENED, "FRZ-1"),
        (RETIRED, "FRZ-2"),
        (EDITED, "FRZ-9"),
    ]


def test_history_counts_renewals_in_a_chain_across_versions() -> None:
    versions = [
        [freeze(D(2026, 11, 10))],
        [freeze(D(2026, 11, 20))],  # silent renewal 1
        [freeze(D(2026, 11, 30), reason="timeout: new runner pool, INC-8")],  # renewal 2
        [freeze(D(2026, 11, 30), reason="timeout: new runner pool, INC-8", owner="sam")],
        [freeze(D(2026, 12, 10), reason="timeout: new runner pool, INC-8", owner="sam")],
        [],
        [freeze(D(2027, 1, 10))],  # reopened: a new chain
        [freeze(D(2027, 1, 20))],
    ]
    history = ledger_history(versions)
    assert [[(e.kind, e.silent, e.chain) for e in events] for events in history] == [
        [(OPENED, False, 0)],
        [(RENEWED, True, 1)],
        [(RENEWED, False, 2)],
        [(EDITED, False, 2)],
        [(RENEWED, True, 3)],
        [(RETIRED, False, 3)],
        [(OPENED, False, 0)],
        [(RENEWED, True, 1)],
    ]


def test_history_of_parsed_ledger_versions() -> None:
    v1 = parse_ledger(SEED_TOML)
    v2 = parse_ledger(SEED_TOML.replace("expires = 2026-11-13", "expires = 2026-11-27"))
    v3 = parse_ledger(
        SEED_TOML.replace("expires = 2026-11-13", "expires = 2026-11-27").split(
            '[[freeze]]\nid = "FRZ-015"'
        )[0]
    )
    history = ledger_history([v1, v2, v3])
    assert kinds(history[0]) == [(OPENED, "FRZ-014"), (OPENED, "FRZ-015")]
    assert [(e.kind, e.silent, e.chain) for e in history[1]] == [(RENEWED, True, 1)]
    assert kinds(history[2]) == [(RETIRED, "FRZ-015")]


def test_event_as_dict_is_json_ready() -> None:
    (event,) = diff_ledgers([freeze(D(2026, 11, 10))], [freeze(D(2026, 11, 20))])
    data = json.loads(json.dumps(event.as_dict()))
    assert data["kind"] == "renewed" and data["silent"] is True and data["chain"] == 1
    assert data["before"]["expires"] == "2026-11-10"
    assert data["after"]["expires"] == "2026-11-20"


@pytest.mark.parametrize(
    ("expires", "status"),
    [
        (None, "invalid"),
        (dt.date(2026, 11, 29), "expired"),
        (dt.date(2026, 11, 30), "expiring"),  # in force through its expiry day
        (dt.date(2026, 12, 7), "expiring"),  # 7 days ahead
        (dt.date(2026, 12, 8), "active"),  # 8 days ahead
    ],
)
def test_expiry_status_boundaries(expires: dt.date | None, status: str) -> None:
    assert expiry_status(expires, dt.date(2026, 11, 30)) == status


# --- mistakes caught where they are made ----------------------------------------------------


def test_a_misspelt_field_is_refused_with_did_you_mean_and_its_line() -> None:
    text = "# the ledger\n\n" + toml_entry() + "\n" + toml_entry(id='"FRZ-2"', expirse="2026-11-20")
    error = bad(text)
    (problem,) = error.problems
    assert problem.where == "freeze[1].expirse"
    line = text.splitlines().index("expirse = 2026-11-20") + 1
    assert problem.message == f"unknown field 'expirse': did you mean 'expires'? (line {line})"


def test_an_unknown_field_with_no_near_name_lists_the_fields() -> None:
    (problem,) = bad(toml_entry(ticket='"JIRA-1"')).problems
    assert problem.message.startswith("unknown field 'ticket': a freeze has id, test, nodeid,")
    assert "fields of your own start with x_" in problem.message
    assert problem.message.endswith("(line 9)")


def test_json_field_problems_name_their_line() -> None:
    entries = [dict(ENTRIES[0]), {**ENTRIES[0], "id": "FRZ-2", "ownr": "x", "opened": "soon"}]
    text = json.dumps(entries, indent=2)
    lines = text.splitlines()
    error = bad(text)
    by_where = {p.where: p.message for p in error.problems}
    ownr = next(i for i, line in enumerate(lines, 1) if '"ownr"' in line)
    opened = [i for i, line in enumerate(lines, 1) if '"opened"' in line][1]
    assert by_where["$[1].ownr"] == f"unknown field 'ownr': did you mean 'owner'? (line {ownr})"
    assert by_where["$[1].opened"] == f"expected a date as YYYY-MM-DD, got 'soon' (line {opened})"


@pytest.mark.parametrize(
    ("value", "line"),
    [("2026-2-3", 7), ("2026-13-01", 7), ("26-11-10", 7), ("2026-02-30", 7)],
)
def test_a_toml_date_written_wrongly_says_date_and_its_line(value: str, line: int) -> None:
    (problem,) = bad(toml_entry(expires=value)).problems
    assert problem.where == f"line {line}"
    assert "date" in problem.message
    assert problem.message.startswith(f"expires = {value} is not a date") or (
        "Invalid date" in problem.message
    )


def test_a_quoted_toml_date_says_date_and_its_line() -> None:
    (problem,) = (
        bad(toml_entry(opened='"2026-11-01"x')).problems
        if False
        else bad(toml_entry(opened='"yesterday"')).problems
    )
    assert problem.where == "freeze[0].opened"
    assert problem.message == "expected a date as YYYY-MM-DD, got 'yesterday' (line 6)"
