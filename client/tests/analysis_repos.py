"""Real git repositories for the ``freezedebt-ci analyze`` tests, built in ``tmp_path``.

A test writes a base tree, commits it (tagged ``base``), writes the patch, commits it, and runs
the command in process through :func:`freezedebt_ci.cli.main`, as a user would from a shell.
Nothing here knows how the analysis is computed: only the command line and the JSON of the
issue (``freezedebt-analysis/1``) are used.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freezedebt_ci import cli

TODAY = "2026-12-01"

_GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "2026-11-30T12:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-11-30T12:00:00+00:00",
}


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def data(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.stdout)
        return loaded


def run_cli(argv: list[str]) -> Result:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return Result(code, out.getvalue(), err.getvalue())


class Repo:
    """A scratch git repository: ``write`` files, ``commit``, ``analyze``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, data: bytes | None = None) -> str:
        env = {**os.environ, **_GIT_ENV}
        done = subprocess.run(
            ["git", "-C", str(self.root), *args],  # noqa: S607
            input=data,
            capture_output=True,
            check=False,
            env=env,
        )
        if done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)}: {done.stderr.decode()}")
        return done.stdout.decode()

    def write(self, files: Mapping[str, str | bytes | None]) -> None:
        """Write (text is dedented), or delete with ``None``."""
        for rel, content in files.items():
            path = self.root / rel
            if content is None:
                if path.is_symlink() or path.exists():
                    path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(dedent(content), encoding="utf-8")

    def commit(self, message: str = "change", tag: str | None = None) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        if tag:
            self.git("tag", "-f", tag)
        return self.git("rev-parse", "HEAD").strip()

    def mv(self, old: str, new: str) -> None:
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", old, new)

    def base(self, files: Mapping[str, str | bytes | None]) -> str:
        self.write(files)
        return self.commit("base", tag="base")

    def patch(self, files: Mapping[str, str | bytes | None]) -> str:
        self.write(files)
        return self.commit("patch")

    def cli(self, *args: str) -> Result:
        """A command with ``--repo`` this repository (appended: subcommands come first)."""
        return run_cli([*args, "--repo", str(self.root)])

    def run(self, *flags: str, base: str = "base", cache: bool = False) -> Result:
        argv = ["analyze", "--repo", str(self.root), "--base", base, "--today", TODAY, *flags]
        if not cache:
            argv.append("--no-cache")
        return run_cli(argv)

    def analyze(self, *flags: str, base: str = "base", cache: bool = False) -> dict[str, Any]:
        """The analysis JSON; the command must not fail with a usage or input error."""
        result = self.run("--json", *flags, base=base, cache=cache)
        assert result.code in (0, 1), (result.code, result.stderr)
        data = result.data
        data["_exit"] = result.code
        return data


# -- reading the analysis ------------------------------------------------------------------------


def file_entry(data: Mapping[str, Any], path: str) -> dict[str, Any]:
    found = [f for f in data["files"] if f["path"] == path]
    assert found, f"{path} not in files: {[f['path'] for f in data['files']]}"
    entry: dict[str, Any] = found[0]
    return entry


def symbol(data: Mapping[str, Any], module: str, name: str) -> dict[str, Any]:
    found = [s for s in data["symbols"] if s["module"] == module and s["name"] == name]
    assert found, f"{module}:{name} not among {symbol_keys(data)}"
    entry: dict[str, Any] = found[0]
    return entry


def symbol_keys(data: Mapping[str, Any]) -> list[str]:
    return sorted(f"{s['module']}:{s['name']}" for s in data["symbols"])


def codes(data: Mapping[str, Any]) -> set[str]:
    return {p["code"] for p in data["problems"]}


def problem(data: Mapping[str, Any], code: str) -> dict[str, Any]:
    found = [p for p in data["problems"] if p["code"] == code]
    assert found, f"no {code} problem among {sorted(codes(data))}"
    entry: dict[str, Any] = found[0]
    return entry


def items(data: Mapping[str, Any], code: str) -> set[str]:
    return {i for p in data["problems"] if p["code"] == code for i in p["items"]}


def all_callers(entry: Mapping[str, Any]) -> set[str]:
    """Callers of a symbol, resolved or matched by name only."""
    return set(entry["callers"]) | set(entry.get("name_callers", ()))


def caller_strength(entry: Mapping[str, Any], caller: str) -> str:
    """``import`` for a caller resolved through the import table; anything else is weaker.
    A caller listed only among ``name_callers`` is the weakest evidence."""
    if caller in entry["callers"]:
        strength: str = entry.get("evidence", {}).get("callers", {}).get(caller, "import")
        return strength
    if caller in entry.get("name_callers", ()):
        return "name"
    raise AssertionError(f"{caller} is no caller: {sorted(all_callers(entry))}")


def ledger(freezes: Iterable[Mapping[str, Any]]) -> str:
    """A TOML freeze ledger (SPEC 4.3)."""
    out = []
    for freeze in freezes:
        out.append("[[freeze]]")
        for name, value in freeze.items():
            if isinstance(value, list):
                out.append(f"{name} = [{', '.join(json.dumps(v) for v in value)}]")
            elif name in ("opened", "expires"):
                out.append(f"{name} = {value}")
            else:
                out.append(f"{name} = {json.dumps(value)}")
        out.append("")
    return "\n".join(out)


def freeze(
    fid: str,
    test: str,
    *,
    expires: str = "2026-12-10",
    opened: str = "2026-11-28",
    blocks: list[str] | None = None,
    covers: list[str] | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": fid,
        "test": test,
        "covers": covers or ["src/nothing/**"],
        "owner": "team-a",
        "opened": opened,
        "expires": expires,
        "reason": "timeout talking to the sandbox payment service",
        "class": "timeout",
    }
    if blocks is not None:
        record["blocks_symbols"] = blocks
    return record
