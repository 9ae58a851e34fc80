"""``analyze`` on awkward trees: syntax errors, non-UTF-8 files, symlinks, submodules and binary
files are reported and never crash the command (issue 12, "Bounded and honest")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from analysis_repos import Repo, file_entry

GOOD = "def compute(a):\n    return a + 1\n"
BASE = {
    "src/app/__init__.py": "",
    "src/app/core.py": GOOD,
    "tests/test_core.py": "from app.core import compute\n\n\ndef test_c():\n"
    "    assert compute(1)\n",
}


def make(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.base(BASE)
    return repo


def reported(data: dict[str, Any], path: str) -> bool:
    """Named among the parse errors or the entries the analysis did not read."""
    listed = [e.get("path", "") for e in (*data.get("parse_errors", []), *data.get("skipped", []))]
    return any(p == path or p.startswith(path + " ") for p in listed)


def test_syntax_error_in_production_file(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": "def compute(a):\n    return a +\n"})
    data = repo.analyze()
    assert reported(data, "src/app/core.py")
    assert file_entry(data, "src/app/core.py")["class"] == "cross"
    assert data["class"] == "cross"


def test_syntax_error_in_added_file_is_cross(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/broken.py": "class (:\n"})
    data = repo.analyze()
    assert reported(data, "src/app/broken.py")
    assert file_entry(data, "src/app/broken.py")["class"] == "cross"


def test_syntax_error_on_the_base_side_only(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, "src/app/core.py": "def compute(a:\n"})
    repo.patch({"src/app/core.py": GOOD})
    data = repo.analyze()
    assert file_entry(data, "src/app/core.py")["class"] == "cross"
    assert data["parse_errors"]


def test_syntax_error_in_a_test_file_is_reported(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch(
        {
            "src/app/core.py": "def compute(a):\n    return a + 2\n",
            "tests/test_core.py": "from app.core import compute\n\ndef test_c(:\n",
        }
    )
    data = repo.analyze()
    assert reported(data, "tests/test_core.py")


def test_unchanged_production_file_that_does_not_parse_is_reported(tmp_path: Path) -> None:
    # a caller module the analysis must read but cannot: reported, not silently skipped
    repo = Repo(tmp_path / "repo")
    repo.base(
        {**BASE, "src/app/broken.py": "from app.core import compute\ndef f(:\n    compute(1)\n"}
    )
    repo.patch({"src/app/core.py": "def compute(a):\n    return a + 2\n"})
    data = repo.analyze()
    assert reported(data, "src/app/broken.py"), data["parse_errors"]


def test_non_utf8_file(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": b"def compute(a):\n    return '\xff\xfe' + a\n"})
    data = repo.analyze()
    assert reported(data, "src/app/core.py")
    assert file_entry(data, "src/app/core.py")["class"] == "cross"


def test_declared_latin1_source_is_valid_python(tmp_path: Path) -> None:
    # assumption: a file with a PEP 263 coding line is read the way Python reads it
    repo = make(tmp_path)
    repo.patch(
        {"src/app/core.py": b"# -*- coding: latin-1 -*-\ndef compute(a):\n    return '\xe9' + a\n"}
    )
    data = repo.analyze()
    assert not reported(data, "src/app/core.py"), data["parse_errors"]
    assert file_entry(data, "src/app/core.py")["class"] in ("local", "cross")


def test_nul_bytes_in_python_file(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/core.py": b"def compute(a):\n    return a\x00\n"})
    data = repo.analyze()
    assert reported(data, "src/app/core.py")
    assert file_entry(data, "src/app/core.py")["class"] == "cross"


def test_binary_files_are_listed_not_read(tmp_path: Path) -> None:
    repo = make(tmp_path)
    blob = bytes(range(256)) * 4
    repo.patch({"assets/logo.png": blob, "tests/fixtures/dump.bin": blob})
    data = repo.analyze()
    assert file_entry(data, "assets/logo.png")["kind"] == "other"
    assert file_entry(data, "tests/fixtures/dump.bin")["kind"] == "fixture"


def test_symlink_is_reported(tmp_path: Path) -> None:
    repo = make(tmp_path)
    os.symlink("core.py", repo.root / "src/app/alias.py")
    repo.commit("symlink")
    data = repo.analyze()
    assert reported(data, "src/app/alias.py"), data.get("skipped")
    assert file_entry(data, "src/app/alias.py")["status"] == "A"


def test_symlink_pointing_outside_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("def leaked():\n    return 1\n")
    repo = make(tmp_path)
    os.symlink(str(secret), repo.root / "src/app/outside.py")
    repo.commit("symlink out")
    data = repo.analyze()
    assert reported(data, "src/app/outside.py")
    assert not any(s["name"] == "leaked" for s in data["symbols"])


def test_file_replaced_by_symlink(tmp_path: Path) -> None:
    repo = make(tmp_path)
    (repo.root / "src/app/core.py").unlink()
    (repo.root / "src/app/real.py").write_text(GOOD)
    os.symlink("real.py", repo.root / "src/app/core.py")
    repo.commit("type change")
    data = repo.analyze()
    assert reported(data, "src/app/core.py")
    assert file_entry(data, "src/app/core.py")["class"] == "cross"


def test_submodule_is_reported(tmp_path: Path) -> None:
    repo = make(tmp_path)
    other = Repo(tmp_path / "other")
    other.base({"lib.py": GOOD})
    sha = other.git("rev-parse", "HEAD").strip()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha},vendor/lib")
    repo.git("commit", "-q", "-m", "submodule")
    data = repo.analyze()
    assert reported(data, "vendor/lib"), data.get("skipped")
    assert file_entry(data, "vendor/lib")["status"] == "A"


def test_submodule_under_src_is_reported(tmp_path: Path) -> None:
    repo = make(tmp_path)
    other = Repo(tmp_path / "other")
    other.base({"lib.py": GOOD})
    sha = other.git("rev-parse", "HEAD").strip()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha},src/app/vendored.py")
    repo.git("commit", "-q", "-m", "submodule named like a module")
    data = repo.analyze()
    assert reported(data, "src/app/vendored.py")


def test_empty_and_bom_files(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/empty.py": "", "src/app/bom.py": b"\xef\xbb\xbfdef f():\n    return 1\n"})
    data = repo.analyze()
    assert not reported(data, "src/app/bom.py")
    assert any(s["name"] == "f" and s["module"] == "app.bom" for s in data["symbols"])


def test_path_with_spaces_and_unicode(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"docs/notes on café.md": "x\n", "src/app/naïve.py": GOOD})
    data = repo.analyze()
    paths = {f["path"] for f in data["files"]}
    assert {"docs/notes on café.md", "src/app/naïve.py"} <= paths
