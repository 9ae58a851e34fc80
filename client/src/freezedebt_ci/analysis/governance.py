"""The two files that say what judges a patch, kept on the default branch: the fixture lock
(the digest of every fixture) and the oracle map (which oracles and tests judge which
production paths). Both are read from the base commit, so a patch cannot re-bless its oracle."""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, ProblemCollector
from ..paths import matches, matches_any, pattern_error

LOCK_FORMAT = "# freezedebt-fixture-lock/1"
FEATURE_KINDS = ("prod", "oracle", "test")
#: ``fixture`` is another name for ``oracle`` in a map (seed 003 calls them fixtures).
_KIND_ALIASES = {"prod": "prod", "oracle": "oracle", "fixture": "oracle", "test": "test"}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_fixture(path: str, globs: Iterable[str]) -> bool:
    return matches_any(globs, path)


def lock_text(digests: Mapping[str, str]) -> str:
    """The lock file's text: a format line, then ``sha256  path`` lines sorted by path (the
    lines ``sha256sum -c`` reads)."""
    lines = [LOCK_FORMAT]
    lines.extend(f"{digests[path]}  {path}" for path in sorted(digests))
    return "\n".join(lines) + "\n"


def parse_lock(data: bytes, *, source: str) -> dict[str, str]:
    problems = ProblemCollector(source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError.single(source, "", "is not UTF-8 text") from None
    lines = text.splitlines()
    if not lines or lines[0].strip() != LOCK_FORMAT:
        raise InputError.single(source, "line 1", f"expected the format line {LOCK_FORMAT!r}")
    digests: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.startswith("#"):
            continue
        digest, sep, path = line.partition("  ")
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            problems.add(f"line {number}", "expected '<sha256>  <path>'")
        elif path in digests:
            problems.add(f"line {number}", f"{path} is listed twice")
        else:
            digests[path] = digest
    problems.raise_if_any()
    return digests


@dataclass(slots=True)
class LockCheck:
    lock: str | None
    sha256: str | None = None
    locked: int = 0
    missing: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)
    unregistered: list[str] = field(default_factory=list)
    renamed: list[dict[str, str]] = field(default_factory=list)
    changed_by_patch: bool = False
    inherited: list[str] = field(default_factory=list)

    def findings(self) -> list[str]:
        return sorted({*self.missing, *self.mutated, *self.unregistered})

    def as_dict(self) -> dict[str, Any]:
        return {
            "lock": self.lock,
            "sha256": self.sha256,
            "locked": self.locked,
            "missing": self.missing,
            "mutated": self.mutated,
            "unregistered": self.unregistered,
            "renamed": self.renamed,
            "changed_by_patch": self.changed_by_patch,
            "inherited": self.inherited,
        }


def check_lock(
    lock: Mapping[str, str] | None,
    *,
    lock_path: str,
    lock_sha256: str | None,
    head: Mapping[str, str],
    base: Mapping[str, str],
    renames: Mapping[str, str],
    lock_changed: bool,
) -> LockCheck:
    """``head`` and ``base`` map every fixture path of each side to its sha256; ``renames``
    maps a renamed file's old path to its new one. Findings already true of the base (a lock
    that was stale before the patch) are listed again under ``inherited``."""
    result = LockCheck(lock_path if lock is not None else None, lock_sha256)
    result.changed_by_patch = lock_changed
    if lock is None:
        return result
    result.locked = len(lock)
    for path, digest in sorted(lock.items()):
        if path not in head:
            result.missing.append(path)
            if path in renames:
                result.renamed.append({"old_path": path, "path": renames[path]})
        elif head[path] != digest:
            result.mutated.append(path)
    result.unregistered = sorted(p for p in head if p not in lock and p != lock_path)
    stale_before = {p for p, d in lock.items() if base.get(p) != d} | {
        p for p in base if p not in lock and p != lock_path
    }
    result.inherited = sorted(p for p in result.findings() if p in stale_before)
    return result


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    prod: tuple[str, ...]
    oracle: tuple[str, ...]
    test: tuple[str, ...]


