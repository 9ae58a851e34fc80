"""``analyze``: the change class of each file and of the patch (issue 12, "Change class per
file"; SPEC 5.7), on git repositories built here."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_repos import Repo, dedent, file_entry, symbol

UTIL = dedent(
    """
    '''Utilities.'''

    import os

    LIMIT = 10


    def helper(value, scale=2):
        '''Scale a value.'''
        return value * scale


    def other(value: int) -> int:
        return value + 1


    def _private(value):
        return value - 1
    """
)

TESTS = """
    from pkg.util import helper, other


    def test_helper():
        assert helper(2) == 4


    def test_other():
        assert other(1) == 2
    """


def make(tmp_path: Path, util: str = UTIL, **extra: str) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/pkg/__init__.py": "",
            "src/pkg/util.py": util,
            "tests/test_util.py": TESTS,
            **extra,
        }
    )
    return repo


def util_class(tmp_path: Path, new: str, old: str = UTIL) -> tuple[str, dict[str, object]]:
    repo = make(tmp_path, old)
    repo.patch({"src/pkg/util.py": new})
    data = repo.analyze()
    return file_entry(data, "src/pkg/util.py")["class"], data


# -- cosmetic ---------------------------------------------------------------------------------


def test_formatting_and_comments_are_cosmetic(tmp_path: Path) -> None:
    new = """
        '''Utilities.'''
        import os
        LIMIT = 10  # the most we take
        # a comment about helper
        def helper(value, scale = 2):
            '''Scale a value.'''
            return (value
                    * scale)
        def other(value: int) -> int:
            return value + 1
        def _private(value):
            return value - 1
        """
    klass, data = util_class(tmp_path, new)
    assert klass == "cosmetic"
    assert data["class"] == "cosmetic"
    assert data["symbols"] == []


def test_docstring_only_change_is_cosmetic_and_flagged(tmp_path: Path) -> None:
    new = UTIL.replace("'''Scale a value.'''", "'''Multiply a value by a scale.'''")
    klass, data = util_class(tmp_path, new)
    entry = file_entry(data, "src/pkg/util.py")
    # assumption: the issue allows cosmetic "with a flag saying so"; the flag is docstring_only
    assert klass == "cosmetic"
    assert entry.get("docstring_only") is True


def test_formatting_only_is_not_flagged_docstring_only(tmp_path: Path) -> None:
    klass, data = util_class(tmp_path, UTIL.replace("value * scale", "(value * scale)"))
    assert klass == "cosmetic"
    assert not file_entry(data, "src/pkg/util.py").get("docstring_only")


# -- contract -------------------------------------------------------------------------------------


def test_changed_annotation_of_public_function_is_contract_types_only(tmp_path: Path) -> None:
    new = UTIL.replace("def other(value: int) -> int:", "def other(value: float) -> int:")
    klass, data = util_class(tmp_path, new)
    assert klass == "contract"
    entry = symbol(data, "pkg.util", "other")
    assert entry["signature_changed"] is True
    assert entry["types_only"] is True


def test_added_return_annotation_is_contract(tmp_path: Path) -> None:
    new = UTIL.replace("def helper(value, scale=2):", "def helper(value, scale=2) -> int:")
    klass, data = util_class(tmp_path, new)
    assert klass == "contract"
    assert symbol(data, "pkg.util", "helper")["signature_changed"] is True
    assert symbol(data, "pkg.util", "helper")["types_only"] is True


def test_new_parameter_is_contract_and_not_types_only(tmp_path: Path) -> None:
    new = UTIL.replace("def helper(value, scale=2):", "def helper(value, scale=2, offset=0):")
    klass, data = util_class(tmp_path, new)
    assert klass == "contract"
    entry = symbol(data, "pkg.util", "helper")
    assert entry["signature_changed"] is True
    assert entry["types_only"] is False


def test_changed_default_is_contract(tmp_path: Path) -> None:
    klass, data = util_class(tmp_path, UTIL.replace("scale=2", "scale=3"))
    assert klass == "contract"
    assert symbol(data, "pkg.util", "helper")["signature_changed"] is True


def test_renamed_parameter_is_contract(tmp_path: Path) -> None:
    new = UTIL.replace("def helper(value, scale=2):", "def helper(value, factor=2):").replace(
        "value * scale", "value * factor"
    )
    klass, _ = util_class(tmp_path, new)
    assert klass == "contract"


def test_added_decorator_is_contract(tmp_path: Path) -> None:
    new = UTIL.replace(
        "def helper(value, scale=2):", "@functools.cache\ndef helper(value, scale=2):"
    ).replace("import os", "import functools\nimport os")
    repo = make(tmp_path)
    repo.patch({"src/pkg/util.py": new})
    data = repo.analyze()
    # the import line is module-level code too; the decorator alone must already be contract
    assert file_entry(data, "src/pkg/util.py")["class"] in ("contract", "cross")
    assert symbol(data, "pkg.util", "helper")["signature_changed"] is True


def test_added_decorator_alone_is_contract(tmp_path: Path) -> None:
    old = UTIL.replace("import os", "import functools\nimport os")
    new = old.replace(
        "def helper(value, scale=2):", "@functools.cache\ndef helper(value, scale=2):"
    )
    klass, data = util_class(tmp_path, new, old)
    assert klass == "contract"
    assert symbol(data, "pkg.util", "helper")["signature_changed"] is True


def test_private_signature_change_is_local(tmp_path: Path) -> None:
    # assumption: only a *public* signature is contract; a private one is a change of one symbol
    new = UTIL.replace("def _private(value):", "def _private(value, extra=0):")
    klass, data = util_class(tmp_path, new)
    assert klass == "local"
    assert symbol(data, "pkg.util", "_private")["change"] == "modified"


def test_public_symbol_removed_is_contract(tmp_path: Path) -> None:
    new = UTIL.replace("def other(value: int) -> int:\n    return value + 1\n", "")
    klass, data = util_class(tmp_path, new)
    assert klass == "contract"
    entry = symbol(data, "pkg.util", "other")
    assert entry["change"] == "removed"
    assert entry["kind"] == "function"


def test_all_changed_is_contract(tmp_path: Path) -> None:
    old = UTIL + "\n__all__ = ['helper']\n"
    new = UTIL + "\n__all__ = ['helper', 'other']\n"
    klass, _ = util_class(tmp_path, new, old)
    assert klass == "contract"


DATA = """
    import enum
    from dataclasses import dataclass
    from typing import TypedDict


    @dataclass
    class Point:
        x: int
        y: int = 0

        def norm(self):
            return abs(self.x) + abs(self.y)


    class Payload(TypedDict):
        id: str
        amount: int


    class Color(enum.Enum):
        RED = 1
        GREEN = 2
    """


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("    y: int = 0\n", "    y: int = 0\n    z: int = 0\n", "Point"),
        ("    y: int = 0\n", "    y: float = 0\n", "Point"),
        ("    y: int = 0\n", "    y: int = 1\n", "Point"),
        ("    amount: int\n", "    amount: int\n    currency: str\n", "Payload"),
        ("    amount: int\n", "    amount: float\n", "Payload"),
        ("    GREEN = 2\n", "    GREEN = 2\n    BLUE = 3\n", "Color"),
        ("    GREEN = 2\n", "    GREEN = 3\n", "Color"),
    ],
    ids=[
        "dataclass-field-added",
        "dataclass-field-type",
        "dataclass-default",
        "typeddict-field-added",
        "typeddict-field-type",
        "enum-member-added",
        "enum-value",
    ],
)
def test_serialized_shape_change_is_contract(tmp_path: Path, old: str, new: str, name: str) -> None:
    repo = make(tmp_path, **{"src/pkg/data.py": DATA})
    source = (repo.root / "src/pkg/data.py").read_text()
    assert old in source
    repo.patch({"src/pkg/data.py": source.replace(old, new, 1)})
    data = repo.analyze()
    assert file_entry(data, "src/pkg/data.py")["class"] == "contract", file_entry(
        data, "src/pkg/data.py"
    )
    assert symbol(data, "pkg.data", name)["kind"] == "class"


def test_method_body_of_dataclass_is_local_not_shape(tmp_path: Path) -> None:
    repo = make(tmp_path, **{"src/pkg/data.py": DATA})
    source = (repo.root / "src/pkg/data.py").read_text()
    repo.patch({"src/pkg/data.py": source.replace("abs(self.x) + abs(self.y)", "self.x + self.y")})
    data = repo.analyze()
    assert file_entry(data, "src/pkg/data.py")["class"] == "local"
    entry = symbol(data, "pkg.data", "Point.norm")
    assert entry["kind"] == "method"
    assert entry["signature_changed"] is False


# -- local and cross -----------------------------------------------------------------------------


def test_one_body_changed_is_local(tmp_path: Path) -> None:
    klass, data = util_class(tmp_path, UTIL.replace("return value + 1", "return value + 2"))
    assert klass == "local"
    assert data["class"] == "local"
    changed = [(s["module"], s["name"], s["change"]) for s in data["symbols"]]
    assert changed == [("pkg.util", "other", "modified")]
    assert data["symbols"][0]["signature_changed"] is False


def test_two_bodies_changed_is_cross(tmp_path: Path) -> None:
    new = UTIL.replace("return value + 1", "return value + 2").replace(
        "return value - 1", "return value - 2"
    )
    klass, data = util_class(tmp_path, new)
    assert klass == "cross"
    assert {s["name"] for s in data["symbols"]} == {"other", "_private"}


def test_module_level_code_changed_is_cross(tmp_path: Path) -> None:
    klass, _ = util_class(tmp_path, UTIL.replace("LIMIT = 10", "LIMIT = 11"))
    assert klass == "cross"


def test_conftest_changed_is_cross(tmp_path: Path) -> None:
    conftest = """
        import pytest


        @pytest.fixture
        def number():
            return 1
        """
    repo = make(tmp_path, **{"tests/conftest.py": conftest})
    repo.patch({"tests/conftest.py": conftest.replace("return 1", "return 2")})
    data = repo.analyze()
    assert file_entry(data, "tests/conftest.py")["class"] == "cross"
    assert data["class"] == "cross"


def test_file_that_fails_to_parse_is_cross(tmp_path: Path) -> None:
    klass, data = util_class(
        tmp_path, UTIL.replace("def other(value: int)", "def other(value: int")
    )
    assert klass == "cross"
    assert data["class"] == "cross"
    assert any(e["path"].startswith("src/pkg/util.py") for e in data["parse_errors"])


def test_added_method_in_class_is_one_symbol(tmp_path: Path) -> None:
    repo = make(tmp_path, **{"src/pkg/data.py": DATA})
    source = (repo.root / "src/pkg/data.py").read_text()
    repo.patch(
        {
            "src/pkg/data.py": source.replace(
                "    def norm(self):",
                "    def double(self):\n        return 2\n\n    def norm(self):",
            )
        }
    )
    data = repo.analyze()
    entry = symbol(data, "pkg.data", "Point.double")
    assert entry["change"] == "added"
    assert entry["kind"] == "method"


# -- the patch's class ---------------------------------------------------------------------------


def test_patch_class_is_the_highest_of_its_files(tmp_path: Path) -> None:
    repo = make(tmp_path, **{"src/pkg/data.py": DATA})
    data_source = (repo.root / "src/pkg/data.py").read_text()
    repo.patch(
        {
            "src/pkg/util.py": UTIL.replace("return value + 1", "return value + 2"),  # local
            "src/pkg/data.py": data_source.replace("    GREEN = 2\n", "    GREEN = 2\n    B = 3\n"),
        }
    )
    data = repo.analyze()
    assert file_entry(data, "src/pkg/util.py")["class"] == "local"
    assert file_entry(data, "src/pkg/data.py")["class"] == "contract"
    assert data["class"] == "contract"


def test_patch_class_cosmetic_plus_local_is_local(tmp_path: Path) -> None:
    repo = make(tmp_path, **{"src/pkg/data.py": DATA})
    data_source = (repo.root / "src/pkg/data.py").read_text()
    repo.patch(
        {
            "src/pkg/util.py": UTIL.replace("return value + 1", "return value + 2"),
            "src/pkg/data.py": data_source + "\n# trailing comment\n",
        }
    )
    data = repo.analyze()
    assert file_entry(data, "src/pkg/data.py")["class"] == "cosmetic"
    assert data["class"] == "local"


def test_no_change_is_unchanged(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.commit("empty")
    data = repo.analyze()
    assert data["class"] == "unchanged"
    assert data["files"] == []
    assert data["_exit"] == 0
