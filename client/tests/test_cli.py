"""The ``freezedebt-ci delta`` command, end to end, with the seed-002 trace."""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from freezedebt_ci import cli
from freezedebt_ci.changes import parse_name_status
from freezedebt_ci.evidence import read_evidence
from freezedebt_ci.exits import verdict_exit
from freezedebt_ci.ledger import read_ledger
from freezedebt_ci.report import ACTIONS, compute_report

FROZEN = "tests/test_pricing.py::test_rounding_boundary"
CHECK = "tests/property/test_rounding.py::test_fee_monotonic"
TODAY = "2026-11-05"

SEED_LEDGER = """\
[[freeze]]
id = "FRZ-014"
test = "tests/test_pricing.py::test_rounding_boundary"
covers = ["src/pricing/rounding.py"]
owner = "finley"
opened = 2026-10-30
expires = 2026-11-13
reason = "wall-clock boundary; fails ~1/40 CI runs, see run 8812"
compensating_check = "tests/property/test_rounding.py::test_fee_monotonic"
"""


def suite(count: int, *, with_check: bool) -> list[str]:
    """``count`` passing node ids over a few files, the last two of them in test_pricing.py."""
    files = ["tests/test_cart.py", "tests/test_orders.py", "tests/api/test_users.py"]
    ids = [f"{files[i % 3]}::test_case_{i}" for i in range(count - 2)]
    ids += ["tests/test_pricing.py::test_total", "tests/test_pricing.py::test_tax"]
    if with_check:
        ids[0] = CHECK
    return ids


def evidence_doc(passed: list[str], skipped: list[str], exit: int = 0) -> dict[str, Any]:
    # the seed's collector: call records, plus setup-phase skips
    records = [{"nodeid": n, "when": "call", "outcome": "passed", "xfail": False} for n in passed]
    records += [
        {"nodeid": n, "when": "setup", "outcome": "skipped", "xfail": False} for n in skipped
    ]
    return {"exit": exit, "records": records}


def seed_files(tmp_path: Path, *, with_check: bool) -> dict[str, Path]:
    base = suite(412, with_check=with_check)
    head = [*base, "tests/test_pricing.py::test_half_up", "tests/test_pricing.py::test_half_even"]
    paths = {
        "base": tmp_path / "base.json",
        "head": tmp_path / "head.json",
        "ledger": tmp_path / "freeze_ledger.toml",
        "changed": tmp_path / "changed.txt",
    }
    paths["base"].write_text(json.dumps(evidence_doc(base, [FROZEN]), indent=2), "utf-8")
    paths["head"].write_text(json.dumps(evidence_doc(head, [FROZEN]), indent=2), "utf-8")
    paths["ledger"].write_text(SEED_LEDGER, "utf-8")
    paths["changed"].write_text("M\tsrc/pricing/rounding.py\nM\ttests/test_pricing.py\n", "utf-8")
    return paths


def delta_args(paths: dict[str, Path], *extra: str) -> list[str]:
    return [
        "delta",
        str(paths["base"]),
        str(paths["head"]),
        "--ledger",
        str(paths["ledger"]),
        "--changed",
        str(paths["changed"]),
        "--today",
        TODAY,
        *extra,
    ]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse ends usage errors and --help this way
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


# --- the seed-002 trace -----------------------------------------------------------------------


def test_seed_trace_plus_two_over_a_frozen_file_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = seed_files(tmp_path, with_check=False)
    code, out, err = run_cli(delta_args(paths, "--json"), capsys)
    assert (code, err) == (1, "")
    report = json.loads(out)
    assert report["verdict"] == "block"
    assert report["figures"] == {
        "base": {"passed": 412, "failed": 0, "skipped": 1, "xfail": 0},
        "head": {"passed": 414, "failed": 0, "skipped": 1, "xfail": 0},
        "net_executed_delta": 2,
        "earned": 2,
        "borrowed": 412,
    }
    assert report["new_skips"] == report["retired_skips"] == report["lost"] == []
    assert report["frozen_surface_hits"] == [
        {
            "freeze": "FRZ-014",
            "test": FROZEN,
            "paths": ["src/pricing/rounding.py"],
            "compensated": False,
        }
    ]
    assert report["problems"] == [
        {
            "code": "frozen-surface",
            "severity": "block",
            "message": "src/pricing/rounding.py is guarded only by frozen FRZ-014",
            "items": ["src/pricing/rounding.py"],
            "origin": "patch",
            "owners": ["finley"],
            "action": ACTIONS["frozen-surface"],
        }
    ]
    pricing = next(row for row in report["per_file"] if row["file"] == "tests/test_pricing.py")
    assert (pricing["base_passed"], pricing["head_passed"], pricing["delta"]) == (2, 4, 2)


