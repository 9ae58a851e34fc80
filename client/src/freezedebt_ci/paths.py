"""Path patterns: the ``covers`` of a freeze and the fixture paths of a policy.

Only three forms exist, on purpose, because they are what ``git diff`` output can be
matched against without surprises:

* ``src/pricing/rounding.py``: that exact repo-relative path;
* ``src/pricing/**``: every path under ``src/pricing/``;
* ``**/conftest.py`` (fixture paths only): a file of that name in any folder.
"""

from __future__ import annotations

from collections.abc import Iterable

_GLOB_CHARS = frozenset("*?[]{}")
_TEST_FOLDERS = frozenset(("test", "tests", "testing"))


def normalize_path(path: str) -> str:
    """Forward slashes, no leading ``./``; the form git prints."""
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def pattern_error(pattern: str, *, allow_any_depth: bool = False) -> str | None:
    """Why ``pattern`` is not a valid path pattern, or ``None`` when it is."""
    if not pattern or pattern != pattern.strip():
        return "must be a non-empty path without surrounding spaces"
    if pattern.startswith("/") or "\\" in pattern:
        return "must be repo-relative with forward slashes"
    body = pattern
    if allow_any_depth and body.startswith("**/"):
        body = body[3:]
    if body.endswith("/**"):
        body = body[:-3]
    parts = body.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "must not contain empty, '.' or '..' segments"
    if any(c in _GLOB_CHARS for c in body):
        forms = "an exact path or 'dir/**'" + (" or '**/name'" if allow_any_depth else "")
        return f"only {forms} are allowed, not other glob syntax"
    return None


def matches(pattern: str, path: str) -> bool:
    """Whether ``path`` is matched by ``pattern`` (one of the three forms above)."""
    if pattern.startswith("**/"):
        tail = pattern[3:]
        if tail.endswith("/**"):
            folder = tail[:-3]
            return path.startswith(folder + "/") or f"/{folder}/" in path
        return path == tail or path.endswith("/" + tail)
    if pattern.endswith("/**"):
        return path.startswith(pattern[:-2])
    return path == pattern


def matches_any(patterns: Iterable[str], path: str) -> bool:
    return any(matches(p, path) for p in patterns)


def overlaps(cover: str, fixture: str) -> bool:
    """Whether a cover pattern and a fixture pattern can both match some path.

    Used by freeze hygiene: a freeze whose blast radius reaches into fixtures would quarantine
    an oracle.
    """
    if not cover.endswith("/**"):
        return matches(fixture, cover)
    prefix = cover[:-2]  # "dir/"
    if fixture.startswith("**/"):
        # "**/conftest.py" could sit in any folder, but such files live beside tests: a cover of
        # a test folder reaches them, a cover of production code ("src/pricing/**") does not.
        return any(part in _TEST_FOLDERS for part in prefix.split("/"))
    if fixture.endswith("/**"):
        other = fixture[:-2]
        return other.startswith(prefix) or prefix.startswith(other)
    return fixture.startswith(prefix)
