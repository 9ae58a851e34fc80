"""``analyze``: wrong results found by trying the command on real projects (click, black,
packaging, pluggy), each reproduced on a tiny repository built here (issue 12; SPEC 4.5, 5.7).

Every test names the real case it stands for and reads only the command line and the JSON it
prints, except two that reach inside on purpose: an internal error forced through
``Analysis.run`` (13), and a stepping clock (``reading.time``) that cuts the analysis at every
point in turn (12)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from analysis_repos import (
    Repo,
    all_callers,
    caller_strength,
    codes,
    dedent,
    file_entry,
    items,
    symbol,
    symbol_keys,
)


def strength_of(entry: dict[str, Any], test: str) -> str:
    """How a test was tied to a symbol (``import`` when not said otherwise, as for callers)."""
    evidence = entry.get("evidence") or {}
    assert isinstance(evidence, dict)
    strength: str = evidence.get("tests", {}).get(test, "import")
    return strength


# -- 1. a function re-exported by its package, its name defined twice (click.edit) ---------------

TERMUI = """
    class Editor:
        def __init__(self, editor=None):
            self.editor = editor

        def edit(self, text):
            return text


    def edit(text=None, editor=None):
        return Editor(editor=editor).edit(text)
    """


def test_reexported_function_called_through_the_package_is_tested(tmp_path: Path) -> None:
    # click: `click.edit` is `click.termui:edit`, re-exported as `from .termui import edit as
    # edit`, while `Editor.edit` is a method of the same name; `import click; click.edit(...)`
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/pkg/__init__.py": "from .termui import edit as edit\n",
            "src/pkg/termui.py": TERMUI,
            "tests/test_termui.py": """
                import pkg


                def test_edit():
                    assert pkg.edit("x") == "x"
                """,
        }
    )
    repo.patch(
        {
            "src/pkg/termui.py": TERMUI.replace(
                "return Editor(editor=editor).edit(text)",
                "return Editor(editor=editor).edit(text or '')",
            )
        }
    )
    data = repo.analyze()
    entry = symbol(data, "pkg.termui", "edit")
    assert entry["change"] == "modified"
    test = "tests/test_termui.py::test_edit"
    assert test in entry["tests"], entry["tests"]
    assert strength_of(entry, test) == "import"


# -- 2. a method named like a builtin type's method (black's Line.append) ------------------------

LINES = """
    class Line:
        def __init__(self):
            self.leaves = []

        def append(self, leaf):
            self.leaves = [*self.leaves, leaf]
    """

BUILTIN_NAMES = {
    "src/pkg/__init__.py": "",
    "src/pkg/lines.py": LINES,
    "src/pkg/other.py": """
        def collect(xs):
            items = []
            for x in xs:
                items.append(x)
            return items
        """,
    "src/pkg/user.py": """
        from pkg.lines import Line


        def build(leaf):
            line = Line()
            line.append(leaf)
            return line
        """,
    "tests/test_other.py": """
        from pkg.other import collect


        def test_collect():
            xs = []
            xs.append(1)
            assert collect(xs) == [1]
        """,
    "tests/test_lines.py": """
        from pkg.lines import Line


        def test_line():
            line = Line()
            line.append(1)
            assert line.leaves == [1]
        """,
}


def change_append(tmp_path: Path) -> dict[str, Any]:
    repo = Repo(tmp_path / "repo")
    repo.base(BUILTIN_NAMES)
    repo.patch({"src/pkg/lines.py": LINES.replace("[*self.leaves, leaf]", "self.leaves + [leaf]")})
    return repo.analyze()


def test_list_append_is_not_a_strong_caller_of_a_method_named_append(tmp_path: Path) -> None:
    data = change_append(tmp_path)
    entry = symbol(data, "pkg.lines", "Line.append")
    # `items.append(x)` on a list: at most a name-only match, never a resolved caller
    assert "pkg.other:collect" not in entry["callers"], entry["callers"]
    assert "pkg.other:collect" not in entry["untested_callers"], entry["untested_callers"]


def test_list_append_in_a_test_is_not_a_test_of_the_method(tmp_path: Path) -> None:
    data = change_append(tmp_path)
    entry = symbol(data, "pkg.lines", "Line.append")
    # `xs.append(1)` in a test that never names Line
    assert "tests/test_other.py::test_collect" not in entry["tests"], entry["tests"]


# -- 3. a local name shadows an import (click's get_params and help_option) -----------------------

DECORATORS = """
    def help_option(*names):
        return names
    """

SHADOWED = {
    "src/pkg/__init__.py": "",
    "src/pkg/decorators.py": DECORATORS,
    "src/pkg/core.py": """
        from .decorators import help_option


        class Command:
            def get_help_option(self, ctx):
                return ctx

            def get_params(self, ctx):
                help_option = self.get_help_option(ctx)
                help_option.x()
                return help_option()

            def with_param(self, help_option):
                return help_option(1)

            def real(self):
                return help_option("--help")
        """,
}


def change_help_option(tmp_path: Path) -> dict[str, Any]:
    repo = Repo(tmp_path / "repo")
    repo.base(SHADOWED)
    repo.patch({"src/pkg/decorators.py": DECORATORS.replace("return names", "return list(names)")})
    data = repo.analyze()
    entry = symbol(data, "pkg.decorators", "help_option")
    # the control: the method that does call the import is a caller
    assert "pkg.core:Command.real" in entry["callers"], entry["callers"]
    return entry


def test_local_variable_shadows_an_import(tmp_path: Path) -> None:
    entry = change_help_option(tmp_path)
    assert "pkg.core:Command.get_params" not in all_callers(entry), entry


def test_parameter_shadows_an_import(tmp_path: Path) -> None:
    entry = change_help_option(tmp_path)
    assert "pkg.core:Command.with_param" not in all_callers(entry), entry


# -- 4. imports inside module-level try/if blocks (packaging, pathlib-like os.path) --------------


@pytest.mark.parametrize(
    "binding",
    [
        "if True:\n    import pkg.posixy as path\n",
        "try:\n    import pkg.posixy as path\nexcept ImportError:\n    raise\n",
        "import sys\n\nif sys.platform == 'darwin':\n    import pkg.posixy as path\n"
        "else:\n    import pkg.posixy as path\n",
    ],
    ids=["if", "try", "if-else"],
)
def test_import_inside_a_module_level_block_binds_its_name(tmp_path: Path, binding: str) -> None:
    repo = Repo(tmp_path / "repo")
    posixy = "def join(a):\n    return a\n"
    repo.base(
        {
            "src/pkg/__init__.py": "",
            "src/pkg/posixy.py": posixy,
            "src/pkg/osx.py": binding,
            "src/pkg/use.py": "import pkg.osx\n\n\ndef f():\n    return pkg.osx.path.join(1)\n",
        }
    )
    repo.patch({"src/pkg/posixy.py": posixy.replace("return a", "return str(a)")})
    data = repo.analyze()
    entry = symbol(data, "pkg.posixy", "join")
    assert "pkg.use:f" in entry["callers"], entry
    assert caller_strength(entry, "pkg.use:f") == "import"


# -- 5. a moved module: moves matched one to one, by name and content (pluggy's _hooks) -----------

HOOKS = """
    class HookspecMarker:
        pass


    class HookimplMarker:
        pass


    class HookRelay:
        pass


    class _HookCaller:
        pass


    class HookCallError(Exception):
        pass


    class PluginValidationError(Exception):
        pass


    def varnames(func):
        return ()
    """

HOOK_NAMES = [
    "HookspecMarker",
    "HookimplMarker",
    "HookRelay",
    "_HookCaller",
    "HookCallError",
    "PluginValidationError",
    "varnames",
]


def move_hooks(tmp_path: Path) -> dict[str, Any]:
    repo = Repo(tmp_path / "repo")
    repo.base({"src/pkg/__init__.py": "", "src/pkg/hooks.py": HOOKS})
    repo.mv("src/pkg/hooks.py", "src/pkg/_hooks.py")
    repo.commit("rename the module")
    return repo.analyze()


def test_module_move_never_pairs_two_different_names(tmp_path: Path) -> None:
    data = move_hooks(tmp_path)
    pairs = {
        f"{s['module']}:{s['name']}": s["moved_from"] for s in data["symbols"] if "moved_from" in s
    }
    wrong = {new: old for new, old in pairs.items() if new.split(":")[1] != old.split(":")[1]}
    assert not wrong, wrong
    # one to one: no old symbol is the origin of two new ones
    assert len(set(pairs.values())) == len(pairs), pairs


def test_module_move_removes_every_old_symbol(tmp_path: Path) -> None:
    data = move_hooks(tmp_path)
    for name in HOOK_NAMES:
        assert symbol(data, "pkg.hooks", name)["change"] == "removed", name


def test_module_move_lists_the_old_public_symbols_as_contract_change(tmp_path: Path) -> None:
    data = move_hooks(tmp_path)
    listed = items(data, "contract-change")
    public = [name for name in HOOK_NAMES if not name.startswith("_")]
    missing = [name for name in public if f"pkg.hooks:{name}" not in listed]
    assert not missing, (missing, sorted(listed))


# -- 6. super().__init__() and other dunder calls (black's exception classes) ---------------------

BASE_CLASS = """
    class Base:
        def __init__(self):
            self.x = 1
    """


def test_super_init_and_dunder_calls_are_not_callers(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/pkg/__init__.py": "",
            "src/pkg/base.py": BASE_CLASS,
            "src/pkg/errors.py": """
                class CannotSplit(Exception):
                    def __init__(self, msg):
                        super().__init__(msg)
                        self.msg = msg


                class Mapping(dict):
                    def __init__(self):
                        super().__init__()
                        self.y = 2


                def reset(obj):
                    obj.__init__()
                    return obj
                """,
        }
    )
    repo.patch({"src/pkg/base.py": BASE_CLASS.replace("self.x = 1", "self.x = 2")})
    data = repo.analyze()
    entry = symbol(data, "pkg.base", "Base.__init__")
    every = all_callers(entry)
    assert "pkg.errors:CannotSplit.__init__" not in every, every
    assert "pkg.errors:Mapping.__init__" not in every, every
    # no name-only match on a dunder method name at all
    assert "pkg.errors:reset" not in every, every
    assert not entry.get("name_callers"), entry.get("name_callers")


# -- 7. candidate-only is judged per test, not per file ------------------------------------------

UTIL = """
    def helper(x):
        return x * 2
    """

OLD_TEST = """
    from app.util import helper


    def test_old():
        assert helper(1) == 2
    """


def test_new_test_beside_an_unchanged_one_is_not_candidate_only(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"src/app/__init__.py": "", "src/app/util.py": UTIL, "tests/test_util.py": OLD_TEST})
    repo.patch(
        {
            "src/app/util.py": UTIL.replace("x * 2", "x * 3"),
            "tests/test_util.py": dedent(OLD_TEST)
            + "\n\ndef test_new():\n    assert helper(2) == 6\n",
        }
    )
    data = repo.analyze()
    entry = symbol(data, "app.util", "helper")
    assert {"tests/test_util.py::test_old", "tests/test_util.py::test_new"} <= set(entry["tests"])
    # test_old is inherited: main's own evidence still guards the change
    assert "candidate-only" not in codes(data), items(data, "candidate-only")
    assert entry["candidate_only"] is False


AUTOUSE = """
    import pytest

    from app.util import helper


    @pytest.fixture(autouse=True)
    def _warm():
        helper(1)
    """

UNRELATED_TEST = """
    def test_thing():
        assert True
    """


def test_autouse_fixture_the_patch_added_is_candidate_only(tmp_path: Path) -> None:
    # the only test that reaches helper does so through a fixture the patch itself wrote
    repo = Repo(tmp_path / "repo")
    repo.base(
        {"src/app/__init__.py": "", "src/app/util.py": UTIL, "tests/test_thing.py": UNRELATED_TEST}
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3"), "tests/conftest.py": AUTOUSE})
    data = repo.analyze()
    assert "app.util:helper" in items(data, "candidate-only"), (
        symbol(data, "app.util", "helper")["tests"],
        sorted(codes(data)),
    )


def test_autouse_fixture_main_already_had_is_not_candidate_only(tmp_path: Path) -> None:
    # the control: the same fixture inherited from main is not the patch grading itself
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/app/__init__.py": "",
            "src/app/util.py": UTIL,
            "tests/test_thing.py": UNRELATED_TEST,
            "tests/conftest.py": AUTOUSE,
        }
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    data = repo.analyze()
    assert "candidate-only" not in codes(data), items(data, "candidate-only")


def test_unchanged_test_naming_the_symbol_beside_a_new_autouse_fixture_is_inherited(
    tmp_path: Path,
) -> None:
    # packaging cf100d20: the patch adds an autouse fixture that every test now passes
    # through, but a test main already had names helper itself: inherited evidence
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/app/__init__.py": "",
            "src/app/util.py": UTIL,
            "tests/test_thing.py": "from app.util import helper\n\n\n"
            "def test_thing():\n    assert helper(1)\n",
        }
    )
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3"), "tests/conftest.py": AUTOUSE})
    data = repo.analyze()
    assert "tests/test_thing.py::test_thing" in symbol(data, "app.util", "helper")["tests"]
    assert "candidate-only" not in codes(data), items(data, "candidate-only")


# -- 8. a test function's parameters are not a public interface ----------------------------------


def test_new_fixture_parameter_of_a_test_is_not_contract(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    test = "def test_x(tmp_path):\n    assert tmp_path\n"
    repo.base({"src/app/__init__.py": "", "src/app/util.py": UTIL, "tests/test_x.py": test})
    repo.patch({"tests/test_x.py": test.replace("(tmp_path)", "(tmp_path, monkeypatch)")})
    data = repo.analyze()
    entry = file_entry(data, "tests/test_x.py")
    assert entry["class"] != "contract", entry
    reasons = entry.get("reasons", [])
    assert not any("public interface" in r for r in reasons), reasons


# -- 9. a re-export removed from the package (packaging) -----------------------------------------


def test_removed_reexport_is_contract(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    init = "from .core import Other as Other\nfrom .core import Thing as Thing\n"
    repo.base(
        {
            "src/pkg/__init__.py": init,
            "src/pkg/core.py": "class Thing:\n    pass\n\n\nclass Other:\n    pass\n",
        }
    )
    repo.patch({"src/pkg/__init__.py": "from .core import Other as Other\n"})
    data = repo.analyze()
    entry = file_entry(data, "src/pkg/__init__.py")
    assert entry["class"] == "contract", entry
    assert "contract-change" in codes(data), sorted(codes(data))
    listed = items(data, "contract-change")
    assert any("Thing" in i for i in listed), sorted(listed)


# -- 10. a file moved with identical content (R100) says so --------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("tests/test_core.py", "tests/unit/test_core.py"),
        ("src/app/core.py", "src/app/engine.py"),
    ],
    ids=["test-file", "production-file"],
)
def test_pure_rename_reason_says_it_moved(tmp_path: Path, old: str, new: str) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/app/__init__.py": "",
            "src/app/core.py": "def compute(x):\n    return x + 1\n",
            "tests/test_core.py": "from app.core import compute\n\n\ndef test_compute():\n"
            "    assert compute(1) == 2\n",
        }
    )
    repo.mv(old, new)
    repo.commit("rename")
    data = repo.analyze()
    entry = file_entry(data, new)
    assert entry["status"] == "R"
    reasons = entry.get("reasons", [])
    assert any("moved" in r for r in reasons), reasons
    assert "formatting or comments only" not in reasons, reasons


# -- 11. golden files under the fixture globs are data, not Python (black's test data) -----------

PY2 = 'print "hello"\n'


def test_unparsable_golden_py_under_fixture_globs_is_data(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base(
        {
            "src/app/__init__.py": "",
            "src/app/util.py": UTIL,
            "tests/test_util.py": OLD_TEST,
            "tests/data/kept_py2.py": PY2,
            "tests/data/edited_py2.py": PY2,
        }
    )
    repo.patch(
        {
            "tests/data/edited_py2.py": 'print "hello, world"\n',
            "tests/data/added_py2.py": "exec 'x = 1'\n",
        }
    )
    data = repo.analyze("--fixtures", "tests/data/**")
    errors = [e["path"] for e in data.get("parse_errors", [])]
    assert not any(p.startswith("tests/data/") for p in errors), errors
    for path in ("tests/data/edited_py2.py", "tests/data/added_py2.py"):
        entry = file_entry(data, path)
        assert entry["kind"] == "fixture", entry
        assert entry["class"] != "cross", entry


def test_conftest_under_fixture_globs_stays_python(tmp_path: Path) -> None:
    # a conftest.py is always code pytest runs, wherever it sits
    repo = Repo(tmp_path / "repo")
    repo.base({"src/app/__init__.py": "", "src/app/util.py": UTIL, "tests/test_util.py": OLD_TEST})
    repo.patch({"tests/data/conftest.py": "def (:\n"})
    data = repo.analyze("--fixtures", "tests/data/**")
    errors = [e["path"] for e in data.get("parse_errors", [])]
    assert any(p.startswith("tests/data/conftest.py") for p in errors), errors
    assert file_entry(data, "tests/data/conftest.py")["class"] == "cross"


# -- 12. a budget that cuts the analysis short fails closed --------------------------------------


def test_budget_cut_after_some_files_were_judged_is_cross(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    modules = {f"src/app/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(6)}
    repo.base({"src/app/__init__.py": "", **modules, "tests/test_m.py": OLD_TEST})
    # formatting only: judged whole, every file would be cosmetic
    repo.patch({p: s.replace(f"x + {i}", f"x  +  {i}") for i, (p, s) in enumerate(modules.items())})
    result = repo.run("--json", "--budget", "0.000001")
    data = result.data
    assert data["complete"] is False, "the budget did not cut the analysis short"
    assert result.code == 1, result.code
    assert data["class"] == "cross", data["class"]


class SteppingTime:
    """``time`` for the analysis clock: every reading is one second after the last, so that a
    budget of N seconds runs out after about N looks at the clock, at a point set by N."""

    def __init__(self) -> None:
        import time

        self.real = time
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def test_budget_cut_at_any_point_is_cross(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # however far the analysis got (files classified, symbols judged, cone...), a cut answer is
    # incomplete, blocks, and its class is cross; a cosmetic patch shows what was judged before
    from freezedebt_ci.analysis import reading

    repo = Repo(tmp_path / "repo")
    modules = {f"src/app/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(3)}
    repo.base({"src/app/__init__.py": "", **modules, "tests/test_m.py": OLD_TEST})
    repo.patch({p: s.replace(f"x + {i}", f"x  +  {i}") for i, (p, s) in enumerate(modules.items())})
    cut = 0
    for budget in range(1, 200):
        monkeypatch.setattr(reading, "time", SteppingTime())
        result = repo.run("--json", "--budget", str(budget))
        data = result.data
        if data["complete"]:
            break
        cut += 1
        assert (result.code, data["class"]) == (1, "cross"), (budget, data["class"], data["files"])
    else:
        raise AssertionError("the analysis never completed")
    assert cut >= 2, "the stepping clock did not cut the analysis at several points"


# -- 13. an internal error is not a blocking finding ---------------------------------------------


def test_internal_error_exits_2_not_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from freezedebt_ci.analysis import engine

    def explode(self: object) -> dict[str, object]:
        raise RuntimeError("kaboom in the analysis engine")

    monkeypatch.setattr(engine.Analysis, "run", explode)
    repo = Repo(tmp_path / "repo")
    repo.base({"src/app/__init__.py": "", "src/app/util.py": UTIL})
    repo.patch({"src/app/util.py": UTIL.replace("x * 2", "x * 3")})
    try:
        result = repo.run("--json")
    except RuntimeError as exc:  # a shell would see exit 1: "a blocking finding"
        pytest.fail(f"the error escaped the command (exit 1 from a shell): {exc!r}")
    assert result.code == 2, (result.code, result.stderr)
    assert "kaboom" in result.stderr or "RuntimeError" in result.stderr, result.stderr


# -- 14. speed guard: tests that cannot import a symbol are not read -----------------------------

SHUTILISH = """
    def copyfileobj(src, dst):
        dst.write(src.read())


    def copy(src, dst):
        copyfileobj(src, dst)


    def move(src, dst):
        copy(src, dst)
    """

NOISE = """
    import copy


    def test_copy_{i}():
        assert copy.copy([{i}]) == [{i}]


    def test_move_{i}():
        move = {{"from": {i}}}.copy()
        assert move
    """


def shutil_repo(tmp_path: Path, **extra: str) -> Repo:
    repo = Repo(tmp_path / "repo")
    noise = {f"tests/test_noise_{i}.py": NOISE.format(i=i) for i in range(30)}
    repo.base(
        {
            "src/pkg/__init__.py": "",
            "src/pkg/shutilish.py": SHUTILISH,
            "tests/test_shutilish.py": """
                import io

                from pkg.shutilish import copyfileobj


                def test_copyfileobj():
                    out = io.StringIO()
                    copyfileobj(io.StringIO("a"), out)
                    assert out.getvalue() == "a"
                """,
            **noise,
            **extra,
        }
    )
    repo.patch(
        {
            "src/pkg/shutilish.py": SHUTILISH.replace(
                "dst.write(src.read())", "dst.write(src.read() or '')"
            )
        }
    )
    return repo


def test_test_files_that_never_import_the_package_are_not_read(tmp_path: Path) -> None:
    data = shutil_repo(tmp_path).analyze()
    entry = symbol(data, "pkg.shutilish", "copyfileobj")
    assert "tests/test_shutilish.py::test_copyfileobj" in entry["tests"], entry["tests"]
    read = data["stats"]["test_files_read"]
    assert read <= 3, f"{read} test files read for one changed module ({symbol_keys(data)})"


def test_tests_through_a_helper_module_still_count(tmp_path: Path) -> None:
    # the control: a test that imports a helper module that imports the package is read
    repo = shutil_repo(
        tmp_path,
        **{
            "tests/helpers.py": "from pkg.shutilish import copyfileobj\n\n\ndef dup(a, b):\n"
            "    copyfileobj(a, b)\n",
            "tests/test_via_helper.py": "import io\n\nfrom helpers import dup\n\n\n"
            "def test_dup():\n    dup(io.StringIO('a'), io.StringIO())\n",
        },
    )
    data = repo.analyze()
    entry = symbol(data, "pkg.shutilish", "copyfileobj")
    assert "tests/test_via_helper.py::test_dup" in entry["tests"], entry["tests"]
