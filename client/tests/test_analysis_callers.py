"""``analyze``: the reverse caller index over production code (issue 12, "Reverse caller
index"; seed 000 step 2). Tests are never callers; every import form resolves; what resolves only
by an attribute name is marked as weaker evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_repos import Repo, all_callers, caller_strength, symbol

UTIL = """
    def helper(x):
        return x * 2


    def twice(x):
        return helper(helper(x))


    class Service:
        def run(self):
            return self.step() + 1

        def step(self):
            return 1

        def unrelated(self):
            return 0
    """

CALLERS = {
    "src/app/__init__.py": "from .util import helper\n",
    "src/app/other.py": "def helper(x):\n    return x\n",
    "src/app/by_name.py": "from app.util import helper\n\n\ndef a():\n    return helper(1)\n",
    "src/app/by_attr.py": "import app.util\n\n\ndef b():\n    return app.util.helper(1)\n",
    "src/app/by_alias_mod.py": "import app.util as u\n\n\ndef c():\n    return u.helper(1)\n",
    "src/app/by_alias_func.py": "from app.util import helper as h\n\n\ndef d():\n    return h(1)\n",
    "src/app/by_relative.py": "from .util import helper\n\n\ndef e():\n    return helper(1)\n",
    "src/app/by_relative_mod.py": "from . import util\n\n\ndef f():\n    return util.helper(1)\n",
    "src/app/by_reexport.py": "from app import helper\n\n\ndef g():\n    return helper(1)\n",
    "src/app/sub/__init__.py": "",
    "src/app/sub/deep.py": "from ..util import helper\n\n\ndef i():\n    return helper(1)\n",
    "src/app/methods.py": "from app.util import helper\n\n\nclass Box:\n"
    "    def open(self):\n        return helper(3)\n",
    # the other module's helper: same name, not a caller of app.util:helper
    "src/app/not_caller.py": "from app.other import helper\n\n\ndef n():\n    return helper(1)\n",
    "src/app/unrelated.py": "def helper_like():\n    return 1\n",
    # tests (and their helpers) call it too: never callers
    "tests/test_util.py": "from app.util import helper\n\n\ndef test_helper():\n"
    "    assert helper(1) == 2\n",
    "tests/helpers.py": "from app.util import helper\n\n\ndef make():\n    return helper(5)\n",
}

RESOLVED = {
    "app.util:twice",
    "app.by_name:a",
    "app.by_attr:b",
    "app.by_alias_mod:c",
    "app.by_alias_func:d",
    "app.by_relative:e",
    "app.by_relative_mod:f",
    "app.by_reexport:g",
    "app.sub.deep:i",
    "app.methods:Box.open",
}


def make(tmp_path: Path, **extra: str) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.base({"src/app/util.py": UTIL, **CALLERS, **extra})
    return repo


def change_helper(repo: Repo) -> dict[str, object]:
    source = (repo.root / "src/app/util.py").read_text()
    repo.patch({"src/app/util.py": source.replace("return x * 2", "return x * 3")})
    return repo.analyze()


@pytest.mark.parametrize("caller", sorted(RESOLVED))
def test_every_import_form_resolves_to_the_caller(tmp_path: Path, caller: str) -> None:
    data = change_helper(make(tmp_path))
    entry = symbol(data, "app.util", "helper")
    assert caller in entry["callers"], f"{caller} not among {entry['callers']}"
    assert caller_strength(entry, caller) == "import", caller


def test_same_name_in_another_module_is_not_a_caller(tmp_path: Path) -> None:
    data = change_helper(make(tmp_path))
    entry = symbol(data, "app.util", "helper")
    assert "app.not_caller:n" not in all_callers(entry)
    assert "app.unrelated:helper_like" not in all_callers(entry)


def test_caller_map_is_exactly_the_production_callers(tmp_path: Path) -> None:
    data = change_helper(make(tmp_path))
    entry = symbol(data, "app.util", "helper")
    # the package's re-export is an import, not a call; module-level uses are allowed only as
    # "<module>" entries
    functions = {c for c in entry["callers"] if not c.endswith(":<module>")}
    assert functions == RESOLVED
    assert entry["callers"] == sorted(entry["callers"])


def test_tests_are_never_callers(tmp_path: Path) -> None:
    data = change_helper(make(tmp_path))
    entry = symbol(data, "app.util", "helper")
    every = all_callers(entry) | set(entry["untested_callers"])
    assert not any("test" in c.split(":")[0] for c in every), sorted(every)
    assert not any(c.startswith(("tests", "helpers")) for c in every), sorted(every)
    # the test is a test of helper, not a caller
    assert "tests/test_util.py::test_helper" in entry["tests"]


def test_self_method_call_is_a_caller(tmp_path: Path) -> None:
    repo = make(tmp_path)
    source = (repo.root / "src/app/util.py").read_text()
    repo.patch(
        {
            "src/app/util.py": source.replace(
                "return 1\n\n    def unrelated", "return 2\n\n    def unrelated"
            )
        }
    )
    data = repo.analyze()
    entry = symbol(data, "app.util", "Service.step")
    assert entry["kind"] == "method"
    assert "app.util:Service.run" in entry["callers"]
    assert caller_strength(entry, "app.util:Service.run") != "name"
    assert "app.util:Service.unrelated" not in all_callers(entry)


def test_call_through_unknown_object_is_weak_attribute_match(tmp_path: Path) -> None:
    # helper is defined in two modules: obj.helper() cannot be resolved to either
    repo = make(tmp_path, **{"src/app/dyn.py": "def k(obj):\n    return obj.helper(1)\n"})
    data = change_helper(repo)
    entry = symbol(data, "app.util", "helper")
    assert "app.dyn:k" in all_callers(entry), "an attribute-name match must still be reported"
    assert caller_strength(entry, "app.dyn:k") != "import", "and marked as weaker evidence"


def test_weak_match_of_unique_name_is_marked(tmp_path: Path) -> None:
    # Service.step is the only "step" in the project; worker.step() still is not resolved
    repo = make(tmp_path, **{"src/app/worker.py": "def w(worker):\n    return worker.step()\n"})
    source = (repo.root / "src/app/util.py").read_text()
    repo.patch(
        {
            "src/app/util.py": source.replace(
                "return 1\n\n    def unrelated", "return 2\n\n    def unrelated"
            )
        }
    )
    data = repo.analyze()
    entry = symbol(data, "app.util", "Service.step")
    assert "app.worker:w" in all_callers(entry)
    assert caller_strength(entry, "app.worker:w") != "import"


def test_class_instantiation_and_classmethod_calls(tmp_path: Path) -> None:
    models = """
        class Order:
            def __init__(self, total):
                self.total = total

            @classmethod
            def empty(cls):
                return cls(0)
        """
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/app/__init__.py": "",
            "src/app/models.py": models,
            "src/app/api.py": "from app.models import Order\n\n\ndef create():\n"
            "    return Order.empty()\n",
        }
    )
    repo.patch({"src/app/models.py": models.replace("return cls(0)", "return cls(1)")})
    data = repo.analyze()
    entry = symbol(data, "app.models", "Order.empty")
    assert entry["callers"] == ["app.api:create"]
    assert caller_strength(entry, "app.api:create") == "import"
