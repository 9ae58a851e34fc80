"""Path patterns (SPEC 5.2): exact paths and ``dir/**``; ``**/name`` for fixture paths only."""

from __future__ import annotations

import pytest

from freezedebt_ci.paths import matches, matches_any, normalize_path, overlaps, pattern_error


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("src/pricing/rounding.py", "src/pricing/rounding.py", True),
        ("src/pricing/rounding.py", "src/pricing/rounding.pyc", False),
        ("src/pricing/rounding.py", "lib/src/pricing/rounding.py", False),
        ("src/pricing/**", "src/pricing/rounding.py", True),
        ("src/pricing/**", "src/pricing/deep/er/x.py", True),
        ("src/pricing/**", "src/pricing.py", False),
        ("src/pricing/**", "src/pricingx/a.py", False),
        ("src/pricing/**", "other/src/pricing/a.py", False),
        ("**/conftest.py", "conftest.py", True),
        ("**/conftest.py", "tests/unit/conftest.py", True),
        ("**/conftest.py", "tests/not_conftest.py", False),
        ("**/fixtures/**", "tests/fixtures/a.json", True),
        ("**/fixtures/**", "fixtures/a.json", True),
        ("**/fixtures/**", "tests/fixturesx/a.json", False),
    ],
)
def test_matches(pattern: str, path: str, hit: bool) -> None:
    assert matches(pattern, path) is hit


def test_matches_any() -> None:
    assert matches_any(["a.py", "src/**"], "src/x.py")
    assert not matches_any(["a.py", "src/**"], "b.py")
    assert not matches_any([], "a.py")


@pytest.mark.parametrize("pattern", ["src/a.py", "src/**", "a", "src/a b.py", ".github/x.yml"])
def test_valid_cover_patterns(pattern: str) -> None:
    assert pattern_error(pattern) is None


@pytest.mark.parametrize(
    "pattern",
    [
        "src/*.py",
        "src/?.py",
        "src/[ab].py",
        "src/{a,b}.py",
        "src/**/x.py",
        "**",
        "**/conftest.py",
        "../x",
        "src/../x",
        "./x",
        "/abs",
        "src\\a.py",
        "src//a.py",
        "",
        " src/a.py",
    ],
)
def test_other_glob_syntax_and_bad_paths_are_refused_in_covers(pattern: str) -> None:
    assert pattern_error(pattern) is not None


def test_any_depth_form_only_where_allowed() -> None:
    assert pattern_error("**/conftest.py", allow_any_depth=True) is None
    assert pattern_error("**/fixtures/**", allow_any_depth=True) is None
    assert pattern_error("**/*.json", allow_any_depth=True) is not None
    assert "glob" in (pattern_error("src/*.py") or "")


def test_normalize_path() -> None:
    assert normalize_path("./src\\a.py") == "src/a.py"
    assert normalize_path("././a") == "a"


@pytest.mark.parametrize(
    ("cover", "fixture", "hit"),
    [
        ("tests/fixtures/prices.json", "tests/fixtures/**", True),
        ("tests/**", "tests/fixtures/**", True),
        ("tests/fixtures/golden/**", "tests/fixtures/**", True),
        ("tests/**", "**/conftest.py", True),
        ("services/api/tests/**", "**/conftest.py", True),
        ("src/pricing/**", "**/conftest.py", False),
        ("tests/conftest.py", "**/conftest.py", True),
        ("src/pricing/rounding.py", "**/conftest.py", False),
        ("src/pricing/rounding.py", "tests/fixtures/**", False),
        ("src/**", "tests/fixtures/**", False),
        ("tests/factories.py", "tests/factories/**", False),
    ],
)
def test_overlaps(cover: str, fixture: str, hit: bool) -> None:
    assert overlaps(cover, fixture) is hit
