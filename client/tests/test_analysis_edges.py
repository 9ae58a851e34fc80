"""``analyze``: more corners of the class, test-reference and fixture-lock rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_repos import Repo, codes, dedent, file_entry, symbol

UTIL = dedent(
    '''
    """Utilities."""

    import json
    import os


    def helper(x, *, mode="a"):
        """Double it."""
        return x * 2


    def other(x):
        return x


    class Box:
        def open(self):
            return 1

        def _peek(self):
            return 0


    class _Hidden:
        def run(self, x):
            return x
    '''
)


def klass(tmp_path: Path, new: str, old: str = UTIL) -> tuple[str, dict[str, object]]:
    repo = Repo(tmp_path / "repo")
    repo.base({"src/app/__init__.py": "", "src/app/util.py": old})
    repo.patch({"src/app/util.py": new})
    data = repo.analyze()
    return file_entry(data, "src/app/util.py")["class"], data


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # plain imports at the top reordered: cosmetic (the same names bound; inside a try or
        # an if block, order is module-level code: see the case below)
        ("import json\nimport os\n", "import os\nimport json\n", "cosmetic"),
        # a module docstring only
        ('"""Utilities."""', '"""Helpers."""', "cosmetic"),
        # docstring and body of one function together: a body change
        ('"""Double it."""\n    return x * 2', '"""Triple it."""\n    return x * 3', "local"),
        # keyword-only default
        ('mode="a"', 'mode="b"', "contract"),
        # a public method removed
        ("    def open(self):\n        return 1\n\n", "", "contract"),
        # a private method's signature
        ("def _peek(self):", "def _peek(self, n=1):", "local"),
        # a method of a private class
        ("def run(self, x):", "def run(self, x, y=0):", "local"),
        # one public function added
        ("\n\ndef other(x):", "\n\ndef added(x):\n    return x\n\n\ndef other(x):", "local"),
        # the main guard is module-level code
        ("class _Hidden:", "if __name__ == '__main__':\n    print(1)\n\n\nclass _Hidden:", "cross"),
        # a module-level annotation
        ("import os\n", "import os\n\nLIMIT: int = 3\n", "cross"),
    ],
    ids=[
        "imports-reordered",
        "module-docstring",
        "docstring-and-body",
        "kwonly-default",
        "public-method-removed",
        "private-method-signature",
        "private-class-method",
        "function-added",
        "main-guard",
        "module-annotation",
    ],
)
def test_class_of_the_change(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in UTIL
    found, data = klass(tmp_path, UTIL.replace(old, new, 1))
    assert found == expected, file_entry(data, "src/app/util.py")


def test_comment_only_change_in_a_test_file_is_cosmetic(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    test = "def test_a():\n    assert True\n"
    repo.base({"src/app/__init__.py": "", "tests/test_a.py": test})
    repo.patch({"tests/test_a.py": "# why\n" + test})
    data = repo.analyze()
    assert file_entry(data, "tests/test_a.py")["class"] == "cosmetic"
    assert data["class"] == "cosmetic"


def test_dataclass_decorator_argument_is_contract(tmp_path: Path) -> None:
    old = "from dataclasses import dataclass\n\n\n@dataclass\nclass P:\n    x: int\n"
    found, _ = klass(tmp_path, old.replace("@dataclass", "@dataclass(frozen=True)"), old)
    assert found == "contract"


# -- tests reached through fixtures and setup --------------------------------------------------

BASE = {
    "src/app/__init__.py": "",
    "src/app/util.py": "def helper(x):\n    return x * 2\n",
    "tests/test_none.py": "def test_none():\n    assert True\n",
}


def helper_tests(tmp_path: Path, files: dict[str, str]) -> list[str]:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, **files})
    repo.patch({"src/app/util.py": "def helper(x):\n    return x * 3\n"})
    found: list[str] = symbol(repo.analyze(), "app.util", "helper")["tests"]
    return found


def test_fixture_from_root_conftest(tmp_path: Path) -> None:
    found = helper_tests(
        tmp_path,
        {
            "conftest.py": "import pytest\n\nfrom app.util import helper\n\n\n"
            "@pytest.fixture\ndef doubled():\n    return helper(2)\n",
            "tests/test_a.py": "def test_a(doubled):\n    assert doubled\n",
        },
    )
    assert "tests/test_a.py::test_a" in found


def test_fixture_renamed_with_name_argument(tmp_path: Path) -> None:
    found = helper_tests(
        tmp_path,
        {
            "tests/conftest.py": "import pytest\n\nfrom app.util import helper\n\n\n"
            '@pytest.fixture(name="db")\ndef _db_fixture():\n    return helper(2)\n',
            "tests/test_a.py": "def test_a(db):\n    assert db\n",
        },
    )
    assert "tests/test_a.py::test_a" in found


def test_autouse_fixture_reaches_every_test_below_it(tmp_path: Path) -> None:
    found = helper_tests(
        tmp_path,
        {
            "tests/api/conftest.py": "import pytest\n\nfrom app.util import helper\n\n\n"
            "@pytest.fixture(autouse=True)\ndef warm():\n    helper(0)\n",
            "tests/api/test_a.py": "def test_a():\n    assert True\n",
        },
    )
    assert "tests/api/test_a.py::test_a" in found
    # the autouse fixture of tests/api/ does not reach tests/test_none.py
    assert "tests/test_none.py::test_none" not in found


def test_unittest_setup_reaches_the_test_methods(tmp_path: Path) -> None:
    found = helper_tests(
        tmp_path,
        {
            "tests/test_a.py": dedent(
                """
                import unittest

                from app.util import helper


                class TestA(unittest.TestCase):
                    def setUp(self):
                        self.value = helper(1)

                    def test_a(self):
                        self.assertEqual(self.value, 2)
                """
            )
        },
    )
    assert "tests/test_a.py::TestA::test_a" in found


def test_fixture_in_a_sibling_folder_conftest_does_not_apply(tmp_path: Path) -> None:
    # pytest finds conftest fixtures up the folder chain only
    found = helper_tests(
        tmp_path,
        {
            "tests/api/conftest.py": "import pytest\n\nfrom app.util import helper\n\n\n"
            "@pytest.fixture\ndef doubled():\n    return helper(2)\n",
            "tests/cli/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef doubled():\n"
            "    return 4\n",
            "tests/cli/test_c.py": "def test_c(doubled):\n    assert doubled\n",
        },
    )
    assert "tests/cli/test_c.py::test_c" not in found


# -- fixtures lock, more ----------------------------------------------------------------------


def test_lock_under_the_fixture_globs_does_not_list_itself(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, "tests/fixtures/a.json": "{}\n"})
    result = repo.cli("fixtures", "lock", "--out", "tests/fixtures/LOCK")
    assert result.code == 0, result.stderr
    assert "tests/fixtures/LOCK" not in (repo.root / "tests/fixtures/LOCK").read_text()
    repo.commit("lock", tag="base")
    repo.patch({"src/app/util.py": "def helper(x):\n    return x * 3\n"})
    data = repo.analyze("--fixture-lock", "tests/fixtures/LOCK")
    assert data["fixtures"]["lock"] is not None
    assert data["fixtures"]["unregistered"] == []
    assert "fixture-lock" not in codes(data)


def test_fixtures_lock_in_a_plain_directory_is_exit_2(tmp_path: Path) -> None:
    from analysis_repos import run_cli

    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_cli(["fixtures", "lock", "--repo", str(plain)])
    assert result.code == 2
    assert "Traceback" not in result.stderr


def test_unreadable_lock_is_exit_2(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, "fixtures.lock": "not a lock\n", "tests/fixtures/a.json": "{}\n"})
    repo.patch({"src/app/util.py": "def helper(x):\n    return x * 3\n"})
    result = repo.run("--json", "--fixture-lock", "fixtures.lock")
    assert result.code == 2
    assert "fixtures.lock" in result.stderr


# -- precision: names that only look like the changed symbol ------------------------------------

BOX = "class Box:\n    def open(self):\n        return 1\n"


def test_builtin_call_with_the_method_name_is_not_a_test_of_it(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            **BASE,
            "src/app/box.py": BOX,
            "tests/test_files.py": dedent(
                """
                from app.util import helper


                def test_reads(tmp_path):
                    (tmp_path / "f").write_text("1")
                    with open(tmp_path / "f") as handle:
                        assert helper(int(handle.read())) == 2
                """
            ),
        }
    )
    repo.patch({"src/app/box.py": BOX.replace("return 1", "return 2")})
    entry = symbol(repo.analyze(), "app.box", "Box.open")
    # the test calls the builtin open(), never Box or its method
    assert "tests/test_files.py::test_reads" not in entry["tests"]


def test_frozen_parameter_case_does_not_freeze_the_other_cases(tmp_path: Path) -> None:
    from analysis_repos import freeze, items, ledger

    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            **BASE,
            "tests/test_p.py": dedent(
                """
                import pytest

                from app.util import helper


                @pytest.mark.parametrize("n", [1, 2])
                def test_p(n):
                    assert helper(n)
                """
            ),
            # only the n=1 case is frozen; test_p[2] still runs and is evidence
            "freeze_ledger.toml": ledger([freeze("FRZ-7", "tests/test_p.py::test_p[1]")]),
        }
    )
    repo.patch({"src/app/util.py": "def helper(x):\n    return x * 3\n"})
    data = repo.analyze()
    assert symbol(data, "app.util", "helper")["tests"] == ["tests/test_p.py::test_p"]
    assert "app.util:helper" not in items(data, "frozen-symbol")


def test_imports_reordered_inside_try_are_module_level_code(tmp_path: Path) -> None:
    # which import wins changes behaviour: not cosmetic
    guarded = "try:\n    import json\nexcept ImportError:\n    import os as json\n"
    swapped = "try:\n    import os as json\nexcept ImportError:\n    import json\n"
    old = UTIL.replace("import json\n", guarded, 1)
    found, data = klass(tmp_path, old.replace(guarded, swapped, 1), old)
    assert found == "cross", file_entry(data, "src/app/util.py")
