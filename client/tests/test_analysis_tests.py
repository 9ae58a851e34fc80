"""``analyze``: which tests reference a changed symbol, and its untested production callers
(issue 12, "Tests that reference a symbol"; seed 000 step 3; SPEC 5.7 ``untested-caller``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_repos import Repo, codes, items, symbol

UTIL = """
    def helper(x):
        return x * 2


    def fmt(x):
        return str(x)
    """

BASE = {
    "src/app/__init__.py": "",
    "src/app/util.py": UTIL,
    "src/app/other.py": "def helper(x):\n    return x\n",
    "src/app/report.py": """
        from app.util import helper


        def summary():
            return helper(1)


        def detail():
            return helper(2)
        """,
    "tests/test_fmt.py": "from app.util import fmt\n\n\ndef test_fmt():\n    assert fmt(1)\n",
}


def analyze(tmp_path: Path, tests: dict[str, str]) -> dict[str, object]:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, **tests})
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    return repo.analyze()


FORMS = {
    "name": (
        {"tests/test_a.py": "from app.util import helper\n\n\ndef test_a():\n    helper(1)\n"},
        "tests/test_a.py::test_a",
    ),
    "attribute": (
        {"tests/test_a.py": "import app.util\n\n\ndef test_a():\n    app.util.helper(1)\n"},
        "tests/test_a.py::test_a",
    ),
    "module-alias": (
        {"tests/test_a.py": "from app import util as u\n\n\ndef test_a():\n    u.helper(1)\n"},
        "tests/test_a.py::test_a",
    ),
    "function-alias": (
        {"tests/test_a.py": "from app.util import helper as h\n\n\ndef test_a():\n    h(1)\n"},
        "tests/test_a.py::test_a",
    ),
    "name-not-called": (
        {
            "tests/test_a.py": "from app.util import helper\n\n\ndef test_a():\n"
            "    assert callable(helper)\n"
        },
        "tests/test_a.py::test_a",
    ),
    "keyword-name": (
        {
            "tests/test_a.py": """
                from unittest import mock

                import app.util


                def test_a():
                    with mock.patch.multiple("app.util", helper=mock.DEFAULT):
                        app.util.fmt(1)
                """
        },
        "tests/test_a.py::test_a",
    ),
    "mock-patch-string": (
        {
            "tests/test_a.py": """
                from unittest import mock


                def test_a():
                    with mock.patch("app.util.helper", return_value=0):
                        pass
                """
        },
        "tests/test_a.py::test_a",
    ),
    "mock-patch-decorator": (
        {
            "tests/test_a.py": """
                from unittest.mock import patch


                @patch("app.util.helper")
                def test_a(fake):
                    assert fake is not None
                """
        },
        "tests/test_a.py::test_a",
    ),
    "monkeypatch-setattr-string": (
        {
            "tests/test_a.py": """
                def test_a(monkeypatch):
                    monkeypatch.setattr("app.util.helper", lambda x: x)
                """
        },
        "tests/test_a.py::test_a",
    ),
    "monkeypatch-setattr-object": (
        {
            "tests/test_a.py": """
                from app import util


                def test_a(monkeypatch):
                    monkeypatch.setattr(util, "helper", lambda x: x)
                """
        },
        "tests/test_a.py::test_a",
    ),
    "conftest-fixture": (
        {
            "tests/conftest.py": """
                import pytest

                from app.util import helper


                @pytest.fixture
                def doubled():
                    return helper(4)
                """,
            "tests/test_a.py": "def test_a(doubled):\n    assert doubled == 8\n",
        },
        "tests/test_a.py::test_a",
    ),
    "fixture-of-fixture": (
        {
            "tests/conftest.py": """
                import pytest

                from app.util import helper


                @pytest.fixture
                def doubled():
                    return helper(4)


                @pytest.fixture
                def payload(doubled):
                    return {"n": doubled}
                """,
            "tests/test_a.py": "def test_a(payload):\n    assert payload\n",
        },
        "tests/test_a.py::test_a",
    ),
    "file-fixture": (
        {
            "tests/test_a.py": """
                import pytest

                from app.util import helper


                @pytest.fixture
                def doubled():
                    return helper(4)


                def test_a(doubled):
                    assert doubled == 8
                """
        },
        "tests/test_a.py::test_a",
    ),
    "usefixtures": (
        {
            "tests/conftest.py": """
                import pytest

                from app.util import helper


                @pytest.fixture
                def warmed():
                    helper(0)
                """,
            "tests/test_a.py": """
                import pytest


                @pytest.mark.usefixtures("warmed")
                def test_a():
                    assert True
                """,
        },
        "tests/test_a.py::test_a",
    ),
    "helper-in-test-file": (
        {
            "tests/test_a.py": """
                from app.util import helper


                def _build():
                    return helper(1)


                def test_a():
                    assert _build()
                """
        },
        "tests/test_a.py::test_a",
    ),
    "helper-module": (
        {
            "tests/helpers.py": "from app.util import helper\n\n\ndef build():\n"
            "    return helper(1)\n",
            "tests/test_a.py": "from helpers import build\n\n\ndef test_a():\n    assert build()\n",
        },
        "tests/test_a.py::test_a",
    ),
    "test-class-method": (
        {
            "tests/test_a.py": """
                from app.util import helper


                class TestHelper:
                    def test_a(self):
                        assert helper(1)
                """
        },
        "tests/test_a.py::TestHelper::test_a",
    ),
    "parametrized": (
        {
            "tests/test_a.py": """
                import pytest

                from app.util import helper


                @pytest.mark.parametrize("n", [1, 2, 3])
                def test_a(n):
                    assert helper(n)
                """
        },
        "tests/test_a.py::test_a",
    ),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_test_referencing_the_symbol_is_found(tmp_path: Path, form: str) -> None:
    files, nodeid = FORMS[form]
    data = analyze(tmp_path, files)
    entry = symbol(data, "app.util", "helper")
    assert nodeid in entry["tests"], f"{form}: {nodeid} not among {entry['tests']}"
    assert "tests/test_fmt.py::test_fmt" not in entry["tests"]
    # tests are node ids path::qualname, without parameters
    assert all("[" not in t for t in entry["tests"])


def test_test_of_same_name_in_other_module_does_not_reference_it(tmp_path: Path) -> None:
    data = analyze(
        tmp_path,
        {"tests/test_o.py": "from app.other import helper\n\n\ndef test_o():\n    helper(1)\n"},
    )
    assert "tests/test_o.py::test_o" not in symbol(data, "app.util", "helper")["tests"]


def test_caller_named_by_no_test_is_untested(tmp_path: Path) -> None:
    data = analyze(
        tmp_path,
        {
            # tests helper and summary, but not detail
            "tests/test_r.py": """
                from app.report import summary
                from app.util import helper


                def test_helper():
                    assert helper(1) == 2


                def test_summary():
                    assert summary() == 2
                """
        },
    )
    entry = symbol(data, "app.util", "helper")
    assert set(entry["callers"]) == {"app.report:summary", "app.report:detail"}
    assert entry["untested_callers"] == ["app.report:detail"]
    assert "untested-caller" in codes(data)
    assert items(data, "untested-caller") == {"app.report:detail"}
    assert data["_exit"] == 1


def test_testing_only_the_helper_leaves_its_callers_untested(tmp_path: Path) -> None:
    data = analyze(
        tmp_path,
        {"tests/test_h.py": "from app.util import helper\n\n\ndef test_h():\n    helper(1)\n"},
    )
    entry = symbol(data, "app.util", "helper")
    assert entry["tests"] == ["tests/test_h.py::test_h"]
    assert entry["untested_callers"] == ["app.report:detail", "app.report:summary"]
    assert items(data, "untested-caller") == {"app.report:detail", "app.report:summary"}


def test_every_caller_tested_means_no_untested_caller(tmp_path: Path) -> None:
    data = analyze(
        tmp_path,
        {
            "tests/test_r.py": """
                from app import report


                def test_summary():
                    assert report.summary()


                def test_detail():
                    assert report.detail()
                """
        },
    )
    entry = symbol(data, "app.util", "helper")
    assert entry["untested_callers"] == []
    assert "untested-caller" not in codes(data)


def test_caller_tested_only_through_mock_patch_of_it_counts_as_referenced(tmp_path: Path) -> None:
    data = analyze(
        tmp_path,
        {
            "tests/test_r.py": """
                from unittest import mock

                from app import report


                def test_summary():
                    assert report.summary()


                def test_detail_patched():
                    with mock.patch("app.report.detail", return_value=0):
                        pass
                """
        },
    )
    assert symbol(data, "app.util", "helper")["untested_callers"] == []


def test_caller_in_test_only_file_under_src_is_not_a_test(tmp_path: Path) -> None:
    # a production module whose name merely contains "test" is still production
    data = analyze(
        tmp_path,
        {
            "src/app/attestation.py": "from app.util import helper\n\n\ndef attest():\n"
            "    return helper(9)\n"
        },
    )
    entry = symbol(data, "app.util", "helper")
    assert "app.attestation:attest" in entry["callers"]
    assert "app.attestation:attest" in entry["untested_callers"]
