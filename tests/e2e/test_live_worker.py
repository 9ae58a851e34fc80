"""End to end, the way a deployment runs: gunicorn, a Celery worker and beat on Redis,
PostgreSQL, and the real CLI uploading evidence that the real pytest plugin wrote.

Runs only when FREEZEDEBT_E2E=1; the live service is the ``live_service`` fixture of
``conftest.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import textwrap
from pathlib import Path

from tests.e2e.live import BIN, e2e_only
from tests.e2e.live import run as _run

pytestmark = e2e_only

TODAY = dt.date.today()


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
    }
    return _run(["git", *args], cwd=repo, env=env).stdout.strip()


def _sample_project(repo: Path) -> tuple[str, str]:
    """A small project with a frozen test over src/pricing/rounding.py; the head commit
    adds two tests and touches that file. Returns (base sha, head sha)."""
    (repo / "src/pricing").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npythonpath = src\n")
    (repo / "src/pricing/__init__.py").write_text("")
    (repo / "src/pricing/rounding.py").write_text(
        "def round_fee(amount):\n    return round(amount * 1.02, 2)\n"
    )
    (repo / "tests/test_pricing.py").write_text(
        textwrap.dedent("""
        from pricing.rounding import round_fee

        def test_round_fee_small():
            assert round_fee(1) == 1.02

        def test_rounding_boundary():
            assert round_fee(0.5) == 0.51
    """)
    )
    (repo / "tests/test_misc.py").write_text(
        "import pytest\n\n"
        + "".join(f"def test_misc_{i}():\n    assert {i} == {i}\n\n" for i in range(10))
        + "@pytest.mark.skip(reason='needs a printer')\ndef test_printer():\n    pass\n"
    )
    opened = TODAY - dt.timedelta(days=3)
    expires = TODAY + dt.timedelta(days=7)
    (repo / "freeze_ledger.toml").write_text(
        textwrap.dedent(f"""
        [[freeze]]
        id = "FRZ-014"
        test = "tests/test_pricing.py::test_rounding_boundary"
        covers = ["src/pricing/rounding.py"]
        owner = "finley@example.com"
        opened = {opened.isoformat()}
        expires = {expires.isoformat()}
        reason = "wall-clock boundary; fails about 1 in 40 CI runs"
    """)
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "src/pricing/rounding.py").write_text(
        "def round_fee(amount):\n    return round(amount * 1.02 + 0.0, 2)\n"
    )
    with (repo / "tests/test_pricing.py").open("a") as handle:
        handle.write("\ndef test_round_fee_zero():\n    assert round_fee(0) == 0\n")
        handle.write("\ndef test_round_fee_large():\n    assert round_fee(100) == 102\n")
    _git(repo, "commit", "-qam", "head")
    return base, _git(repo, "rev-parse", "HEAD")


def _evidence(repo: Path, sha: str, out: Path) -> None:
    _git(repo, "checkout", "-q", sha)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST_"))}
    result = _run(
        [
            BIN / "python",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:django",
            "-p",
            "no:cacheprovider",
            "--evidence-out",
            out,
            "--freeze-ledger",
            "freeze_ledger.toml",
        ],
        cwd=repo,
        env=env,
        check=False,
    )
    assert out.exists(), result.stdout + result.stderr


def test_cli_uploads_to_live_service_and_gets_the_verdict(live_service, tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    base, head = _sample_project(repo)
    _evidence(repo, base, tmp_path / "base.json")
    _evidence(repo, head, tmp_path / "head.json")
    url = live_service["url"]
    cli = BIN / "freezedebt-ci"
    ev_env = {**os.environ, "FREEZEDEBT_TOKEN": live_service["evidence_token"]}
    led_env = {**os.environ, "FREEZEDEBT_TOKEN": live_service["ledger_token"]}

    pushed = _run(
        [cli, "ledger", "push", repo / "freeze_ledger.toml", "--sha", base, "--url", url],
        env=led_env,
    )
    assert "FRZ-014" in pushed.stdout

    # The patch is declared before any run exists: pending, never pass.
    pending = _run(
        [
            cli,
            "patch",
            "--url",
            url,
            "--ref",
            "PR-7",
            "--base-sha",
            base,
            "--head-sha",
            head,
            "--wait",
            "0",
            "--json",
        ],
        cwd=repo,
        env=ev_env,
        check=False,
    )
    assert pending.returncode == 3, pending.stdout + pending.stderr
    assert json.loads(pending.stdout)["verdict"] == "pending"

    # Head first, base last: the report is recomputed when the missing run arrives.
    for sha, name in ((head, "head.json"), (base, "base.json")):
        uploaded = _run(
            [
                cli,
                "upload",
                "--url",
                url,
                "--sha",
                sha,
                "--branch",
                "main",
                "--wait",
                "60",
                tmp_path / name,
            ],
            env=ev_env,
        )
        assert "ready" in uploaded.stdout

    final = _run(
        [
            cli,
            "patch",
            "--url",
            url,
            "--ref",
            "PR-7",
            "--base-sha",
            base,
            "--head-sha",
            head,
            "--wait",
            "60",
            "--json",
            "--summary",
            tmp_path / "summary.md",
        ],
        cwd=repo,
        env=ev_env,
        check=False,
    )
    assert final.returncode == 1, final.stdout + final.stderr
    report = json.loads(final.stdout)
    assert report["status"] == "ready"
    assert report["verdict"] == "block"
    assert report["figures"]["net_executed_delta"] == 2
    assert [p["code"] for p in report["problems"] if p["severity"] == "block"] == ["frozen-surface"]
    assert "frozen-surface" in (tmp_path / "summary.md").read_text()

    # The offline command computes the same report from the same files.
    (tmp_path / "changed.txt").write_text(
        _git(repo, "diff", "--name-status", "-M", f"{base}...{head}") + "\n"
    )
    offline = _run(
        [
            cli,
            "delta",
            tmp_path / "base.json",
            tmp_path / "head.json",
            "--ledger",
            repo / "freeze_ledger.toml",
            "--changed",
            tmp_path / "changed.txt",
            "--today",
            report["today"],
            "--json",
        ],
        check=False,
    )
    assert json.loads(offline.stdout) == report

    # The work was done by the worker, not in the web process.
    worker_log = (live_service["logs"] / "worker.log").read_text()
    assert "evidence.tasks.ingest_run" in worker_log
    assert "succeeded" in worker_log


def test_the_worker_analyzes_the_patch_from_the_git_remote_itself(live_service, tmp_path):
    """The second process, live: the repository names a bare remote; CI sends its analysis
    (``patch --analyze``) and the Celery worker analyzes the same commits in its own mirror.
    They agree; a forged upload does not, and the report says so."""
    repo = tmp_path / "project"
    repo.mkdir()
    base, head = _sample_project(repo)
    bare = tmp_path / "remote.git"
    _run(["git", "clone", "-q", "--bare", str(repo), str(bare)])
    env = live_service["env"]
    _run(
        [
            BIN / "python",
            "manage.py",
            "shell",
            "-c",
            "from evidence.models import Repository; "
            f"Repository.objects.filter(slug='shop').update(git_url={str(bare)!r})",
        ],
        env=env,
    )
    _evidence(repo, base, tmp_path / "base.json")
    _evidence(repo, head, tmp_path / "head.json")
    url = live_service["url"]
    cli = BIN / "freezedebt-ci"
    ev_env = {**os.environ, "FREEZEDEBT_TOKEN": live_service["evidence_token"]}
    for sha, name in ((base, "base.json"), (head, "head.json")):
        _run(
            [cli, "upload", "--url", url, "--sha", sha, "--wait", "60", tmp_path / name], env=ev_env
        )

    def declare(ref: str, *analysis: str) -> dict:
        done = _run(
            [
                *(cli, "patch", "--url", url, "--ref", ref, "--base-sha", base),
                *("--head-sha", head, "--wait", "120", "--json", *analysis),
            ],
            cwd=repo,
            env=ev_env,
            check=False,
        )
        assert done.returncode in (0, 1), done.stdout + done.stderr
        report: dict = json.loads(done.stdout)
        assert report["status"] == "ready"
        return report

    honest = declare("PR-8", "--analyze")
    assert honest["analysis"]["source"] == "server"
    assert "analysis-mismatch" not in {p["code"] for p in honest["problems"]}
    assert any(s["symbol"] == "pricing.rounding:round_fee" for s in honest["analysis"]["symbols"])

    forged = _run(
        [cli, "analyze", "--repo", repo, "--base", base, "--head", head, "--json"],
        cwd=repo,
        check=False,
    )
    analysis = json.loads(forged.stdout)
    analysis["symbols"] = []
    (tmp_path / "forged.json").write_text(json.dumps(analysis))
    report = declare("PR-9", "--analysis", str(tmp_path / "forged.json"))
    mismatch = {p["code"]: p for p in report["problems"]}["analysis-mismatch"]
    assert "the changed symbols" in mismatch["message"]
    assert report["verdict"] == "block"
