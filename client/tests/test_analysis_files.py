"""``analyze``: ``files[]`` (path, old_path, status, kind, class), renames, modules named with the
source root stripped (issue 12, "The analysis JSON")."""

from __future__ import annotations

from pathlib import Path

from analysis_repos import Repo, file_entry, symbol

CORE = """
    def compute(a, b):
        return a + b


    def render(value):
        return str(value)
    """


def make(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/shop/__init__.py": "",
            "src/shop/core.py": CORE,
            "src/shop/old_name.py": "def legacy():\n    return 1\n",
            "tests/test_core.py": "from shop.core import compute\n\n\ndef test_c():\n"
            "    assert compute(1, 2) == 3\n",
            "tests/fixtures/golden.json": '{"total": 3}\n',
            "README.md": "# shop\n",
            "docs/guide.txt": "guide\n",
        }
    )
    return repo


def test_kinds_and_statuses(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch(
        {
            "src/shop/core.py": CORE.replace("a + b", "b + a"),
            "src/shop/added.py": "def fresh():\n    return 0\n",
            "tests/test_core.py": None,
            "tests/test_added.py": "def test_x():\n    assert True\n",
            "tests/fixtures/golden.json": '{"total": 4}\n',
            "README.md": "# shop, again\n",
        }
    )
    data = repo.analyze()
    seen = {f["path"]: (f["status"], f["kind"], f["old_path"]) for f in data["files"]}
    assert seen == {
        "src/shop/core.py": ("M", "production", None),
        "src/shop/added.py": ("A", "production", None),
        "tests/test_core.py": ("D", "test", None),
        "tests/test_added.py": ("A", "test", None),
        "tests/fixtures/golden.json": ("M", "fixture", None),
        "README.md": ("M", "other", None),
    }
    for entry in data["files"]:
        assert entry["class"] in ("unchanged", "cosmetic", "local", "contract", "cross")


def test_rename_keeps_both_paths(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.mv("src/shop/old_name.py", "src/shop/new_name.py")
    repo.commit("rename")
    data = repo.analyze()
    entry = file_entry(data, "src/shop/new_name.py")
    assert entry["status"] == "R"
    assert entry["old_path"] == "src/shop/old_name.py"
    assert entry["kind"] == "production"
    assert [f["path"] for f in data["files"]] == ["src/shop/new_name.py"]


def test_renamed_module_moves_its_public_symbols(tmp_path: Path) -> None:
    # a module rename changes every import path: the old public name is gone (contract)
    repo = make(tmp_path)
    repo.write(
        {"src/shop/caller.py": "from shop.old_name import legacy\n\n\ndef use():\n    legacy()\n"}
    )
    repo.commit("caller", tag="base")
    repo.mv("src/shop/old_name.py", "src/shop/new_name.py")
    repo.commit("rename")
    data = repo.analyze()
    entry = file_entry(data, "src/shop/new_name.py")
    assert entry["class"] in ("contract", "cross")
    assert symbol(data, "shop.old_name", "legacy")["change"] == "removed"


def test_rename_with_edit_keeps_both_paths(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.write({"tests/test_core.py": None})
    repo.mv("src/shop/core.py", "src/shop/engine.py")
    repo.write({"src/shop/engine.py": CORE.replace("str(value)", "repr(value)")})
    repo.commit("rename and edit")
    data = repo.analyze()
    entry = file_entry(data, "src/shop/engine.py")
    assert entry["status"] == "R"
    assert entry["old_path"] == "src/shop/core.py"


def test_renamed_test_file_is_a_test(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.mv("tests/test_core.py", "tests/test_compute.py")
    repo.commit("rename test")
    data = repo.analyze()
    entry = file_entry(data, "tests/test_compute.py")
    assert (entry["status"], entry["kind"], entry["old_path"]) == (
        "R",
        "test",
        "tests/test_core.py",
    )


def test_module_is_dotted_with_src_root_stripped(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/shop/core.py": CORE.replace("str(value)", "repr(value)")})
    data = repo.analyze()
    entry = symbol(data, "shop.core", "render")
    assert entry["path"] == "src/shop/core.py"
    assert entry["kind"] == "function"
    assert entry["change"] == "modified"


def test_without_src_folder_the_root_is_the_source_root(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "flat")
    repo.base({"shop/__init__.py": "", "shop/core.py": CORE})
    repo.patch({"shop/core.py": CORE.replace("str(value)", "repr(value)")})
    data = repo.analyze()
    assert file_entry(data, "shop/core.py")["kind"] == "production"
    assert symbol(data, "shop.core", "render")["change"] == "modified"


def test_package_init_module_is_the_package(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"src/shop/__init__.py": "def top():\n    return 1\n"})
    repo.patch({"src/shop/__init__.py": "def top():\n    return 2\n"})
    data = repo.analyze()
    assert symbol(data, "shop", "top")["path"] == "src/shop/__init__.py"


def test_src_flag_names_the_source_root(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"lib/shop/__init__.py": "", "lib/shop/core.py": CORE, "tools/x.py": "X = 1\n"})
    repo.patch({"lib/shop/core.py": CORE.replace("str(value)", "repr(value)")})
    data = repo.analyze("--src", "lib")
    assert symbol(data, "shop.core", "render")["path"] == "lib/shop/core.py"
