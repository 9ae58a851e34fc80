"""The pytest plugin, run on small real suites through ``pytester`` in subprocesses (the plugin
is loaded there through its ``pytest11`` entry point, as in any CI image)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freezedebt_ci.evidence import FORMAT, read_evidence
from freezedebt_ci.plugin import LONGREPR_LIMIT, truncate_text
from freezedebt_ci.signatures import failure_signature

ENV_NAMES = (
    "EVIDENCE_OUT",
    "GITHUB_SHA",
    "CI_COMMIT_SHA",
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_COMMIT_BRANCH",
    "CI_COMMIT_REF_NAME",
    "IMAGE_DIGEST",
    "LOCKFILE_SHA256",
    "PROPERTY_LANE",
    "PYTEST_ADDOPTS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
)

# --- the suites ---------------------------------------------------------------------------

CONFTEST = """
import pytest

@pytest.fixture
def skipping_fixture():
    pytest.skip("no service in the fixture")

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup boom")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown boom")

def pytest_report_header(config):
    pm = config.pluginmanager
    return [
        f"probe: module={pm.has_plugin('freezedebt')} "
        f"session={pm.has_plugin('freezedebt-session')}"
    ]
"""

KINDS = """
import pytest

def test_pass():
    pass

def test_fail():
    assert 1 == 2

@pytest.mark.skip(reason="marker skip")
def test_skip_marker():
    pass

def test_skip_fixture(skipping_fixture):
    pass

def test_skip_body():
    pytest.skip("body skip")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert 0

@pytest.mark.xfail(reason="known")
def test_xpass():
    pass

@pytest.mark.xfail(strict=True, reason="must fail")
def test_xfail_strict():
    assert 0

@pytest.mark.xfail(strict=True, reason="must fail")
def test_xpass_strict():
    pass

@pytest.mark.xfail(run=False, reason="not run")
def test_xfail_notrun():
    pass

def test_setup_error(broken_setup):
    pass

def test_teardown_error(broken_teardown):
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n == 1

@pytest.mark.parametrize("word", ["alpha", "beta"], ids=["a-id", "b id"])
def test_ids(word):
    assert word

class TestGroup:
    def test_method(self):
        pass
"""

MARKED_MODULE = """
import pytest

pytestmark = pytest.mark.skip(reason="whole module")

def test_one():
    pass

def test_two():
    pass
"""

SKIPPED_MODULE = """
import pytest

pytest.skip("needs a service", allow_module_level=True)

def test_never():
    pass
"""

K = "test_kinds.py::"
EXPECTED_KINDS = {
    (K + "test_pass", "call", "passed", False),
    (K + "test_fail", "call", "failed", False),
    (K + "test_skip_marker", "setup", "skipped", False),
    (K + "test_skip_fixture", "setup", "skipped", False),
    (K + "test_skip_body", "call", "skipped", False),
    (K + "test_xfail", "call", "skipped", True),
    (K + "test_xpass", "call", "passed", True),
    (K + "test_xfail_strict", "call", "skipped", True),
    (K + "test_xpass_strict", "call", "failed", False),
    (K + "test_xfail_notrun", "setup", "skipped", True),
    (K + "test_setup_error", "setup", "failed", False),
    (K + "test_teardown_error", "call", "passed", False),
    (K + "test_teardown_error", "teardown", "failed", False),
    (K + "test_param[1]", "call", "passed", False),
    (K + "test_param[2]", "call", "failed", False),
    (K + "test_ids[a-id]", "call", "passed", False),
    (K + "test_ids[b id]", "call", "passed", False),
    (K + "TestGroup::test_method", "call", "passed", False),
    ("test_marked_module.py::test_one", "setup", "skipped", False),
    ("test_marked_module.py::test_two", "setup", "skipped", False),
    ("test_skipped_module.py", "setup", "skipped", False),
}

FROZEN = """
import pathlib
import pytest

@pytest.fixture
def marks_setup():
    pathlib.Path("setup-ran.txt").write_text("yes")

def test_flaky_network(marks_setup):
    raise AssertionError("ran although frozen")

def test_expired():
    raise TimeoutError("service timed out")

