"""``analyze``: settings from ``[tool.freezedebt]`` in the BASE commit's ``pyproject.toml``, flags
over them, unknown keys as errors with a did-you-mean (issue 12, "The command")."""

from __future__ import annotations

from pathlib import Path

from analysis_repos import Repo, codes, file_entry, freeze, ledger, symbol, symbol_keys

CORE = "def compute(a):\n    return a + 1\n"
CORE2 = "def compute(a):\n    return a + 2\n"


def pyproject(table: str) -> str:
    return f'[project]\nname = "shop"\nversion = "1"\n\n[tool.freezedebt]\n{table}\n'


def test_src_and_tests_roots_from_config(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "pyproject.toml": pyproject('src = ["lib"]\ntests = ["checks"]'),
            "lib/shop/__init__.py": "",
            "lib/shop/core.py": CORE,
            "lib/shop/use.py": "from shop.core import compute\n\n\ndef use():\n"
            "    return compute(1)\n",
            # a test module by root, not by name: never a caller, and it names use()
            "checks/verify_use.py": "from shop.use import use\n\n\ndef test_use():\n"
            "    assert use()\n",
        }
    )
    repo.patch({"lib/shop/core.py": CORE2})
    data = repo.analyze()
    entry = symbol(data, "shop.core", "compute")
    assert entry["path"] == "lib/shop/core.py"
    assert entry["callers"] == ["shop.use:use"]
    assert entry["untested_callers"] == []
    assert "untested-caller" not in codes(data)


def test_flags_override_config(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "pyproject.toml": pyproject('src = ["lib"]'),
            "lib/shop/__init__.py": "",
            "lib/shop/core.py": CORE,
            "other/shop/__init__.py": "",
            "other/shop/core.py": CORE,
        }
    )
    repo.patch({"other/shop/core.py": CORE2})
    assert file_entry(repo.analyze(), "other/shop/core.py")["kind"] != "production"
    data = repo.analyze("--src", "other")
    assert file_entry(data, "other/shop/core.py")["kind"] == "production"
    assert symbol(data, "shop.core", "compute")["path"] == "other/shop/core.py"


def test_ledger_and_fixtures_from_config(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "pyproject.toml": pyproject(
                'ledger = "ops/freezes.toml"\nfixtures = ["data/golden/**"]'
            ),
            "ops/freezes.toml": ledger(
                [freeze("FRZ-1", "tests/test_x.py::test_x", blocks=["compute"])]
            ),
            "src/shop/__init__.py": "",
            "src/shop/core.py": CORE,
            "data/golden/out.txt": "3\n",
        }
    )
    repo.patch({"src/shop/core.py": CORE2, "data/golden/out.txt": "4\n"})
    data = repo.analyze()
    assert "frozen-symbol" in codes(data)
    assert file_entry(data, "data/golden/out.txt")["kind"] == "fixture"


def test_unknown_key_is_an_error_with_did_you_mean(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"pyproject.toml": pyproject('test = ["tests"]'), "src/a.py": CORE})
    repo.patch({"src/a.py": CORE2})
    result = repo.run("--json")
    assert result.code == 2
    assert "test" in result.stderr
    assert "tests" in result.stderr and "did you mean" in result.stderr.lower()
    assert "pyproject.toml" in result.stderr


def test_wrong_type_is_an_error_naming_the_key(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"pyproject.toml": pyproject('src = "lib"'), "src/a.py": CORE})
    repo.patch({"src/a.py": CORE2})
    result = repo.run("--json")
    assert result.code == 2
    assert "src" in result.stderr


def test_patch_changing_config_does_not_change_its_own_analysis(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "pyproject.toml": pyproject('src = ["lib"]'),
            "lib/shop/__init__.py": "",
            "lib/shop/core.py": CORE,
            "lib/shop/use.py": "from shop.core import compute\n\n\ndef use():\n"
            "    return compute(1)\n",
        }
    )
    # the patch moves the source root away (so nothing would be production) and edits code
    repo.patch({"pyproject.toml": pyproject('src = ["nowhere"]'), "lib/shop/core.py": CORE2})
    data = repo.analyze()
    entry = symbol(data, "shop.core", "compute")
    assert entry["untested_callers"] == ["shop.use:use"]
    assert "untested-caller" in codes(data)


def test_patch_loosening_ledger_path_still_frozen(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "pyproject.toml": pyproject('ledger = "ops/freezes.toml"'),
            "ops/freezes.toml": ledger(
                [freeze("FRZ-1", "tests/test_x.py::test_x", blocks=["compute"])]
            ),
            "src/shop/__init__.py": "",
            "src/shop/core.py": CORE,
        }
    )
    repo.patch(
        {"pyproject.toml": pyproject('ledger = "ops/empty.toml"'), "src/shop/core.py": CORE2}
    )
    assert "frozen-symbol" in codes(repo.analyze())


def test_bad_key_added_by_the_patch_is_not_read_as_settings(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"pyproject.toml": pyproject('src = ["src"]'), "src/a.py": CORE})
    repo.patch({"pyproject.toml": pyproject('src = ["src"]\nsrcs = ["x"]'), "src/a.py": CORE2})
    result = repo.run("--json")
    assert result.code in (0, 1), result.stderr
    assert symbol_keys(result.data) == ["a:compute"]


def test_without_config_src_folder_or_root(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {"pyproject.toml": '[project]\nname = "x"\n', "pkg/__init__.py": "", "pkg/m.py": CORE}
    )
    repo.patch({"pkg/m.py": CORE2})
    assert symbol_keys(repo.analyze()) == ["pkg.m:compute"]


def test_oracle_map_and_lock_paths_from_config(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "pyproject.toml": pyproject(
                'oracle-map = "ops/oracle.toml"\nfixture-lock = "ops/fixtures.lock"'
            ),
            "ops/oracle.toml": '[features.core]\nprod = ["src/shop/**"]\n'
            'oracle = ["tests/fixtures/**"]\n',
            "src/shop/__init__.py": "",
            "src/shop/core.py": CORE,
            "tests/fixtures/out.txt": "2\n",
        }
    )
    result = repo.cli("fixtures", "lock")
    assert result.code == 0, result.stderr
    assert (repo.root / "ops/fixtures.lock").is_file(), "fixtures lock reads the configured path"
    repo.commit("lock", tag="base")
    repo.patch({"src/shop/core.py": CORE2, "tests/fixtures/out.txt": "3\n"})
    data = repo.analyze()
    assert [r["feature"] for r in data["oracle"]["co_modified"]] == ["core"]
    assert data["fixtures"]["mutated"] == ["tests/fixtures/out.txt"]


def test_patch_narrowing_fixture_globs_still_sees_the_mutation(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "pyproject.toml": pyproject('fixtures = ["data/golden/**"]'),
            "src/shop/__init__.py": "",
            "src/shop/core.py": CORE,
            "data/golden/out.txt": "2\n",
        }
    )
    assert repo.cli("fixtures", "lock").code == 0
    repo.commit("lock", tag="base")
    repo.patch(
        {"pyproject.toml": pyproject('fixtures = ["nothing/**"]'), "data/golden/out.txt": "3\n"}
    )
    data = repo.analyze()
    assert data["fixtures"]["mutated"] == ["data/golden/out.txt"]
    assert "fixture-lock" in codes(data)
