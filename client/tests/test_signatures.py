"""Failure signatures (SPEC 5.6)."""

from __future__ import annotations

import re

from freezedebt_ci.signatures import failure_shape, failure_signature

NODE = "tests/test_pricing.py::test_rounding_boundary"

PYTEST_TEXT = """\
def test_rounding_boundary():
        now = clock()
>       assert round_fee(now, 10.005) == 10.01
E       AssertionError: assert 10.0 == 10.01
E        +  where 10.0 = round_fee(<Clock object at 0x7f3a2c1d9e80>, 10.005)

src/pricing/rounding.py:41: in round_fee
    return quantize(amount)
.venv/lib/python3.11/site-packages/decimal_utils/core.py:212: in quantize
    return _q(x)
/usr/lib/python3.11/decimal.py:88: in _q
    pass
tests/test_pricing.py:17: AssertionError
----------------------------- Captured stdout call -----------------------------
computing fee for order 4411 at 2026-11-05 23:59:59
"""


def test_signature_is_16_lowercase_hex_digits() -> None:
    assert re.fullmatch(r"[0-9a-f]{16}", failure_signature(NODE, PYTEST_TEXT))


def test_shape_keeps_assertions_and_own_frames_only() -> None:
    assert failure_shape(PYTEST_TEXT).splitlines() == [
        "at src/pricing/rounding.py",
        "at tests/test_pricing.py",
        "E AssertionError: assert ?.? == ?.?",
        "E +  where ?.? = round_fee(<Clock object at 0x?>, ?.?)",
    ]


def test_line_numbers_are_masked() -> None:
    moved = PYTEST_TEXT.replace("rounding.py:41:", "rounding.py:57:").replace(
        "test_pricing.py:17:", "test_pricing.py:23:"
    )
    assert failure_signature(NODE, moved) == failure_signature(NODE, PYTEST_TEXT)


def test_addresses_are_masked() -> None:
    other = PYTEST_TEXT.replace("0x7f3a2c1d9e80", "0x55d1e0a0b2c4")
    assert failure_signature(NODE, other) == failure_signature(NODE, PYTEST_TEXT)
    assert "0x?" in failure_shape(PYTEST_TEXT)
    assert "7f3a" not in failure_shape(PYTEST_TEXT)


def test_digits_are_masked() -> None:
    other = PYTEST_TEXT.replace("10.0 ==", "10.02 ==").replace("10.005", "20.115")
    assert failure_signature(NODE, other) == failure_signature(NODE, PYTEST_TEXT)


def test_foreign_frames_are_dropped() -> None:
    other = PYTEST_TEXT.replace(
        ".venv/lib/python3.11/site-packages/decimal_utils/core.py:212: in quantize",
        ".venv/lib/python3.12/site-packages/decimal_utils/fast.py:9: in quantize_fast",
    ).replace("/usr/lib/python3.11/decimal.py:88: in _q", "/opt/py/lib/python3.12/dec.py:1: in q")
    assert failure_signature(NODE, other) == failure_signature(NODE, PYTEST_TEXT)
    shape = failure_shape(PYTEST_TEXT)
    assert "site-packages" not in shape
    assert "decimal.py" not in shape


def test_cpython_traceback_frames() -> None:
    text = """Traceback (most recent call last):
  File "src/pricing/rounding.py", line 41, in round_fee
    return quantize(amount)
  File "/usr/lib/python3.11/site-packages/x/y.py", line 12, in quantize
    raise ConnectionError("reset by peer")
ConnectionError: [Errno 104] Connection reset by peer
"""
    assert failure_shape(text).splitlines() == [
        "at src/pricing/rounding.py",
        "ConnectionError: [Errno ?] Connection reset by peer",
    ]


def test_captured_output_and_source_lines_are_ignored() -> None:
    other = PYTEST_TEXT.replace("computing fee for order 4411", "something else entirely")
    other = other.replace("    return quantize(amount)", "    return quantize(amount, ctx)")
    assert failure_signature(NODE, other) == failure_signature(NODE, PYTEST_TEXT)


def test_same_failure_at_another_line_has_the_same_signature() -> None:
    a = "tests/test_a.py:10: in test_x\nE   ValueError: bad fee 12\n"
    b = "tests/test_a.py:99: in test_x\nE   ValueError: bad fee 13\n"
    assert failure_signature("tests/test_a.py::test_x", a) == failure_signature(
        "tests/test_a.py::test_x", b
    )


def test_different_assertion_has_a_different_signature() -> None:
    other = PYTEST_TEXT.replace(
        "E       AssertionError: assert 10.0 == 10.01",
        "E       AssertionError: assert fee >= amount",
    )
    assert failure_signature(NODE, other) != failure_signature(NODE, PYTEST_TEXT)


def test_different_exception_has_a_different_signature() -> None:
    a = "E   TimeoutError: read timed out\n"
    b = "E   ConnectionResetError: reset by peer\n"
    assert failure_signature(NODE, a) != failure_signature(NODE, b)


def test_failure_in_another_own_frame_has_a_different_signature() -> None:
    other = PYTEST_TEXT.replace(
        "src/pricing/rounding.py:41: in round_fee", "src/pricing/tax.py:41: in tax"
    )
    assert failure_signature(NODE, other) != failure_signature(NODE, PYTEST_TEXT)


def test_signature_depends_on_the_node_id() -> None:
    assert failure_signature("tests/a.py::x", PYTEST_TEXT) != failure_signature(
        "tests/a.py::y", PYTEST_TEXT
    )


def test_whitespace_and_empty_text() -> None:
    assert failure_shape("") == ""
    assert failure_signature(NODE, "E   assert 1\n") == failure_signature(NODE, "E assert 2   \n\n")


def test_non_utf8_surrogates_do_not_crash() -> None:
    assert failure_signature(NODE, "E   assert '\udcff' == 'x'")


LONG_REPORT = """
    def test_a():
        y = 2
>       helper(y)

test_s.py:6:{trailing_space}
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

x = 2

    def helper(x):
>       assert x == 3, "bad"
E       AssertionError: bad
E       assert 2 == 3

test_s.py:2: AssertionError
""".format(trailing_space=" ")
SHORT_REPORT = """test_s.py:6: in test_a
    helper(y)
test_s.py:2: in helper
    assert x == 3, "bad"
E   AssertionError: bad
E   assert 2 == 3
"""


def test_long_and_short_tracebacks_of_one_failure_share_a_signature() -> None:
    node = "test_s.py::test_a"
    assert failure_shape(LONG_REPORT) == failure_shape(SHORT_REPORT)
    assert failure_signature(node, LONG_REPORT) == failure_signature(node, SHORT_REPORT)
    other = SHORT_REPORT.replace("AssertionError: bad", "AssertionError: worse")
    assert failure_signature(node, other) != failure_signature(node, SHORT_REPORT)