def test_reset():
    if pathlib.Path("mode.txt").read_text().strip() == "reset":
        raise ConnectionResetError("peer reset the connection")
    assert 6 * 7 == 41

def test_healed():
    pass

def test_clean():
    pass
"""

F = "test_frozen.py::"
MODE_RESET = "reset"
MODE_ASSERT = "assert"


def freeze_toml(
    freeze_id: str,
    test: str,
    *,
    expires: str = "2030-02-01",
    owner: str = "team-net",
    signature: str | None = None,
) -> str:
    lines = [
        "[[freeze]]",
        f'id = "{freeze_id}"',
        f'test = "{test}"',
        'covers = ["src/net/**"]',
        f'owner = "{owner}"',
        "opened = 2029-12-01",
        f"expires = {expires}",
        'reason = "connection reset by the sandbox network"',
        'class = "network-dependent"',
    ]
    if signature is not None:
        lines.append(f'signature = "{signature}"')
    return "\n".join(lines) + "\n\n"


# --- helpers ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin reads CI variables; the runs below must not see the outer job's."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def load(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def keys(document: dict[str, Any]) -> set[tuple[str, str, str, bool]]:
    return {(r["nodeid"], r["when"], r["outcome"], r["xfail"]) for r in document["records"]}


def by_node(document: dict[str, Any], when: str | None = None) -> dict[str, dict[str, Any]]:
    return {r["nodeid"]: r for r in document["records"] if when is None or r["when"] == when}


def comparable(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Records without their timings, in a stable order."""
    fields = ("nodeid", "when", "outcome", "xfail", "longrepr", "signature", "freeze")
    return sorted(tuple(str(r.get(name)) for name in fields) for r in document["records"])


def make_kinds(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_kinds=KINDS, test_marked_module=MARKED_MODULE, test_skipped_module=SKIPPED_MODULE
    )


def make_frozen(pytester: pytest.Pytester, mode: str = MODE_RESET) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_frozen=FROZEN)
    (pytester.path / "mode.txt").write_text(mode)


def reset_signature(pytester: pytest.Pytester) -> str:
    """The signature ``test_reset`` fails with, as the plugin records it (no ledger)."""
    result = run(pytester, "--evidence-out", "probe.json", F + "test_reset")
    assert result.ret == 1
    record = by_node(load(pytester.path / "probe.json"))[F + "test_reset"]
    assert "ConnectionResetError" in record["longrepr"]
    signature = record["signature"]
    assert isinstance(signature, str)
    assert re.fullmatch(r"[0-9a-f]{16}", signature)
    return signature


def stray_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".json", ".tmp"))


# --- loading and inertness ----------------------------------------------------------------


def test_the_entry_point_loads_the_plugin_and_its_options(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*Freeze Debt evidence and freeze ledger*",
            "*--evidence-out=PATH*",
            "*--freeze-ledger=PATH*",
            "*--freeze-today=YYYY-MM-DD*",
            "*--lockfile=PATH*",
        ]
    )


@pytest.mark.parametrize("evidence_env", [None, ""])
def test_inert_without_options(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, evidence_env: str | None
) -> None:
    if evidence_env is not None:
        monkeypatch.setenv("EVIDENCE_OUT", evidence_env)
    make_kinds(pytester)
    before = {p.name for p in pytester.path.iterdir()}
    result = run(pytester, "-rs")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["probe: module=True session=False"])
    assert "freezedebt:" not in result.stdout.str()  # no header, no summary line
    new = {p.name for p in pytester.path.iterdir()} - before
    # pytester's own: its basetemp, the captured streams and __pycache__
    assert all(
        name.startswith("runpytest-") or name in ("__pycache__", "stdout", "stderr") for name in new
    ), new
    assert stray_files(pytester.path) == []
    # the suite itself ran as pytest alone runs it
    result.assert_outcomes(
        passed=6, failed=3, skipped=6, xfailed=3, xpassed=1, errors=2, warnings=0
    )


# --- records ------------------------------------------------------------------------------