def parse_oracle_map(data: bytes, *, source: str, path: str | None = None) -> list[Feature]:
    """An oracle map: ``{"features": {name: {"prod": [...], "oracle"|"fixture": [...],
    "test": [...]}}}`` in JSON, or the same tables in TOML (``[features.NAME]``)."""
    problems = ProblemCollector(source)
    try:
        text = data.decode("utf-8")
        as_json = (path or source).endswith(".json")
        document = json.loads(text) if as_json else tomllib.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError.single(source, "", f"cannot be read ({exc})") from None
    features = document.get("features") if isinstance(document, dict) else None
    if not isinstance(features, dict) or not features:
        raise InputError.single(source, "features", "expected a table of features")
    out: list[Feature] = []
    for name, spec in sorted(features.items()):
        where = f"features.{name}"
        if not isinstance(spec, dict):
            problems.add(where, "expected a table with prod, oracle and test paths")
            continue
        lists: dict[str, list[str]] = {k: [] for k in FEATURE_KINDS}
        for key, patterns in spec.items():
            kind = _KIND_ALIASES.get(key)
            if kind is None:
                problems.add(f"{where}.{key}", "unknown key (expected prod, oracle, fixture, test)")
                continue
            if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
                problems.add(f"{where}.{key}", "expected a list of path patterns")
                continue
            for index, pattern in enumerate(patterns):
                error = pattern_error(pattern, allow_any_depth=True)
                if error:
                    problems.add(f"{where}.{key}[{index}]", f"{pattern!r} {error}")
            lists[kind].extend(patterns)
        if not lists["prod"]:
            problems.add(f"{where}.prod", "a feature needs at least one production path")
        out.append(Feature(name, *(tuple(lists[k]) for k in FEATURE_KINDS)))
    problems.raise_if_any()
    return out


@dataclass(slots=True)
class OracleScore:
    map: str | None
    sha256: str | None = None
    co_modified: list[dict[str, Any]] = field(default_factory=list)
    tests_with_code: list[dict[str, Any]] = field(default_factory=list)
    unlabeled: list[str] = field(default_factory=list)
    unmatched_patterns: list[str] = field(default_factory=list)
    changed_by_patch: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "map": self.map,
            "sha256": self.sha256,
            "co_modified": self.co_modified,
            "tests_with_code": self.tests_with_code,
            "unlabeled": self.unlabeled,
            "unmatched_patterns": self.unmatched_patterns,
            "changed_by_patch": self.changed_by_patch,
        }


def score_oracle_map(
    features: list[Feature] | None,
    *,
    map_path: str,
    map_sha256: str | None,
    changed: Iterable[str],
    tree: Iterable[str],
    map_changed: bool,
) -> OracleScore:
    """Features whose production paths changed together with their oracles (``co_modified``)
    or with their tests (``tests_with_code``, the patch's own tests: see candidate tests), and
    changed paths that no feature claims (``unlabeled``: fail closed)."""
    score = OracleScore(map_path if features is not None else None, map_sha256)
    score.changed_by_patch = map_changed
    if features is None:
        return score
    paths = sorted(set(changed))
    claimed: set[str] = set()
    for feature in features:
        hit = {
            kind: [p for p in paths if matches_any(getattr(feature, kind), p)]
            for kind in FEATURE_KINDS
        }
        for group in hit.values():
            claimed.update(group)
        if hit["prod"] and hit["oracle"]:
            score.co_modified.append(
                {"feature": feature.name, "prod": hit["prod"], "oracle": hit["oracle"]}
            )
        if hit["prod"] and hit["test"]:
            score.tests_with_code.append(
                {"feature": feature.name, "prod": hit["prod"], "test": hit["test"]}
            )
    score.unlabeled = [p for p in paths if p not in claimed and p != map_path]
    every = list(tree)
    for feature in features:
        for kind in FEATURE_KINDS:
            for pattern in getattr(feature, kind):
                if not any(matches(pattern, p) for p in every):
                    score.unmatched_patterns.append(f"{feature.name}.{kind}: {pattern}")
    return score
