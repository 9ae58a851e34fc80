"""``[tool.freezedebt]`` in a repository's ``pyproject.toml``, read as ruff, mypy and pytest read
their tables. The analysis reads it from the base commit: a patch cannot loosen its own grading.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ProblemCollector
from ..paths import pattern_error
from ..policy import DEFAULT_FIXTURE_PATHS, DEFAULT_LEDGER_PATH

DEFAULT_LOCK = "fixtures.lock"
DEFAULT_ORACLE_MAP = "oracle_map.json"
DEFAULT_TESTS = ("tests",)
DEFAULT_BUDGET = 600.0

_LISTS = {"src": "src", "tests": "tests", "fixtures": "fixtures"}
_PATHS = {"fixture-lock": "fixture_lock", "oracle-map": "oracle_map", "ledger": "ledger"}


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the analysis looks. ``src`` empty means "``src/`` if it exists, else the root"."""

    src: tuple[str, ...] = ()
    tests: tuple[str, ...] = DEFAULT_TESTS
    fixtures: tuple[str, ...] = DEFAULT_FIXTURE_PATHS
    fixture_lock: str = DEFAULT_LOCK
    oracle_map: str = DEFAULT_ORACLE_MAP
    ledger: str = DEFAULT_LEDGER_PATH
    given: frozenset[str] = field(default_factory=frozenset)

    def with_overrides(self, **values: Any) -> Settings:
        chosen = {k: v for k, v in values.items() if v not in (None, [], ())}
        for key in ("src", "tests", "fixtures"):
            if key in chosen:
                chosen[key] = tuple(_folder(p) if key != "fixtures" else p for p in chosen[key])
        return replace(self, **chosen, given=self.given | frozenset(chosen))


def _folder(path: str) -> str:
    path = path.replace("\\", "/").strip("/")
    while path.startswith("./"):
        path = path[2:]
    return "" if path in (".", "") else path


def settings_from_pyproject(text: bytes | None, *, source: str = "pyproject.toml") -> Settings:
    """The settings of ``[tool.freezedebt]``; defaults where the file or the table is absent.
    Raises :class:`~freezedebt_ci.errors.InputError` naming each wrong key."""
    if text is None:
        return Settings()
    problems = ProblemCollector(source)
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        problems.add("", f"is not valid TOML ({exc})")
        problems.raise_if_any()
        return Settings()  # pragma: no cover - raise_if_any raised
    table = data.get("tool", {}).get("freezedebt")
    if table is None:
        return Settings()
    if not isinstance(table, Mapping):
        problems.add("tool.freezedebt", "expected a table")
        problems.raise_if_any()
    values: dict[str, Any] = {}
    known = [*_LISTS, *_PATHS]
    for key, value in table.items():
        where = f"tool.freezedebt.{key}"
        if key in _LISTS:
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                problems.add(where, "expected a list of repo-relative paths")
                continue
            if key == "fixtures":
                for index, pattern in enumerate(value):
                    error = pattern_error(pattern, allow_any_depth=True)
                    if error:
                        problems.add(f"{where}[{index}]", f"{pattern!r} {error}")
                values[key] = tuple(value)
            else:
                values[key] = tuple(_folder(v) for v in value)
        elif key in _PATHS:
            if not isinstance(value, str) or pattern_error(value) or "*" in value:
                problems.add(where, "expected a repo-relative file path")
                continue
            values[_PATHS[key]] = value
        else:
            close = difflib.get_close_matches(key, known, n=1)
            hint = (
                f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(known)}"
            )
            problems.add(where, f"unknown setting{hint}")
    problems.raise_if_any()
    return Settings(**values, given=frozenset(values))