def test_records_for_every_kind_of_report(pytester: pytest.Pytester) -> None:
    make_kinds(pytester)
    result = run(pytester, "--evidence-out", "evidence.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "probe: module=True session=True",
            "freezedebt: evidence to *evidence.json",
            f"freezedebt: {len(EXPECTED_KINDS)} evidence records written to *evidence.json",
        ]
    )
    document = load(pytester.path / "evidence.json")
    assert document["format"] == FORMAT
    assert document["exit"] == 1
    assert keys(document) == EXPECTED_KINDS
    assert len(document["records"]) == len(EXPECTED_KINDS)  # no duplicates, no passing setups

    for record in document["records"]:
        if record["nodeid"] != "test_skipped_module.py":
            assert isinstance(record["duration"], float)
            assert record["duration"] >= 0
        assert "freeze" not in record
        if record["outcome"] == "failed":
            text = record["longrepr"]
            assert text
            # short texts are kept whole, so a later check recomputes the same signature
            assert record["signature"] == failure_signature(record["nodeid"], text)
        else:
            assert "longrepr" not in record
            assert "signature" not in record

    calls = by_node(document, "call")
    assert "assert 1 == 2" in calls[K + "test_fail"]["longrepr"]
    assert "[XPASS(strict)] must fail" in calls[K + "test_xpass_strict"]["longrepr"]
    assert "assert 2 == 1" in calls[K + "test_param[2]"]["longrepr"]
    assert "setup boom" in by_node(document, "setup")[K + "test_setup_error"]["longrepr"]
    assert "teardown boom" in by_node(document, "teardown")[K + "test_teardown_error"]["longrepr"]
    # the same assertion in two tests: different node ids, different signatures
    assert calls[K + "test_fail"]["signature"] != calls[K + "test_param[2]"]["signature"]


def test_evidence_reads_back_into_the_right_buckets(pytester: pytest.Pytester) -> None:
    make_kinds(pytester)
    run(pytester, "--evidence-out", "evidence.json")
    evidence = read_evidence(pytester.path / "evidence.json")
    buckets = evidence.buckets()
    assert evidence.exit == 1
    assert buckets.passed == {
        K + "test_pass",
        K + "test_param[1]",
        K + "test_ids[a-id]",
        K + "test_ids[b id]",
        K + "TestGroup::test_method",
    }
    assert buckets.failed == {
        K + "test_fail",
        K + "test_xpass_strict",
        K + "test_setup_error",
        K + "test_teardown_error",
        K + "test_param[2]",
    }
    assert buckets.skipped == {
        K + "test_skip_marker",
        K + "test_skip_fixture",
        K + "test_skip_body",
        "test_marked_module.py::test_one",
        "test_marked_module.py::test_two",
        "test_skipped_module.py",
    }
    assert buckets.xfail == {
        K + "test_xfail",
        K + "test_xpass",
        K + "test_xfail_strict",
        K + "test_xfail_notrun",
    }
    assert evidence.meta["python"] == platform.python_version()


def test_a_module_that_cannot_be_imported_is_a_failed_record(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_ok="def test_ok():\n    pass\n",
        test_broken="import no_such_module_here\n\ndef test_never():\n    pass\n",
    )
    result = run(pytester, "--evidence-out", "e.json", "--continue-on-collection-errors")
    assert result.ret == 1
    document = load(pytester.path / "e.json")
    assert keys(document) == {
        ("test_ok.py::test_ok", "call", "passed", False),
        ("test_broken.py", "setup", "failed", False),
    }
    broken = by_node(document)["test_broken.py"]
    assert "No module named 'no_such_module_here'" in broken["longrepr"]
    assert broken["signature"] == failure_signature("test_broken.py", broken["longrepr"])
    assert read_evidence(pytester.path / "e.json").buckets().failed == {"test_broken.py"}


def test_no_tests_collected_still_writes_the_exit_status(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_empty="X = 1\n")
    result = run(pytester, "--evidence-out", "e.json")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    document = load(pytester.path / "e.json")
    assert document["exit"] == 5
    assert document["records"] == []


# --- pytest-xdist -------------------------------------------------------------------------


