"""A repository's policy: the severity of each problem code and the paths it cares about."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError, ProblemCollector
from .paths import pattern_error

BLOCK, WARN, OFF = "block", "warn", "off"
SEVERITIES = (BLOCK, WARN, OFF)

#: Problem codes with their default severity (SPEC 5.3, 5.5, 5.7).
DEFAULT_SEVERITIES: dict[str, str] = {
    "head-failed": BLOCK,
    "unaccounted-skip": BLOCK,
    "lost-tests": BLOCK,
    "frozen-surface": BLOCK,
    "expired-freeze": BLOCK,
    "invalid-freeze": BLOCK,
    "ledger-in-patch": BLOCK,
    "environment-drift": WARN,
    "fixture-touched": WARN,
    "base-missing": BLOCK,
    "untested-caller": BLOCK,
    "contract-change": WARN,
    "fixture-lock": BLOCK,
    "co-modified": BLOCK,
    "unlabeled-path": WARN,
    "frozen-symbol": BLOCK,
    "candidate-only": WARN,
    "analysis-mismatch": BLOCK,
    "analysis-missing": BLOCK,
}
DEFAULT_FIXTURE_PATHS = ("tests/fixtures/**", "tests/factories/**", "**/conftest.py")
DEFAULT_LEDGER_PATH = "freeze_ledger.toml"
DEFAULT_MAX_FREEZE_DAYS = 14
SETTINGS = ("severities", "max_freeze_days", "fixture_paths", "ledger_path", "require_analysis")


@dataclass(frozen=True, slots=True)
class Policy:
    severities: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_SEVERITIES))
    max_freeze_days: int = DEFAULT_MAX_FREEZE_DAYS
    fixture_paths: tuple[str, ...] = DEFAULT_FIXTURE_PATHS
    ledger_path: str = DEFAULT_LEDGER_PATH
    # A patch declared without an analysis (or with an incomplete one) is an
    # ``analysis-missing`` problem only when the repository asks for analyses.
    require_analysis: bool = False

    def severity(self, code: str) -> str:
        return self.severities.get(code, DEFAULT_SEVERITIES.get(code, BLOCK))

    def as_dict(self) -> dict[str, Any]:
        return {
            "severities": {code: self.severity(code) for code in sorted(DEFAULT_SEVERITIES)},
            "max_freeze_days": self.max_freeze_days,
            "fixture_paths": list(self.fixture_paths),
            "ledger_path": self.ledger_path,
            "require_analysis": self.require_analysis,
        }

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "policy") -> Policy:
        """Validate a policy given as a mapping; absent keys keep their defaults."""
        problems = ProblemCollector(source)
        severities = dict(DEFAULT_SEVERITIES)
        given = data.get("severities", {})
        if not isinstance(given, Mapping):
            problems.add("severities", "expected a table of code = block|warn|off")
            given = {}
        for code, severity in given.items():
            if code not in DEFAULT_SEVERITIES:
                problems.add(f"severities.{code}", "unknown problem code")
            elif severity not in SEVERITIES:
                problems.add(f"severities.{code}", f"expected block, warn or off, got {severity!r}")
            else:
                severities[code] = severity
        max_days = data.get("max_freeze_days", DEFAULT_MAX_FREEZE_DAYS)
        if type(max_days) is not int or max_days < 1:
            problems.add("max_freeze_days", "expected a whole number of days, at least 1")
            max_days = DEFAULT_MAX_FREEZE_DAYS
        fixtures = data.get("fixture_paths", list(DEFAULT_FIXTURE_PATHS))
        if not isinstance(fixtures, list) or not all(isinstance(p, str) for p in fixtures):
            problems.add("fixture_paths", "expected a list of path patterns")
            fixtures = list(DEFAULT_FIXTURE_PATHS)
        for index, pattern in enumerate(fixtures):
            error = pattern_error(pattern, allow_any_depth=True)
            if error:
                problems.add(f"fixture_paths[{index}]", f"{pattern!r} {error}")
        ledger_path = data.get("ledger_path", DEFAULT_LEDGER_PATH)
        if not isinstance(ledger_path, str) or pattern_error(ledger_path) or "*" in ledger_path:
            problems.add("ledger_path", "expected a repo-relative file path")
            ledger_path = DEFAULT_LEDGER_PATH
        require_analysis = data.get("require_analysis", False)
        if type(require_analysis) is not bool:
            problems.add("require_analysis", "expected true or false")
            require_analysis = False
        for key in data:
            if key not in SETTINGS:
                problems.add(str(key), "unknown policy setting")
        problems.raise_if_any()
        return cls(severities, max_days, tuple(fixtures), ledger_path, require_analysis)


def read_policy(path: str | Path) -> Policy:
    """Read a policy file: TOML, or JSON when it starts with ``{``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(str(path), "", f"cannot be read ({exc})") from None
    try:
        data = json.loads(text) if text.lstrip().startswith("{") else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError.single(str(path), "", f"invalid policy file: {exc}") from None
    return Policy.from_mapping(data, source=str(path))
