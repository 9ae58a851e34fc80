"""``analyze``: the fixture lock (issue 12, "Fixture lock"; seeds 000 step 4 and 004 artifact
B; SPEC 5.7 ``fixture-lock``), with the lock written by ``freezedebt-ci fixtures lock``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from analysis_repos import Repo, codes, items

FIXTURES = {
    "tests/fixtures/a.json": '{"a": 1}\n',
    "tests/fixtures/b.json": '{"b": 2}\n',
    "tests/fixtures/nested/c.txt": "golden output\n",
}

BASE = {
    "src/app/__init__.py": "",
    "src/app/core.py": "def compute(a):\n    return a + 1\n",
    "tests/test_core.py": "from app.core import compute\n\n\ndef test_c():\n"
    "    assert compute(1)\n",
    **FIXTURES,
}


def lock_repo(repo: Repo, *flags: str) -> str:
    """Run ``fixtures lock`` on HEAD, commit the lock it wrote; its repo-relative path."""
    before = set(repo.git("ls-files").split())
    result = repo.cli("fixtures", "lock", *flags)
    assert result.code == 0, result.stderr
    status = repo.git("status", "--porcelain", "--untracked-files=all").splitlines()
    written = [line[3:] for line in status if line[3:] not in before]
    assert len(written) == 1, status
    repo.commit("lock fixtures", tag="base")
    return written[0]


def make(tmp_path: Path) -> tuple[Repo, str]:
    repo = Repo(tmp_path / "repo")
    repo.base(BASE)
    return repo, lock_repo(repo)


def test_lock_lists_every_fixture_with_its_sha256(tmp_path: Path) -> None:
    repo, lock = make(tmp_path)
    lines = (repo.root / lock).read_text().splitlines()
    assert lines[0].startswith("#"), "a format line first"
    body = [line for line in lines[1:] if line.strip() and not line.startswith("#")]
    expected = {
        path: hashlib.sha256(content.encode()).hexdigest() for path, content in FIXTURES.items()
    }
    for path, digest in expected.items():
        assert any(path in line and digest in line for line in body), (path, body)
    listed = [
        next(p for p in expected if p in line) for line in body if any(p in line for p in expected)
    ]
    assert listed == sorted(listed)
    assert not any("src/app" in line for line in body)


def test_lock_then_clean_patch_checks_clean(tmp_path: Path) -> None:
    repo, _lock = make(tmp_path)
    repo.patch({"src/app/core.py": "def compute(a):\n    return a + 2\n"})
    data = repo.analyze()
    fixtures = data["fixtures"]
    assert fixtures["lock"] is not None
    assert (fixtures["missing"], fixtures["mutated"], fixtures["unregistered"]) == ([], [], [])
    assert "fixture-lock" not in codes(data)


def test_lock_at_head_checks_clean_even_with_no_patch(tmp_path: Path) -> None:
    repo, _lock = make(tmp_path)
    data = repo.analyze(base="HEAD~1")  # the patch that added the lock itself aside
    assert data["fixtures"]["mutated"] == []
    assert data["fixtures"]["missing"] == []
    data = repo.analyze()
    assert "fixture-lock" not in codes(data)
    assert data["_exit"] == 0


def test_mutated_locked_fixture(tmp_path: Path) -> None:
    repo, _lock = make(tmp_path)
    repo.patch({"tests/fixtures/a.json": '{"a": 99}\n'})
    data = repo.analyze()
    assert data["fixtures"]["mutated"] == ["tests/fixtures/a.json"]
    assert "tests/fixtures/a.json" in items(data, "fixture-lock")
    assert data["_exit"] == 1


def test_missing_locked_fixture(tmp_path: Path) -> None:
    repo, _lock = make(tmp_path)
    repo.patch({"tests/fixtures/nested/c.txt": None})
    data = repo.analyze()
    assert data["fixtures"]["missing"] == ["tests/fixtures/nested/c.txt"]
    assert "tests/fixtures/nested/c.txt" in items(data, "fixture-lock")


def test_unregistered_tracked_fixture(tmp_path: Path) -> None:
    repo, _lock = make(tmp_path)
    repo.patch({"tests/fixtures/new.json": "{}\n"})
    data = repo.analyze()
    assert data["fixtures"]["unregistered"] == ["tests/fixtures/new.json"]
    assert "tests/fixtures/new.json" in items(data, "fixture-lock")


def test_unregistered_untracked_fixture_in_working_tree(tmp_path: Path) -> None:
    repo, _lock = make(tmp_path)
    repo.patch({"src/app/core.py": "def compute(a):\n    return a + 2\n"})
    repo.write({"tests/fixtures/sneaky.json": "{}\n"})  # never added to git
    data = repo.analyze()
    assert "tests/fixtures/sneaky.json" in data["fixtures"]["unregistered"]
    assert "tests/fixtures/sneaky.json" in items(data, "fixture-lock")


def test_untracked_non_fixture_file_is_not_unregistered(tmp_path: Path) -> None:
    repo, _lock = make(tmp_path)
    repo.patch({"src/app/core.py": "def compute(a):\n    return a + 2\n"})
    repo.write({"notes.txt": "scratch\n"})
    data = repo.analyze()
    assert data["fixtures"]["unregistered"] == []


def test_renamed_locked_fixture(tmp_path: Path) -> None:
    repo, _lock = make(tmp_path)
    repo.mv("tests/fixtures/b.json", "tests/fixtures/b_renamed.json")
    repo.commit("rename fixture")
    data = repo.analyze()
    found = items(data, "fixture-lock")
    assert "tests/fixtures/b.json" in found or "tests/fixtures/b_renamed.json" in found
    assert "tests/fixtures/b.json" in data["fixtures"]["missing"]
    assert "tests/fixtures/b_renamed.json" in data["fixtures"]["unregistered"]
    assert data["_exit"] == 1


def test_lock_changed_by_the_patch_is_a_finding(tmp_path: Path) -> None:
    # the patch mutates a fixture and re-blesses it in the same commit
    repo, lock = make(tmp_path)
    repo.patch({"tests/fixtures/a.json": '{"a": 99}\n'})
    result = repo.cli("fixtures", "lock")  # locks the committed HEAD
    assert result.code == 0, result.stderr
    repo.commit("and re-bless it")
    assert repo.git("diff", "--name-only", "base", "HEAD").split() == [
        lock,
        "tests/fixtures/a.json",
    ]
    data = repo.analyze()
    found = items(data, "fixture-lock")
    assert lock in found, found
    # the lock judged against is the base's: the mutation is still seen
    assert "tests/fixtures/a.json" in data["fixtures"]["mutated"]
    assert data["_exit"] == 1


def test_lock_alone_changed_by_the_patch_is_a_finding(tmp_path: Path) -> None:
    repo, lock = make(tmp_path)
    text = (repo.root / lock).read_text()
    repo.patch({lock: text + "\n"})
    data = repo.analyze()
    assert lock in items(data, "fixture-lock")


def test_fixture_globs_from_the_flag(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, "data/golden/out.csv": "a,b\n1,2\n"})
    lock_repo(repo, "--fixtures", "data/golden/**")
    repo.patch({"data/golden/out.csv": "a,b\n1,3\n"})
    data = repo.analyze("--fixtures", "data/golden/**")
    assert data["fixtures"]["mutated"] == ["data/golden/out.csv"]
    assert "fixture-lock" in codes(data)


def test_conftest_is_a_default_fixture_path_and_locked(tmp_path: Path) -> None:
    # SPEC 5.3 default fixture paths include **/conftest.py
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, "tests/conftest.py": "import pytest\n"})
    lock_repo(repo)
    repo.patch({"tests/conftest.py": "import pytest\n\nX = 1\n"})
    data = repo.analyze()
    assert data["fixtures"]["mutated"] == ["tests/conftest.py"]