def test_xdist_gives_the_same_evidence(pytester: pytest.Pytester) -> None:
    make_kinds(pytester)
    make_frozen(pytester)
    signature = reset_signature(pytester)
    ledger = pytester.path / "ledger.toml"
    ledger.write_text(
        freeze_toml("FRZ-001", F + "test_flaky_network")
        + freeze_toml("FRZ-002", F + "test_reset", signature=signature)
        + freeze_toml("FRZ-003", F + "test_expired", expires="2029-12-31")
    )
    common = ("--freeze-ledger", "ledger.toml", "--freeze-today", "2030-01-15", "-p", "xdist")
    serial = run(pytester, "--evidence-out", "serial.json", "-n", "0", *common)
    parallel = run(pytester, "--evidence-out", "parallel.json", "-n", "2", *common)
    assert serial.ret == parallel.ret == 1
    parallel.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    assert "created:" not in serial.stdout.str()

    one, two = load(pytester.path / "serial.json"), load(pytester.path / "parallel.json")
    assert comparable(one) == comparable(two)
    assert one["exit"] == two["exit"] == 1
    assert one["meta"]["ledger_sha256"] == two["meta"]["ledger_sha256"]
    assert set(one["meta"]) == set(two["meta"])
    frozen = {r["nodeid"]: r["freeze"] for r in two["records"] if "freeze" in r}
    assert frozen == {F + "test_flaky_network": "FRZ-001", F + "test_reset": "FRZ-002"}
    assert keys(two) >= EXPECTED_KINDS
    # only the controller writes: one file per run, no leftovers from workers
    assert sorted(p.name for p in stray_files(pytester.path)) == [
        "parallel.json",
        "probe.json",
        "serial.json",
    ]
    assert not (pytester.path / "setup-ran.txt").exists()


def test_a_crashed_xdist_worker_is_a_failed_call(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_crash="import os\n\ndef test_crash():\n    os._exit(3)\n\ndef test_fine():\n    pass\n"
    )
    result = run(pytester, "--evidence-out", "e.json", "-p", "xdist", "-n", "1")
    assert result.ret == 1
    document = load(pytester.path / "e.json")
    crash = by_node(document)["test_crash.py::test_crash"]
    assert (crash["when"], crash["outcome"], crash["xfail"]) == ("call", "failed", False)
    assert "crashed" in crash["longrepr"]
    assert ("test_crash.py::test_fine", "call", "passed", False) in keys(document)
    read_evidence(pytester.path / "e.json")  # still valid evidence


# --- the ledger ---------------------------------------------------------------------------


def test_an_active_freeze_skips_its_test_with_id_expiry_and_owner(
    pytester: pytest.Pytester,
) -> None:
    make_frozen(pytester)
    (pytester.path / "ledger.toml").write_text(
        freeze_toml("FRZ-001", F + "test_flaky_network", owner="team-net")
        + freeze_toml("FRZ-404", "test_gone.py::test_renamed")  # not collected: fine
    )
    result = run(
        pytester,
        "--freeze-ledger",
        "ledger.toml",
        "--freeze-today",
        "2030-01-15",
        "--evidence-out",
        "e.json",
        "-rs",
        F + "test_flaky_network",
        F + "test_clean",
    )
    assert result.ret == 0
    result.stdout.re_match_lines(
        [
            r"freezedebt: ledger .*ledger\.toml: 2 freezes, 2 active, 0 expired on 2030-01-15",
            r"SKIPPED \[1\] test_frozen\.py:\d+: frozen FRZ-001 until 2030-02-01 \(team-net\)",
        ]
    )
    result.assert_outcomes(passed=1, skipped=1)
    assert not (pytester.path / "setup-ran.txt").exists()  # not even its fixtures ran
    record = by_node(load(pytester.path / "e.json"))[F + "test_flaky_network"]
    assert record == {
        "nodeid": F + "test_flaky_network",
        "when": "setup",
        "outcome": "skipped",
        "xfail": False,
        "duration": record["duration"],
        "freeze": "FRZ-001",
    }


