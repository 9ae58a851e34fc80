"""The one JSON reader: depth, duplicate keys and over-long integers are input errors."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freezedebt_ci.errors import InputError
from freezedebt_ci.evidence import parse_evidence
from freezedebt_ci.jsonread import MAX_DEPTH, MAX_INT_DIGITS, load_json, nesting_depth
from freezedebt_ci.ledger import parse_ledger


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


# Text with the characters that could fool a scan: brackets, quotes and backslashes.
_tricky = st.text(alphabet=st.sampled_from('[]{}"\\\\ ab\n\u00e9'), max_size=8)
_json = st.recursive(
    st.none() | st.integers() | _tricky,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_tricky, inner, max_size=3),
    max_leaves=20,
)


@given(_json, st.booleans())
def test_nesting_depth_is_the_depth_of_the_decoded_value(value, ascii_only):
    assert nesting_depth(json.dumps(value, ensure_ascii=ascii_only)) == _depth(value)


def test_nesting_up_to_the_limit_is_read():
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert _depth(load_json(text, source="doc")) == MAX_DEPTH


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 940, 100_000])
def test_deeper_nesting_is_an_input_error_not_a_recursion_error(levels):
    with pytest.raises(InputError) as caught:
        load_json('{"a":' * levels + "1" + "}" * levels, source="doc")
    assert str(caught.value) == f"doc: $: nested deeper than {MAX_DEPTH} levels"


def test_an_over_long_integer_is_an_input_error_without_the_interpreters_words():
    with pytest.raises(InputError) as caught:
        load_json('{"exit": ' + "9" * 5000 + "}", source="doc")
    message = str(caught.value)
    assert f"more than {MAX_INT_DIGITS} digits" in message
    assert "sys." not in message
    assert load_json("-" + "9" * MAX_INT_DIGITS, source="doc") == -int("9" * MAX_INT_DIGITS)


def test_a_duplicate_key_is_refused_naming_it():
    with pytest.raises(InputError, match="the key 'outcome' twice"):
        load_json('{"a": [{"outcome": "passed", "outcome": "failed"}]}', source="doc")


def test_nan_is_refused_only_when_asked():
    assert load_json('{"d": NaN}', source="doc")["d"] != 0
    with pytest.raises(InputError, match="NaN"):
        load_json('{"d": NaN}', source="doc", allow_nan=False)


def test_evidence_with_a_5000_digit_exit_status_is_an_input_error():
    with pytest.raises(InputError, match="digits"):
        parse_evidence(b'{"exit": ' + b"1" * 5000 + b', "records": []}')


def test_evidence_with_a_duplicate_key_in_a_record_is_an_input_error():
    body = b'{"exit": 0, "records": [{"nodeid": "t.py::a", "outcome": "passed", '
    body += b'"outcome": "failed", "when": "call", "xfail": false}]}'
    with pytest.raises(InputError, match="'outcome' twice"):
        parse_evidence(body)


def test_a_deeply_nested_json_ledger_is_an_input_error():
    with pytest.raises(InputError, match="nested deeper"):
        parse_ledger("[" + '{"a": ' * 940 + "1" + "}" * 940 + "]")


def test_a_deeply_nested_toml_ledger_is_an_input_error():
    with pytest.raises(InputError, match="nested too deeply"):
        parse_ledger("[[freeze]]\ncovers = " + "[" * 5000 + "]" * 5000 + "\n")


def test_a_date_and_time_for_a_date_is_named_as_the_file_spells_it():
    toml = (
        '[[freeze]]\nid = "FRZ-1"\ntest = "t.py::a"\ncovers = ["src/a.py"]\nowner = "a@b.c"\n'
        'opened = 2026-11-20T10:00:00\nexpires = 2026-11-30\nreason = "timeout on CI"\n'
    )
    with pytest.raises(InputError) as caught:
        parse_ledger(toml)
    message = str(caught.value)
    assert "2026-11-20T10:00:00 (a datetime, not a date)" in message
    assert "datetime.datetime(" not in message


def test_an_over_long_toml_integer_is_an_input_error_without_the_interpreters_words():
    with pytest.raises(InputError) as caught:
        parse_ledger("[[freeze]]\nid = " + "9" * 5000 + "\n")
    assert "a value too large" in str(caught.value)
    assert "sys." not in str(caught.value)
