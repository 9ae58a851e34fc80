"""Upload bodies for the run tests: evidence JSON, JUnit XML, and hostile inputs."""

import gzip
import json
import zlib
from typing import Any

SHA = "3f2a9c1d0b7e6f5a4c3b2a19f8e7d6c5b4a39281"


def record(nodeid: str, outcome: str = "passed", **fields: Any) -> dict[str, Any]:
    return {"nodeid": nodeid, "when": "call", "outcome": outcome, "xfail": False, **fields}


def evidence(records: list[dict[str, Any]], *, exit: int = 0, **top: Any) -> bytes:
    return json.dumps({"exit": exit, "records": records, **top}).encode()


MIXED_RECORDS = [
    record("tests/test_cart.py::test_total", duration=0.25),
    record("tests/test_cart.py::test_discount", "failed", signature="ab12cd34", duration=1.5),
    {
        "nodeid": "tests/test_net.py::test_fetch",
        "when": "setup",
        "outcome": "skipped",
        "xfail": False,
        "freeze": "FRZ-014",
    },
    record("tests/test_cart.py::test_rounding", "skipped", xfail=True),
    # A rerun: the last record of a node id decides its bucket.
    record("tests/test_flaky.py::test_retry", "failed"),
    record("tests/test_flaky.py::test_retry", "passed"),
]
MIXED = evidence(MIXED_RECORDS, exit=1, meta={"python": "3.11.7", "branch": "main"})
MIXED_BUCKETS = {
    "tests/test_cart.py::test_total": "passed",
    "tests/test_cart.py::test_discount": "failed",
    "tests/test_net.py::test_fetch": "skipped",
    "tests/test_cart.py::test_rounding": "xfail",
    "tests/test_flaky.py::test_retry": "passed",
}

JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites>
  <testsuite name="pytest" tests="4">
    <testcase classname="tests.test_cart" name="test_total" time="0.012"/>
    <testcase classname="tests.test_cart.TestTax" name="test_vat" time="0.3">
      <failure message="assert 19 == 20">AssertionError</failure>
    </testcase>
    <testcase classname="tests.test_net" name="test_fetch" time="0">
      <skipped type="pytest.skip" message="no network"/>
    </testcase>
    <testcase classname="tests.test_cart" name="test_rounding" time="0.001">
      <skipped type="pytest.xfail" message="known rounding bug"/>
    </testcase>
  </testsuite>
</testsuites>
"""
JUNIT_BUCKETS = {
    "tests/test_cart.py::test_total": "passed",
    "tests/test_cart.py::TestTax::test_vat": "failed",
    "tests/test_net.py::test_fetch": "skipped",
    "tests/test_cart.py::test_rounding": "xfail",
}

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE testsuites [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<testsuites><testsuite name="pytest">
  <testcase classname="tests.test_a" name="&lol9;"/>
</testsuite></testsuites>
"""


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def gzip_bomb(inflated_bytes: int) -> bytes:
    """A gzip stream of zeros that inflates to ``inflated_bytes`` (about 1000:1)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    parts = []
    for _ in range(inflated_bytes // len(block)):
        parts.append(compressor.compress(block))
    parts.append(compressor.flush())
    return b"".join(parts)