@pytest.mark.parametrize(
    ("today", "frozen"), [("2030-02-01", True), ("2030-02-02", False), ("2029-06-01", True)]
)
def test_a_freeze_is_active_through_its_expiry_day(
    pytester: pytest.Pytester, today: str, frozen: bool
) -> None:
    make_frozen(pytester)
    (pytester.path / "ledger.toml").write_text(freeze_toml("FRZ-001", F + "test_flaky_network"))
    result = run(
        pytester,
        "--freeze-ledger",
        "ledger.toml",
        "--freeze-today",
        today,
        "--evidence-out",
        "e.json",
        F + "test_flaky_network",
    )
    record = by_node(load(pytester.path / "e.json"))[F + "test_flaky_network"]
    if frozen:
        assert result.ret == 0
        assert (record["when"], record["outcome"], record["freeze"]) == (
            "setup",
            "skipped",
            "FRZ-001",
        )
    else:
        # expired: not applied, so the test runs and fails in the open
        assert result.ret == 1
        assert (record["when"], record["outcome"]) == ("call", "failed")
        assert "freeze" not in record
        assert "ran although frozen" in record["longrepr"]
        assert (pytester.path / "setup-ran.txt").exists()


def test_an_expired_freeze_lets_its_test_fail_in_the_open(pytester: pytest.Pytester) -> None:
    make_frozen(pytester)
    (pytester.path / "ledger.toml").write_text(
        freeze_toml("FRZ-003", F + "test_expired", expires="2029-12-31")
    )
    result = run(
        pytester,
        "--freeze-ledger",
        "ledger.toml",
        "--freeze-today",
        "2030-01-15",
        "--evidence-out",
        "e.json",
        "-rf",
        F + "test_expired",
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(["FAILED test_frozen.py::test_expired - TimeoutError: *"])
    result.stdout.fnmatch_lines(
        ["freezedebt: ledger *ledger.toml: 1 freeze, 0 active, 1 expired on 2030-01-15"]
    )
    record = by_node(load(pytester.path / "e.json"))[F + "test_expired"]
    assert (record["outcome"], record["xfail"]) == ("failed", False)
    assert "freeze" not in record


def test_a_signature_freeze_xfails_only_the_matching_failure(pytester: pytest.Pytester) -> None:
    make_frozen(pytester)
    signature = reset_signature(pytester)
    (pytester.path / "ledger.toml").write_text(
        freeze_toml("FRZ-002", F + "test_reset", signature=signature)
        + freeze_toml("FRZ-005", F + "test_healed", signature=signature)
    )
    args = (
        "--freeze-ledger",
        "ledger.toml",
        "--freeze-today",
        "2030-01-15",
        "--evidence-out",
        "e.json",
        "-rxf",
        F + "test_reset",
        F + "test_healed",
    )

    # the failure the freeze names: an xfail, with the freeze's id
    matched = run(pytester, *args)
    assert matched.ret == 0
    matched.assert_outcomes(passed=1, xfailed=1)
    matched.stdout.fnmatch_lines(
        [
            f"XFAIL test_frozen.py::test_reset - frozen FRZ-002 until 2030-02-01 (team-net): "
            f"failure signature {signature}"
        ]
    )
    document = load(pytester.path / "e.json")
    record = by_node(document)[F + "test_reset"]
    assert (record["when"], record["outcome"], record["xfail"]) == ("call", "skipped", True)
    assert record["freeze"] == "FRZ-002"
    assert record["signature"] == signature
    assert "ConnectionResetError" in record["longrepr"]
    # a signature freeze on a test that passes: it simply passed
    healed = by_node(document)[F + "test_healed"]
    assert (healed["outcome"], healed["xfail"]) == ("passed", False)
    assert "freeze" not in healed
    assert read_evidence(pytester.path / "e.json").buckets().xfail == {F + "test_reset"}

    # the same test failing differently: a failure, not a frozen flake
    (pytester.path / "mode.txt").write_text(MODE_ASSERT)
    mismatched = run(pytester, *args)
    assert mismatched.ret == 1
    mismatched.assert_outcomes(passed=1, failed=1)
    mismatched.stdout.fnmatch_lines(["FAILED test_frozen.py::test_reset - assert (6 * 7) == 41"])
    record = by_node(load(pytester.path / "e.json"))[F + "test_reset"]
    assert (record["outcome"], record["xfail"]) == ("failed", False)
    assert "freeze" not in record
    assert record["signature"] != signature
    assert record["signature"] == failure_signature(F + "test_reset", record["longrepr"])


def test_an_expired_signature_freeze_is_not_applied(pytester: pytest.Pytester) -> None:
    make_frozen(pytester)
    signature = reset_signature(pytester)
    (pytester.path / "ledger.toml").write_text(
        freeze_toml("FRZ-002", F + "test_reset", signature=signature, expires="2029-12-31")
    )
    result = run(
        pytester,
        "--freeze-ledger",
        "ledger.toml",
        "--freeze-today",
        "2030-01-15",
        "--evidence-out",
        "e.json",
        F + "test_reset",
    )
    assert result.ret == 1
    record = by_node(load(pytester.path / "e.json"))[F + "test_reset"]
    assert (record["outcome"], record["signature"]) == ("failed", signature)
    assert "freeze" not in record


def test_a_json_ledger_keyed_by_node_id_is_enforced_without_evidence(
    pytester: pytest.Pytester,
) -> None:
    make_frozen(pytester)
    ledger = {
        F + "test_flaky_network": {
            "covers": ["src/net/**"],
            "owner": "ops@example.com",
            "until": "2030-02-01",
            "reason": "sandbox network resets connections",
        }
    }
    (pytester.path / "ledger.json").write_text(json.dumps(ledger))
    result = run(
        pytester,
        "--freeze-ledger",
        "ledger.json",
        "--freeze-today",
        "2030-01-15",
        "-rs",
        F + "test_flaky_network",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] test_frozen.py:*: frozen test_frozen.py::test_flaky_network "
            "until 2030-02-01 (ops@example.com)"
        ]
    )
    assert stray_files(pytester.path) == [pytester.path / "ledger.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot be read (No such file or directory)"),
        ("[[freeze]\nid = 1", "invalid TOML"),
        ('[[freeze]]\nid = "FRZ-1"\nexpires = "soon"\n', "expected a date as YYYY-MM-DD"),
    ],
)
def test_an_unreadable_ledger_is_a_usage_error(
    pytester: pytest.Pytester, content: str | None, message: str
) -> None:
    make_frozen(pytester)
    if content is not None:
        (pytester.path / "ledger.toml").write_text(content)
    result = run(pytester, "--freeze-ledger", "ledger.toml", "--evidence-out", "e.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --freeze-ledger: *ledger.toml: *{message}*"])
    assert not (pytester.path / "e.json").exists()


