"""Dynamic reach (the optional ``freezedebt-ci[reach]`` extra): which test executed which line,
read from a coverage.py data file recorded with per-test contexts, through coverage's own API.

Record it with ``pytest --cov=PACKAGE --cov-context=test`` (pytest-cov), or coverage's
``[run] dynamic_context = test_function``."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from ..errors import InputError

Lines = dict[str, dict[int, set[str]]]


def _nodeid(context: str, tracked: set[str]) -> str | None:
    """A test's node id (without parameters) from a context: pytest-cov writes
    ``path::name|run``; coverage's ``test_function`` writes ``dotted.module.name``."""
    if not context:
        return None
    if "::" in context:
        return context.split("|", 1)[0].split("[", 1)[0]
    parts = context.split(".")
    for i in range(len(parts) - 1, 0, -1):
        path = "/".join(parts[:i]) + ".py"
        for candidate in (path, f"tests/{path}"):
            if candidate in tracked:
                return f"{candidate}::{'::'.join(parts[i:])}"
    return None


def _repo_path(filename: str, tracked: set[str]) -> str | None:
    """The tracked path a measured file stands for: the longest tracked suffix of its name."""
    parts = Path(filename).as_posix().split("/")
    for i in range(len(parts)):
        candidate = "/".join(parts[i:])
        if candidate in tracked:
            return candidate
    return None


def read_contexts(path: Path, tracked: set[str]) -> Lines | None:
    """Lines executed per test, by repository path; ``None`` when the file recorded no test
    contexts (reach unavailable, which is not the same as untested)."""
    try:
        coverage: Any = importlib.import_module("coverage")
    except ImportError:
        raise InputError.single(
            str(path), "--coverage", "needs coverage.py: pip install 'freezedebt-ci[reach]'"
        ) from None
    if not path.is_file():
        raise InputError.single(str(path), "--coverage", "no such coverage data file")
    data = coverage.CoverageData(basename=str(path))
    try:
        data.read()
    except Exception as exc:  # coverage raises its own DataError, or sqlite3's errors
        raise InputError.single(str(path), "--coverage", f"cannot be read ({exc})") from None
    if not set(data.measured_contexts()) - {""}:
        return None
    out: Lines = {}
    for filename in data.measured_files():
        repo_path = _repo_path(filename, tracked)
        if repo_path is None:
            continue
        by_line: dict[int, set[str]] = {}
        for line, contexts in data.contexts_by_lineno(filename).items():
            tests = {n for c in contexts if (n := _nodeid(c, tracked))}
            if tests:
                by_line[int(line)] = tests
        out[repo_path] = by_line
    return out