def test_seed_trace_with_compensating_check_passing_warns_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = seed_files(tmp_path, with_check=True)
    code, out, err = run_cli(delta_args(paths, "--json"), capsys)
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["verdict"] == "pass"
    assert report["figures"]["net_executed_delta"] == 2
    assert report["frozen_surface_hits"][0]["compensated"] is True
    assert [(p["code"], p["severity"]) for p in report["problems"]] == [("frozen-surface", "warn")]


def test_seed_trace_text_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(delta_args(seed_files(tmp_path, with_check=False)), capsys)
    assert code == 1
    assert out.startswith("verdict: BLOCK")
    assert "net executed delta : +2" in out
    assert "frozen surface hit : FRZ-014 (open)" in out
    assert "BLOCK frozen-surface: src/pricing/rounding.py is guarded only by frozen FRZ-014" in out


def test_seed_trace_after_expiry_also_blocks_on_the_expired_freeze(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = delta_args(seed_files(tmp_path, with_check=True), "--json")
    argv[argv.index(TODAY)] = "2026-11-14"
    code, out, _ = run_cli(argv, capsys)
    report = json.loads(out)
    assert code == 1
    assert report["expired_freezes"] == ["FRZ-014"]
    assert report["frozen_surface_hits"] == []


def test_json_output_equals_compute_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = seed_files(tmp_path, with_check=False)
    _, out, _ = run_cli(delta_args(paths, "--json"), capsys)
    expected = compute_report(
        base=read_evidence(paths["base"]),
        head=read_evidence(paths["head"]),
        freezes=read_ledger(paths["ledger"]),
        changes=parse_name_status(paths["changed"].read_text("utf-8")),
        today=dt.date.fromisoformat(TODAY),
    )
    assert json.loads(out) == expected


def test_gzip_and_junit_evidence_work_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = seed_files(tmp_path, with_check=False)
    gz = tmp_path / "base.json.gz"
    gz.write_bytes(gzip.compress(paths["base"].read_bytes()))
    junit = tmp_path / "head.xml"
    cases = []
    for record in json.loads(paths["head"].read_text("utf-8"))["records"]:
        file, name = record["nodeid"].split("::")
        classname = file.removesuffix(".py").replace("/", ".")
        skipped = "<skipped/>" if record["outcome"] == "skipped" else ""
        cases.append(f'<testcase classname="{classname}" name="{name}">{skipped}</testcase>')
    junit.write_text(f'<testsuite name="pytest">{"".join(cases)}</testsuite>', "utf-8")
    paths["base"], paths["head"] = gz, junit
    code, out, _ = run_cli(delta_args(paths, "--json"), capsys)
    assert code == 1
    assert json.loads(out)["figures"]["net_executed_delta"] == 2


def test_policy_file_changes_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = seed_files(tmp_path, with_check=False)
    policy = tmp_path / "policy.toml"
    policy.write_text('[severities]\nfrozen-surface = "warn"\n', "utf-8")
    code, out, _ = run_cli(delta_args(paths, "--json", "--policy", str(policy)), capsys)
    assert code == 0
    assert json.loads(out)["problems"][0]["severity"] == "warn"


def test_summary_writes_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = seed_files(tmp_path, with_check=False)
    summary = tmp_path / "report.md"
    code, out, _ = run_cli(delta_args(paths, "--summary", str(summary)), capsys)
    assert code == 1
    assert out.startswith("verdict: BLOCK")
    markdown = summary.read_text("utf-8")
    assert markdown.startswith("## ⛔ Freeze Debt report: **block**")
    assert "| passed | 412 | 414 |" in markdown
    assert "Net executed delta **+2**" in markdown
    assert "- **block** `frozen-surface`: src/pricing/rounding.py is guarded only by" in markdown
    assert "| FRZ-014 | `tests/test_pricing.py::test_rounding_boundary` |" in markdown
    assert "| `tests/test_pricing.py` | 2 | 4 | +2 | 0 | 0 |" in markdown


def test_delta_without_ledger_or_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = seed_files(tmp_path, with_check=False)
    argv = ["delta", str(paths["base"]), str(paths["head"]), "--today", TODAY, "--json"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0
    assert json.loads(out)["problems"] == []


# --- errors: exit 2 with a message on stderr ---------------------------------------------


@pytest.mark.parametrize(
    ("target", "content", "expected"),
    [
        ("base", None, "base.json: cannot be read"),
        ("head", b'{"exit": 0, "records": [', "head.json: line 1 column 25: invalid JSON"),
        ("head", b'{"exit": "0", "records": []}', "head.json: $.exit: expected"),
        ("base", b"\x1f\x8bnot gzip at all", "base.json: not valid gzip data"),
        ("ledger", b"[[freeze]]\nexpires = 2026-11-13T08:00:00\n", "freeze[0].expires: expected"),
        ("ledger", b'[[freeze]]\ncovers = ["src/*.py"]\n', "freeze[0].covers[0]: 'src/*.py'"),
        ("changed", b"Q\tsrc/a.py\n", "changed.txt: line 1: unknown status 'Q'"),
        ("changed", b"M\t\xff.py\n", "changed.txt: cannot be read"),
    ],
)
def test_bad_input_exits_2_with_a_message_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    target: str,
    content: bytes | None,
    expected: str,
) -> None:
    paths = seed_files(tmp_path, with_check=False)
    if content is None:
        paths[target].unlink()
    else:
        paths[target].write_bytes(content)
    code, out, err = run_cli(delta_args(paths), capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("freezedebt-ci: ")
    assert expected in err
    assert str(paths[target]) in err


def test_bad_policy_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = seed_files(tmp_path, with_check=False)
    policy = tmp_path / "policy.toml"
    policy.write_text('[severities]\nfrozen-surface = "maybe"\n', "utf-8")
    code, _, err = run_cli(delta_args(paths, "--policy", str(policy)), capsys)
    assert code == 2
    assert "severities.frozen-surface" in err


def test_bad_date_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = delta_args(seed_files(tmp_path, with_check=False))
    argv[argv.index(TODAY)] = "05/11/2026"
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert "expected a date as YYYY-MM-DD" in err


def test_unwritable_summary_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = seed_files(tmp_path, with_check=False)
    code, _, err = run_cli(delta_args(paths, "--summary", str(tmp_path / "no" / "r.md")), capsys)
    assert code == 2
    assert "cannot write summary" in err


@pytest.mark.parametrize("argv", [[], ["nonsense"], ["delta"], ["delta", "a.json"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert "usage:" in err


def test_verdict_exit_codes() -> None:
    assert verdict_exit({"verdict": "pass"}) == 0
    assert verdict_exit({"verdict": "block"}) == 1
    assert verdict_exit({"verdict": "pending"}) == 3


# --- help ----------------------------------------------------------------------------------


def subcommand_paths(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """Every command that runs something (``delta``, ``ledger push``), not the groups."""
    found: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += subcommand_paths(sub, (*prefix, name)) or [(*prefix, name)]
    return found


def test_delta_reads_a_changed_paths_file_with_a_byte_order_mark_as_patch_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = seed_files(tmp_path, with_check=False)
    plain = run_cli(delta_args(paths, "--json"), capsys)
    text = paths["changed"].read_text("utf-8")
    paths["changed"].write_text("\ufeff" + text, "utf-8")  # as some Windows editors save it
    assert run_cli(delta_args(paths, "--json"), capsys) == plain


def test_delta_is_a_subcommand() -> None:
    assert ("delta",) in subcommand_paths(cli.build_parser())


@pytest.mark.parametrize("path", subcommand_paths(cli.build_parser()), ids=" ".join)
def test_every_subcommand_help_shows_an_example(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli([*path, "--help"], capsys)
    assert code == 0
    assert "example" in out.lower()
    assert f"freezedebt-ci {' '.join(path)}" in out


def test_top_level_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0
    for name, *_rest in subcommand_paths(cli.build_parser()):
        assert name in out


def test_module_runs_as_a_program(tmp_path: Path) -> None:
    paths = seed_files(tmp_path, with_check=True)
    done = subprocess.run(
        [sys.executable, "-m", "freezedebt_ci.cli", *delta_args(paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("verdict: PASS")