def test_a_bad_freeze_today_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_frozen(pytester)
    (pytester.path / "ledger.toml").write_text(freeze_toml("FRZ-001", F + "test_flaky_network"))
    result = run(pytester, "--freeze-ledger", "ledger.toml", "--freeze-today", "2030-13-01")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--freeze-today: expected a date as YYYY-MM-DD, got '2030-13-01'"]
    )


# --- where the evidence goes --------------------------------------------------------------


def test_evidence_out_from_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    monkeypatch.setenv("EVIDENCE_OUT", "out/env-evidence.json")
    result = run(pytester)
    assert result.ret == 0
    document = load(pytester.path / "out" / "env-evidence.json")  # parent made on the way
    assert keys(document) == {("test_one.py::test_one", "call", "passed", False)}
    assert document["exit"] == 0

    # the option, when given, wins over the environment
    (pytester.path / "out" / "env-evidence.json").unlink()
    result = run(pytester, "--evidence-out", "option.json")
    assert result.ret == 0
    assert (pytester.path / "option.json").exists()
    assert not (pytester.path / "out" / "env-evidence.json").exists()


def test_an_evidence_path_that_cannot_be_made_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    (pytester.path / "plain-file").write_text("x")
    result = run(pytester, "--evidence-out", "plain-file/e.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --evidence-out: cannot create *plain-file*"])


def test_evidence_that_cannot_be_written_fails_the_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    (pytester.path / "a-directory").mkdir()
    result = run(pytester, "--evidence-out", "a-directory")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["freezedebt: ERROR: cannot write evidence to *a-directory*"])
    assert list((pytester.path / "a-directory").iterdir()) == []
    assert stray_files(pytester.path) == []


