"""``analyze``: the rules' corners (removed symbols with callers left behind, constructors, star
re-exports, nested and async definitions, method decorators, ``--tests``, unresolved calls,
dynamic reach from coverage contexts)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from analysis_repos import Repo, all_callers, caller_strength, codes, file_entry, items, symbol

UTIL = "def helper(x):\n    return x * 2\n\n\ndef keep():\n    return 0\n"
BASE = {
    "src/app/__init__.py": "",
    "src/app/util.py": UTIL,
    "src/app/report.py": "from app.util import helper\n\n\ndef summary():\n    return helper(1)\n",
}


def make(tmp_path: Path, **extra: str) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.base({**BASE, **extra})
    return repo


def test_removed_function_keeps_its_callers_listed(tmp_path: Path) -> None:
    # the callers left behind in the head tree are exactly what the removal breaks
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": "def keep():\n    return 0\n"})
    data = repo.analyze()
    entry = symbol(data, "app.util", "helper")
    assert entry["change"] == "removed"
    assert "app.report:summary" in entry["callers"]
    assert "app.report:summary" in entry["untested_callers"]
    assert "app.util:helper" in items(data, "contract-change")


def test_deleted_module_removes_its_public_symbols(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": None})
    data = repo.analyze()
    assert file_entry(data, "src/app/util.py")["status"] == "D"
    assert symbol(data, "app.util", "helper")["change"] == "removed"
    assert file_entry(data, "src/app/util.py")["class"] in ("contract", "cross")


def test_constructor_signature_change_reaches_instantiations(tmp_path: Path) -> None:
    models = "class Order:\n    def __init__(self, total):\n        self.total = total\n"
    repo = make(
        tmp_path,
        **{
            "src/app/models.py": models,
            "src/app/api.py": "from app.models import Order\n\n\ndef create():\n"
            "    return Order(5)\n",
        },
    )
    repo.patch({"src/app/models.py": models.replace("(self, total)", "(self, total, currency)")})
    data = repo.analyze()
    entry = symbol(data, "app.models", "Order.__init__")
    assert entry["signature_changed"] is True
    assert "app.api:create" in entry["callers"]
    assert file_entry(data, "src/app/models.py")["class"] == "contract"


def test_star_reexport_through_package_init(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "src/app/__init__.py": "from .util import *\n",
            "src/app/front.py": "from app import helper\n\n\ndef front():\n    return helper(0)\n",
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    entry = symbol(repo.analyze(), "app.util", "helper")
    assert "app.front:front" in entry["callers"]
    assert caller_strength(entry, "app.front:front") == "import"


def test_nested_function_change_is_the_outer_symbol(tmp_path: Path) -> None:
    source = "def outer(x):\n    def inner(y):\n        return y + 1\n\n    return inner(x)\n"
    repo = make(tmp_path, **{"src/app/nest.py": source})
    repo.patch({"src/app/nest.py": source.replace("y + 1", "y + 2")})
    data = repo.analyze()
    assert file_entry(data, "src/app/nest.py")["class"] == "local"
    assert "outer" in {s["name"] for s in data["symbols"]}


def test_async_function_body_change_is_local(tmp_path: Path) -> None:
    source = "async def fetch(url):\n    return url\n"
    repo = make(
        tmp_path,
        **{
            "src/app/net.py": source,
            "src/app/use.py": "from app.net import fetch\n\n\nasync def go():\n"
            "    return await fetch('x')\n",
        },
    )
    repo.patch({"src/app/net.py": source.replace("return url", "return url.strip()")})
    data = repo.analyze()
    assert file_entry(data, "src/app/net.py")["class"] == "local"
    entry = symbol(data, "app.net", "fetch")
    assert entry["kind"] == "function"
    assert entry["callers"] == ["app.use:go"]


def test_method_decorator_change_is_contract(tmp_path: Path) -> None:
    source = (
        "import functools\n\n\nclass Box:\n    @property\n    def size(self):\n        return 1\n"
    )
    repo = make(tmp_path, **{"src/app/box.py": source})
    repo.patch({"src/app/box.py": source.replace("@property", "@functools.cached_property")})
    data = repo.analyze()
    assert file_entry(data, "src/app/box.py")["class"] == "contract"
    assert symbol(data, "app.box", "Box.size")["signature_changed"] is True


def test_tests_flag_names_the_test_roots(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "qa/checks.py": "from app.report import summary\n\n\ndef test_s():\n"
            "    assert summary()\n"
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    data = repo.analyze("--src", "src", "--tests", "qa")
    entry = symbol(data, "app.util", "helper")
    assert entry["untested_callers"] == []
    assert not any(c.startswith("qa") or c.startswith("checks") for c in all_callers(entry))


def test_production_code_outside_src_is_not_a_caller(tmp_path: Path) -> None:
    # with src/ present, scripts/ is not production: it calls helper but is no caller
    repo = make(
        tmp_path,
        **{
            "scripts/tool.py": "from app.util import helper\n\n\ndef run():\n    return helper(1)\n"
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    entry = symbol(repo.analyze(), "app.util", "helper")
    assert not any("tool" in c for c in all_callers(entry))


def test_unresolved_calls_are_counted_not_hidden(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "src/app/dyn.py": "import importlib\n\n\ndef load(name):\n"
            "    return mystery(name) + importlib.import_module(name).helper(1)\n"
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    data = repo.analyze()
    entry = symbol(data, "app.util", "helper")
    # importlib.import_module(name).helper(...) can only be matched by the attribute name
    assert "app.dyn:load" in all_callers(entry)
    assert caller_strength(entry, "app.dyn:load") != "import"


def test_callers_sorted_and_formatted(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "src/app/a.py": "from app.util import helper\n\n\ndef zed():\n    return helper(1)\n"
            "\n\ndef alpha():\n    return helper(2)\n"
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    entry = symbol(repo.analyze(), "app.util", "helper")
    assert entry["callers"] == sorted(entry["callers"])
    assert all(c.count(":") == 1 for c in entry["callers"])
    assert {"app.a:alpha", "app.a:zed", "app.report:summary"} <= set(entry["callers"])


# -- dynamic reach (the optional [reach] extra) ----------------------------------------------------

HAVE_COVERAGE = importlib.util.find_spec("coverage") is not None


def test_coverage_without_the_extra_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "coverage", None)  # as if the [reach] extra were absent
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    data_file = tmp_path / ".coverage"
    data_file.write_bytes(b"")
    result = repo.run("--json", "--coverage", str(data_file))
    assert result.code == 2
    assert "coverage" in result.stderr.lower()
    assert "Traceback" not in result.stderr


def test_missing_coverage_file_is_exit_2(tmp_path: Path) -> None:
    repo = make(tmp_path)
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    result = repo.run("--json", "--coverage", str(tmp_path / "absent.coverage"))
    assert result.code == 2


@pytest.mark.skipif(not HAVE_COVERAGE, reason="needs coverage.py (the [reach] extra)")
def test_coverage_contexts_make_a_caller_tested(tmp_path: Path) -> None:
    import coverage

    repo = make(tmp_path, **{"tests/test_smoke.py": "def test_smoke():\n    assert True\n"})
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    static = symbol(repo.analyze(), "app.util", "helper")
    assert static["untested_callers"] == ["app.report:summary"]

    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    data.set_context("tests/test_smoke.py::test_smoke|run")
    data.add_lines({str(repo.root / "src/app/report.py"): [5]})  # summary's body
    data.write()
    entry = symbol(repo.analyze("--coverage", str(tmp_path / ".coverage")), "app.util", "helper")
    assert entry["untested_callers"] == []


@pytest.mark.skipif(not HAVE_COVERAGE, reason="needs coverage.py (the [reach] extra)")
def test_coverage_without_contexts_is_reach_unavailable_not_untested(tmp_path: Path) -> None:
    import coverage

    repo = make(
        tmp_path,
        **{"tests/test_r.py": "from app.report import summary\n\n\ndef test_r():\n    summary()\n"},
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    data.add_lines({str(repo.root / "src/app/util.py"): [2]})
    data.write()
    analysis = repo.analyze("--coverage", str(tmp_path / ".coverage"))
    assert symbol(analysis, "app.util", "helper")["untested_callers"] == []
    assert "untested-caller" not in codes(analysis)


def test_import_inside_the_function_is_resolved(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "src/app/lazy.py": "def lazy():\n    from app.util import helper as h\n\n"
            "    return h(1)\n"
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    entry = symbol(repo.analyze(), "app.util", "helper")
    assert "app.lazy:lazy" in entry["callers"]
    assert caller_strength(entry, "app.lazy:lazy") == "import"


def test_reexport_through_two_package_levels(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/app/__init__.py": "from .core import helper\n",
            "src/app/core/__init__.py": "from .impl import helper\n",
            "src/app/core/impl.py": UTIL,
            "src/app/use.py": "import app\n\n\ndef use():\n    return app.helper(1)\n",
        }
    )
    repo.patch({"src/app/core/impl.py": UTIL.replace("x * 2", "x * 3")})
    entry = symbol(repo.analyze(), "app.core.impl", "helper")
    assert "app.use:use" in entry["callers"]
    assert caller_strength(entry, "app.use:use") == "import"


def test_circular_reexports_do_not_hang(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/app/__init__.py": "",
            "src/app/a.py": "from app.b import thing\n\n\ndef helper(x):\n    return x\n",
            "src/app/b.py": "from app.a import thing\n",
            "src/app/c.py": "from app.a import thing\n\n\ndef c():\n    return thing()\n",
        }
    )
    repo.patch({"src/app/a.py": "from app.b import thing\n\n\ndef helper(x):\n    return x + 1\n"})
    data = repo.analyze("--budget", "60")
    assert data["complete"] is True
    assert symbol(data, "app.a", "helper")["change"] == "modified"


def test_super_call_of_overridden_method_is_a_caller(tmp_path: Path) -> None:
    source = (
        "class Base:\n    def step(self):\n        return 1\n\n\n"
        "class Child(Base):\n    def step(self):\n        return super().step() + 1\n"
    )
    repo = make(tmp_path, **{"src/app/steps.py": source})
    repo.patch({"src/app/steps.py": source.replace("return 1\n", "return 2\n", 1)})
    entry = symbol(repo.analyze(), "app.steps", "Base.step")
    assert "app.steps:Child.step" in all_callers(entry)


def test_relative_import_above_the_top_package_does_not_crash(tmp_path: Path) -> None:
    repo = make(
        tmp_path,
        **{
            "src/app/odd.py": "from ...nowhere import helper\n\n\ndef odd():\n"
            "    return helper(1)\n"
        },
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    data = repo.analyze()
    assert "app.odd:odd" not in symbol(data, "app.util", "helper")["callers"]
