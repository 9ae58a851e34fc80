"""``freezedebt-ci analyze`` as a command: exit statuses 0, 1 and 2, ``--json``, ``--out``, the
human summary, ``--budget`` (issue 12, "The command" and "Bounded and honest")."""

from __future__ import annotations

import json
from pathlib import Path

from analysis_repos import TODAY, Repo, run_cli

UTIL = "def helper(x):\n    return x * 2\n"
BASE = {
    "src/app/__init__.py": "",
    "src/app/util.py": UTIL,
    "src/app/report.py": "from app.util import helper\n\n\ndef summary():\n    return helper(1)\n",
    "tests/test_report.py": "from app.report import summary\n\n\ndef test_summary():\n"
    "    assert summary() == 2\n",
}


def make(tmp_path: Path, **extra: str) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, **extra})
    return repo


def test_exit_0_when_nothing_blocks(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    result = repo.run("--json")
    assert result.code == 0, result.data["problems"]
    data = result.data
    assert data["format"] == "freezedebt-analysis/1"
    assert data["complete"] is True
    assert not [p for p in data["problems"] if p["severity"] == "block"]


def test_exit_1_on_a_blocking_finding(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "src/app/cli.py": "from app.util import helper\n\n\ndef main():\n    return helper(0)\n"
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    result = repo.run("--json")
    assert result.code == 1
    assert any(p["severity"] == "block" for p in result.data["problems"])


def test_bad_base_ref_is_exit_2_naming_it(tmp_path: Path) -> None:
    repo = make(tmp_path)
    result = repo.run("--json", base="no-such-branch")
    assert result.code == 2
    assert "no-such-branch" in result.stderr
    assert result.stdout == ""


def test_bad_head_ref_is_exit_2_naming_it(tmp_path: Path) -> None:
    repo = make(tmp_path)
    result = repo.run("--json", "--head", "deadbeef" * 5)
    assert result.code == 2
    assert "deadbeef" in result.stderr


def test_option_looking_ref_is_rejected(tmp_path: Path) -> None:
    repo = make(tmp_path)
    result = repo.run("--json", base="--output=/tmp/x")
    assert result.code == 2


def test_not_a_git_directory_is_exit_2(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_cli(["analyze", "--repo", str(plain), "--base", "main", "--json"])
    assert result.code == 2
    assert "git" in result.stderr.lower()
    assert "Traceback" not in result.stderr


def test_missing_repo_directory_is_exit_2(tmp_path: Path) -> None:
    result = run_cli(["analyze", "--repo", str(tmp_path / "absent"), "--base", "main"])
    assert result.code == 2


def test_bad_today_and_budget_are_usage_errors(tmp_path: Path) -> None:
    repo = make(tmp_path)
    assert repo.run("--today", "1 December").code == 2
    assert repo.run("--budget", "-1").code == 2
    assert repo.run("--budget", "soon").code == 2


def test_base_is_required(tmp_path: Path) -> None:
    repo = make(tmp_path)
    assert run_cli(["analyze", "--repo", str(repo.root)]).code == 2


def test_out_writes_the_same_json(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    out = tmp_path / "analysis.json"
    printed = repo.run("--json", "--out", str(out))
    assert json.loads(out.read_text()) == printed.data


def test_human_summary_without_json(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "src/app/cli.py": "from app.util import helper\n\n\ndef main():\n    return helper(0)\n"
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    result = repo.run()
    assert result.code == 1
    assert not result.stdout.lstrip().startswith("{")
    assert "untested-caller" in result.stdout
    assert "app.cli:main" in result.stdout


def test_head_defaults_to_HEAD_and_can_be_named(tmp_path: Path) -> None:
    repo = make(tmp_path)
    first = repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    repo.patch(
        {"src/app/report.py": BASE["src/app/report.py"] + "\n\ndef extra():\n    return 0\n"}
    )
    at_head = repo.analyze()
    at_first = repo.analyze("--head", first)
    assert {f["path"] for f in at_head["files"]} == {"src/app/util.py", "src/app/report.py"}
    assert {f["path"] for f in at_first["files"]} == {"src/app/util.py"}
    assert at_first["head"] == first


def test_base_on_a_diverged_branch_uses_the_merge_base(tmp_path: Path) -> None:
    # main moved on after the branch was cut: its later changes are not the patch's
    repo = make(tmp_path)
    repo.git("checkout", "-q", "-b", "feature")
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    repo.git("checkout", "-q", "main")
    repo.patch({"README.md": "main moved on\n"})
    repo.git("checkout", "-q", "feature")
    data = repo.analyze(base="main")
    assert [f["path"] for f in data["files"]] == ["src/app/util.py"]


def test_tiny_budget_is_incomplete_and_exit_1(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    result = repo.run("--json", "--budget", "0.000001")
    assert result.code == 1
    data = result.data
    assert data["complete"] is False
    assert data["format"] == "freezedebt-analysis/1"
    # an incomplete answer must not look whole: its class is not understated
    assert data["class"] == "cross"


def test_generous_budget_is_complete(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    assert repo.analyze("--budget", "600")["complete"] is True


def test_today_decides_which_freezes_are_active(tmp_path: Path) -> None:
    from analysis_repos import freeze, ledger

    repo = make(
        tmp_path,
        **{
            "freeze_ledger.toml": ledger(
                [freeze("F-1", "tests/x.py::t", blocks=["helper"], expires="2026-12-05")]
            )
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    assert TODAY < "2026-12-05"
    assert repo.run("--json").code == 1
    late = run_cli(
        ["analyze", "--repo", str(repo.root), "--base", "base", "--today", "2026-12-06", "--json"]
    )
    assert late.code == 0, late.stdout


def test_incomplete_human_summary_says_so(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    result = repo.run("--budget", "0.000001")
    assert result.code == 1
    assert "incomplete" in result.stdout.lower()


def test_unwritable_out_is_exit_2(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    result = repo.run("--json", "--out", str(tmp_path / "no" / "such" / "dir" / "a.json"))
    assert result.code == 2
    assert "a.json" in result.stderr