# --- meta ---------------------------------------------------------------------------------


def test_meta_from_the_environment_and_the_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    monkeypatch.setenv("CI_COMMIT_SHA", "ffffffffffffffffffffffffffffffffffffffff")
    monkeypatch.setenv("GITHUB_HEAD_REF", "feature/login")
    monkeypatch.setenv("GITHUB_REF_NAME", "12/merge")
    monkeypatch.setenv("IMAGE_DIGEST", "sha256:" + "ab" * 32)
    monkeypatch.setenv("LOCKFILE_SHA256", "cd" * 32)
    monkeypatch.setenv("PROPERTY_LANE", "hunt")
    (pytester.path / "ledger.toml").write_text(freeze_toml("FRZ-001", "test_one.py::test_x"))
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    result = run(pytester, "--evidence-out", "e.json", "--freeze-ledger", "ledger.toml")
    after = dt.datetime.now(dt.UTC)
    assert result.ret == 0
    meta = load(pytester.path / "e.json")["meta"]
    assert meta["sha"] == "0123456789abcdef0123456789abcdef01234567"
    assert meta["branch"] == "feature/login"
    assert meta["python"] == platform.python_version()
    assert meta["pytest"] == pytest.__version__
    assert meta["platform"] == platform.platform()
    assert meta["image_digest"] == "sha256:" + "ab" * 32
    assert meta["lockfile_sha256"] == "cd" * 32
    assert meta["property_lane"] == "hunt"
    ledger_bytes = (pytester.path / "ledger.toml").read_bytes()
    assert meta["ledger_sha256"] == hashlib.sha256(ledger_bytes).hexdigest()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["started_at"])
    started = dt.datetime.strptime(meta["started_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    assert before <= started <= after
    assert isinstance(meta["duration"], float)
    assert 0 <= meta["duration"] <= (after - before).total_seconds() + 1


def test_meta_leaves_out_what_it_cannot_know(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(pytester.path.parent))
    result = run(pytester, "--evidence-out", "e.json")
    assert result.ret == 0
    meta = load(pytester.path / "e.json")["meta"]
    assert set(meta) == {"python", "pytest", "platform", "started_at", "duration"}


def test_meta_sha_and_branch_from_git(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(pytester.path.parent))
    for name, value in (
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@example.com"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@example.com"),
    ):
        monkeypatch.setenv(name, value)

    def git_run(*args: str) -> str:
        done = subprocess.run(
            [git, *args], cwd=pytester.path, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    git_run("init", "-q")
    git_run("checkout", "-q", "-b", "topic/evidence")
    git_run("add", "test_one.py")
    git_run("commit", "-q", "-m", "one test")
    head = git_run("rev-parse", "HEAD")
    result = run(pytester, "--evidence-out", "e.json")
    assert result.ret == 0
    meta = load(pytester.path / "e.json")["meta"]
    assert (meta["sha"], meta["branch"]) == (head, "topic/evidence")

    # a detached head has a sha and no branch
    git_run("checkout", "-q", "--detach")
    run(pytester, "--evidence-out", "e.json")
    meta = load(pytester.path / "e.json")["meta"]
    assert meta["sha"] == head
    assert "branch" not in meta


def test_lockfile_option_hashes_the_file_and_wins_over_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    monkeypatch.setenv("LOCKFILE_SHA256", "00" * 32)
    (pytester.path / "requirements.lock").write_bytes(b"pytest==9.2.0\n")
    result = run(pytester, "--evidence-out", "e.json", "--lockfile", "requirements.lock")
    assert result.ret == 0
    meta = load(pytester.path / "e.json")["meta"]
    assert meta["lockfile_sha256"] == hashlib.sha256(b"pytest==9.2.0\n").hexdigest()

    missing = run(pytester, "--evidence-out", "e.json", "--lockfile", "nope.lock")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["ERROR: --lockfile: cannot read *nope.lock*"])


def test_an_unknown_property_lane_is_left_out_with_a_warning(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    monkeypatch.setenv("PROPERTY_LANE", "fuzz")
    result = run(pytester, "--evidence-out", "e.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*PROPERTY_LANE='fuzz' is neither 'pinned' nor 'hunt'*"])
    assert "property_lane" not in load(pytester.path / "e.json")["meta"]


# --- failure text -------------------------------------------------------------------------

CAPTURE_CONFTEST = """
import json

def pytest_runtest_logreport(report):
    if report.failed:
        with open("full-text.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps({"nodeid": report.nodeid, "text": report.longreprtext}) + "\\n")
"""

LONG_FAILURE = """
def test_long():
    raise ValueError("head-marker " + "\\u00e9" * 5000 + " tail-marker")
"""


def test_longrepr_is_cut_to_4_kib_and_signed_from_the_whole_text(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(CAPTURE_CONFTEST)
    pytester.makepyfile(test_long=LONG_FAILURE)
    result = run(pytester, "--evidence-out", "e.json")
    assert result.ret == 1
    record = by_node(load(pytester.path / "e.json"))["test_long.py::test_long"]
    full = json.loads((pytester.path / "full-text.jsonl").read_text(encoding="utf-8"))["text"]
    assert len(full.encode()) > 10_000
    text = record["longrepr"]
    assert len(text.encode("utf-8")) <= LONGREPR_LIMIT
    assert re.search(r"\n\[\.\.\. \d+ bytes cut \.\.\.\]\n", text)
    assert "head-marker" in text  # the start of the failure ...
    assert re.search(r"\ntest_long\.py:\d+: ValueError$", text)  # ... and where it happened
    assert record["signature"] == failure_signature("test_long.py::test_long", full)
    assert record["signature"] != failure_signature("test_long.py::test_long", text)


@given(text=st.text(), limit=st.integers(min_value=64, max_value=400))
def test_truncate_text_keeps_within_the_limit_and_whole_characters(text: str, limit: int) -> None:
    out = truncate_text(text, limit)
    size = len(text.encode("utf-8"))
    assert len(out.encode("utf-8")) <= limit
    if size <= limit:
        assert out == text
    else:
        match = re.search(r"\n\[\.\.\. (\d+) bytes cut \.\.\.\]\n", out)
        assert match is not None
        head, tail = out[: match.start()], out[match.end() :]
        assert text.startswith(head)
        assert text.endswith(tail)
        assert len(head.encode()) + int(match.group(1)) + len(tail.encode()) == size
        assert len(out.encode("utf-8")) >= limit - 8  # cut only to keep characters whole


def test_truncate_text_replaces_what_utf8_cannot_carry() -> None:
    assert truncate_text("a\udcffb") == "a?b"


def test_the_run_names_every_invalid_and_expired_freeze(pytester: pytest.Pytester) -> None:
    make_frozen(pytester)
    (pytester.path / "ledger.toml").write_text(
        # a date in the past year: expired, and before it was opened
        freeze_toml("FRZ-001", F + "test_expired", expires="2029-01-20")
        + freeze_toml("FRZ-002", F + "test_clean")
        .replace('reason = "connection reset by the sandbox network"', 'reason = "assert x == 1"')
        .replace('class = "network-dependent"\n', "")
    )
    result = run(
        pytester,
        "-q",
        "--freeze-ledger",
        "ledger.toml",
        "--freeze-today",
        "2030-01-15",
        F + "test_clean",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "freezedebt: invalid freeze FRZ-001: expires before it was opened",
            "freezedebt: expired freeze FRZ-001: expired on 2029-01-20, so "
            "test_frozen.py::test_expired runs unfrozen",
            "freezedebt: invalid freeze FRZ-002: runs 62 days, more than the 14 days policy "
            "allows; reason is an assertion message, not an environmental signal",
        ]
    )


def test_a_misspelt_ledger_field_stops_the_run_naming_its_line(pytester: pytest.Pytester) -> None:
    make_frozen(pytester)
    (pytester.path / "ledger.toml").write_text(
        freeze_toml("FRZ-001", F + "test_flaky_network").replace("expires =", "expirse =")
    )
    result = run(pytester, "--freeze-ledger", "ledger.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --freeze-ledger: *ledger.toml: freeze[[]0[]].expirse: "
            "unknown field 'expirse': did you mean 'expires'? (line 7)"
        ]
    )
