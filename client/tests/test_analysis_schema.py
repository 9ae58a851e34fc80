"""The analysis JSON validates against the JSON Schema shipped in the package (issue 12, "The
analysis JSON"; SPEC 4.5), on analyses that exercise every section; and the facts cache (a second
run parses nothing and answers the same)."""

from __future__ import annotations

import json
import os
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from analysis_repos import Repo, freeze, ledger, symbol

Json = Any


# -- a small validator for the JSON Schema keywords the schema uses (jsonschema is not a
#    dependency of the stdlib-only client; when it is installed it is used as well) -------------


class Invalid(AssertionError):
    pass


def _type_ok(value: Json, name: str) -> bool:
    return {
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "null": value is None,
    }[name]


def validate(value: Json, schema: Json, root: Json, where: str = "$") -> None:
    if schema is True or schema == {}:
        return
    if schema is False:
        raise Invalid(f"{where}: not allowed")
    known = {
        "$schema", "$id", "title", "description", "$defs", "$ref", "type", "enum", "const",
        "properties", "required", "additionalProperties", "items", "maxItems", "minItems",
        "maxLength", "minLength", "pattern", "anyOf", "oneOf", "minimum", "maximum", "format",
        "default", "examples", "propertyNames", "uniqueItems",
    }  # fmt: skip
    unknown = set(schema) - known
    assert not unknown, f"validator does not know {unknown} (at {where})"
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        validate(value, target, root, where)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, n) for n in names):
            raise Invalid(f"{where}: {value!r:.80} is not {names}")
    if "enum" in schema and value not in schema["enum"]:
        raise Invalid(f"{where}: {value!r} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        raise Invalid(f"{where}: {value!r} is not {schema['const']!r}")
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf", schema.get("oneOf"))
        errors = []
        for option in options:
            try:
                validate(value, option, root, where)
            except Invalid as exc:
                errors.append(str(exc))
        if len(errors) == len(options):
            raise Invalid(f"{where}: matches no option: {errors}")
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                raise Invalid(f"{where}: {name!r} is required")
        properties = schema.get("properties", {})
        for name, item in value.items():
            if name in properties:
                validate(item, properties[name], root, f"{where}.{name}")
            elif "additionalProperties" in schema:
                validate(item, schema["additionalProperties"], root, f"{where}.{name}")
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise Invalid(f"{where}: more than {schema['maxItems']} items")
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise Invalid(f"{where}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for index, item in enumerate(value):
                validate(item, schema["items"], root, f"{where}[{index}]")
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise Invalid(f"{where}: longer than {schema['maxLength']}")
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise Invalid(f"{where}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise Invalid(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise Invalid(f"{where}: below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise Invalid(f"{where}: above {schema['maximum']}")


def load_schema() -> Json:
    ref = resources.files("freezedebt_ci.analysis").joinpath("schema.json")
    if not ref.is_file():
        pytest.fail("freezedebt_ci/analysis/schema.json is not in the package")
    return json.loads(ref.read_text(encoding="utf-8"))


def check(document: Json) -> None:
    schema = load_schema()
    document = {k: v for k, v in document.items() if k != "_exit"}
    validate(document, schema, schema)
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError:
        return
    jsonschema.validate(document, schema)


# -- analyses that touch every section ------------------------------------------------------------

RICH_BASE = {
    "src/app/__init__.py": "from .util import helper\n",
    "src/app/util.py": "def helper(x):\n    return x * 2\n\n\nclass Box:\n    def get(self):\n"
    "        return helper(1)\n",
    "src/app/api.py": "from app import helper\n\n\ndef endpoint(x):\n    return helper(x)\n",
    "src/app/old.py": "def legacy():\n    return 1\n",
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef box():\n"
    "    from app.util import Box\n\n    return Box()\n",
    "tests/test_util.py": "from app.util import helper\n\n\ndef test_helper(box):\n"
    "    assert helper(1) == box.get()\n",
    "tests/fixtures/golden.json": "{}\n",
    "freeze_ledger.toml": ledger(
        [freeze("FRZ-1", "tests/test_util.py::test_helper", blocks=["helper"])]
    ),
    "oracle_map.toml": '[features.app]\nprod = ["src/app/**"]\noracle = ["tests/fixtures/**"]\n',
}


def rich(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.base(RICH_BASE)
    result = repo.cli("fixtures", "lock")
    assert result.code == 0, result.stderr
    repo.commit("lock", tag="base")
    repo.mv("src/app/old.py", "src/app/new.py")
    repo.write(
        {
            "src/app/util.py": RICH_BASE["src/app/util.py"].replace(
                "def helper(x):", "def helper(x, y=0):"
            ),
            "src/app/broken.py": "def (:\n",
            "tests/fixtures/golden.json": '{"changed": true}\n',
            "tests/fixtures/extra.json": "[]\n",
            "tests/test_util.py": RICH_BASE["tests/test_util.py"] + "\n\ndef test_more():\n"
            "    assert helper(2)\n",
            "assets/blob.bin": bytes(range(256)),
            "README.md": "readme\n",
        }
    )
    os.symlink("util.py", repo.root / "src/app/link.py")
    repo.commit("patch")
    return repo


def test_schema_is_shipped_in_the_package() -> None:
    schema = load_schema()
    assert schema.get("$schema", "").startswith("https://json-schema.org/")
    assert "freezedebt-analysis/1" in json.dumps(schema)


def test_schema_is_package_data_of_the_distribution() -> None:
    # a wheel carries only the package data pyproject.toml names: the schema must be among it
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    data = pyproject["tool"]["setuptools"].get("package-data", {})
    patterns = [
        p for key in ("freezedebt_ci", "freezedebt_ci.analysis", "*") for p in data.get(key, [])
    ]
    assert any(
        re.fullmatch(p.replace(".", r"\.").replace("**/", "(.*/)?").replace("*", "[^/]*"), name)
        for p in patterns
        for name in ("analysis/schema.json", "schema.json")
    ), f"schema.json is not package data: {data}"


def test_rich_analysis_validates(tmp_path: Path) -> None:
    repo = rich(tmp_path)
    data = repo.analyze("--oracle-map", "oracle_map.toml")
    assert data["problems"], "the rich patch is meant to raise findings"
    check(data)


def test_incomplete_analysis_validates(tmp_path: Path) -> None:
    repo = rich(tmp_path)
    result = repo.run("--json", "--budget", "0.000001")
    assert result.code == 1
    assert result.data["complete"] is False
    check(result.data)


def test_unchanged_analysis_validates(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"src/a.py": "X = 1\n"})
    check(repo.analyze())


def test_schema_rejects_a_wrong_document() -> None:
    # the validator and the schema are not vacuous
    schema = load_schema()
    with pytest.raises(Invalid):
        validate({"format": "freezedebt-analysis/1"}, schema, schema)
    with pytest.raises(Invalid):
        validate(
            {
                "format": "freezedebt-analysis/1",
                "class": "huge",
                "complete": True,
                "files": [],
                "symbols": [],
                "cone": [],
                "fixtures": {"lock": None, "missing": [], "mutated": [], "unregistered": []},
                "oracle": {"map": None, "co_modified": [], "unlabeled": []},
                "problems": [],
            },
            schema,
            schema,
        )


# -- the facts cache ---------------------------------------------------------------------------


def without_timing(data: Json) -> Json:
    data = dict(data)
    data.pop("stats", None)
    data.pop("_exit", None)
    return data


def test_second_run_parses_nothing_and_answers_the_same(tmp_path: Path) -> None:
    repo = rich(tmp_path)
    first = repo.analyze("--oracle-map", "oracle_map.toml", cache=True)
    assert first["stats"]["files_parsed"] > 0
    second = repo.analyze("--oracle-map", "oracle_map.toml", cache=True)
    assert second["stats"]["files_parsed"] == 0
    assert without_timing(second) == without_timing(first)


def test_facts_serve_an_analysis_of_other_inputs(tmp_path: Path) -> None:
    # another day is another answer (freezes expire), from the same cached facts
    repo = rich(tmp_path)
    first = repo.analyze("--oracle-map", "oracle_map.toml", cache=True)
    later = repo.analyze("--oracle-map", "oracle_map.toml", "--today", "2027-01-05", cache=True)
    assert later["stats"]["files_parsed"] == 0
    assert "result_cached" not in later["stats"]

    def caller_map(data: Json) -> list[tuple[str, list[str], list[str]]]:
        return [(s["name"], s["callers"], s["tests"]) for s in data["symbols"]]

    assert caller_map(later) == caller_map(first)


def test_the_same_inputs_read_the_answer_back(tmp_path: Path) -> None:
    repo = rich(tmp_path)
    first = repo.analyze("--oracle-map", "oracle_map.toml", cache=True)
    again = repo.analyze("--oracle-map", "oracle_map.toml", cache=True)
    assert again["stats"]["result_cached"] == 1
    assert without_timing(again) == without_timing(first)
    # an untracked fixture file is an input git does not hold: a new answer
    (repo.root / "tests" / "fixtures").mkdir(parents=True, exist_ok=True)
    (repo.root / "tests" / "fixtures" / "stray.json").write_text("{}\n")
    third = repo.analyze("--oracle-map", "oracle_map.toml", cache=True)
    assert "result_cached" not in third["stats"]
    assert "tests/fixtures/stray.json" in third["fixtures"]["untracked"]


def test_cache_follows_the_content(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"src/app/__init__.py": "", "src/app/m.py": "def f():\n    return 1\n"})
    repo.patch({"src/app/m.py": "def f():\n    return 2\n"})
    assert [s["name"] for s in repo.analyze(cache=True)["symbols"]] == ["f"]
    repo.patch({"src/app/m.py": "def f():\n    return 2\n\n\ndef g():\n    return 3\n"})
    again = repo.analyze(cache=True)
    assert sorted(s["name"] for s in again["symbols"]) == ["f", "g"]
    assert again["stats"]["files_parsed"] >= 1


def test_no_cache_run_parses_again(tmp_path: Path) -> None:
    repo = rich(tmp_path)
    repo.analyze(cache=True)
    assert repo.analyze(cache=False)["stats"]["files_parsed"] > 0


def test_corrupt_cache_is_not_fatal(tmp_path: Path) -> None:
    repo = rich(tmp_path)
    first = repo.analyze(cache=True)
    git_dir = Path(repo.git("rev-parse", "--absolute-git-dir").strip())
    written = [
        p for p in git_dir.rglob("*") if p.is_file() and "freezedebt" in str(p.relative_to(git_dir))
    ]
    assert written, "the cache lives in the git directory"
    for path in written:
        path.write_bytes(b"\x00garbage")
    again = repo.analyze(cache=True)
    assert without_timing(again) == without_timing(first)


def test_facts_extracted_in_worker_processes_give_the_same_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a large patch shares its files among worker processes; the answer must not change
    from freezedebt_ci.analysis import reading

    files = {"src/app/__init__.py": "", "src/app/util.py": "def helper(x):\n    return x\n"}
    for i in range(12):
        files[f"src/app/m{i}.py"] = (
            f"from app.util import helper\n\n\ndef f{i}():\n    return helper({i})\n"
        )
        files[f"tests/test_m{i}.py"] = (
            f"from app.m{i} import f{i}\n\n\ndef test_f{i}():\n    assert f{i}()\n"
        )
    repo = Repo(tmp_path / "repo")
    repo.base(files)
    repo.patch({"src/app/util.py": "def helper(x):\n    return x + 1\n"})
    alone = repo.analyze("--no-cache")
    monkeypatch.setattr(reading, "PARALLEL_FROM", 2)
    monkeypatch.setattr(reading.os, "cpu_count", lambda: 2)
    pools: list[int] = []

    class Counted(reading.ProcessPoolExecutor):
        def __init__(self, workers: int) -> None:
            pools.append(workers)
            super().__init__(workers)

    monkeypatch.setattr(reading, "ProcessPoolExecutor", Counted)
    shared = repo.analyze("--no-cache")
    assert pools, "the files were not shared among worker processes"
    for data in (alone, shared):
        data.pop("stats")
    assert shared == alone
    assert len(symbol(alone, "app.util", "helper")["callers"]) == 12


def test_an_answer_is_found_again_by_another_process(tmp_path: Path) -> None:
    # the key must not depend on the process (set and hash orders do)
    import subprocess
    import sys

    repo = rich(tmp_path)
    command = [sys.executable, "-m", "freezedebt_ci.cli", "analyze", "--repo", str(repo.root)]
    command += ["--base", "base", "--today", "2026-12-01", "--json"]
    answers = []
    for seed in ("1", "2"):
        done = subprocess.run(
            command,
            capture_output=True,
            check=False,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert done.returncode in (0, 1), done.stderr
        answers.append(json.loads(done.stdout))
    assert "result_cached" not in answers[0]["stats"]
    assert answers[1]["stats"]["result_cached"] == 1


@pytest.mark.parametrize(
    ("names", "relative"),
    [
        (["helper"], False),
        (["help", "helper_2"], False),
        (["x1", "_"], False),
        (["b64encode", "join"], True),
        (["caf\u00e9"], False),  # not of word characters alone: searched in the text
        (["my-fixture"], False),
        ([], True),
        ([], False),
    ],
)
def test_a_files_words_find_what_its_text_finds(names: list[str], relative: bool) -> None:
    # a warm run searches the cached words of a file instead of its text: the same answers
    from freezedebt_ci.analysis.index import words
    from freezedebt_ci.analysis.reading import words_of

    texts = [
        b"",
        b"def helper(x):\n    return x\n",
        b"helpers = 1\nhelper_2 = 2\n# help!\n",
        b"from .util import helper\n",
        b"from  .util import x\nfrom..y import z\n",
        b"x = 'caf\xc3\xa9' + b64encode(data) + os.path.join(a)\n",
        b"_ = x1; x10 = 2; y_x1 = 3\n",
        b"@pytest.fixture(name='my-fixture')\ndef f(): pass\n",
        b"from a import *\n\xff\xfe not utf-8 \x00 helper\x01join\n",
        b"\xc3\xa9helper\xc3\xa9 joined rejoin\n",
    ]
    needle = words(names, relative=relative)
    for text in texts:
        if needle.plain:
            assert needle.search_words(words_of(text)) == needle.search(text), text
    assert needle.plain == all(n.isascii() and n.replace("_", "a").isalnum() for n in names)


_PAIR_BASE = (
    b"# -*- coding: utf-8 -*-\n"
    b'"""Module doc."""\n'
    b"import os\n\n\n"
    b"def helper(x):\n    '''Doc.'''\n    return x\n\n\n"
    b"class Box:\n    size = 1\n\n    def open(self, how):\n        return helper(how)\n\n"
    b"    @property\n    def v(self):\n        return 1\n\n    @v.setter\n"
    b"    def v(self, value):\n        pass\n\n\n"
    b"def other():\n    return os.sep\n"
)


@pytest.mark.parametrize(
    "head",
    [
        _PAIR_BASE,
        _PAIR_BASE.replace(b"return x\n", b"return x + 1\n"),
        _PAIR_BASE.replace(b"'''Doc.'''", b"'''Other doc.'''"),
        _PAIR_BASE.replace(b"    return x\n", b"    return (x)  # same tree\n"),
        _PAIR_BASE.replace(b"size = 1", b"size = 2"),
        _PAIR_BASE.replace(b"    pass\n", b"    return None\n"),
        _PAIR_BASE.replace(b"def other():", b"def other(y=1):"),
        _PAIR_BASE.replace(b"coding: utf-8", b"coding: latin-1"),
        _PAIR_BASE.replace(b"\n", b"\r\n"),
        b"from __future__ import annotations\n" + _PAIR_BASE,
        _PAIR_BASE + b"\n\ndef helper(x):\n    return x\n",
        _PAIR_BASE.replace(b"def other():\n    return os.sep\n", b""),
        _PAIR_BASE + b"def broken(:\n",
    ],
)
def test_both_sides_compared_by_text_where_unchanged_class_as_trees_do(head: bytes) -> None:
    # a definition whose text is the same on both sides is digested by its text, not its tree
    from freezedebt_ci.analysis.compare import compare
    from freezedebt_ci.analysis.facts import extract, extract_pair
    from freezedebt_ci.analysis.reading import _plain

    def outcome(base: Any, new: Any) -> Any:
        fc = compare(base, new, module="app.box")
        return (
            fc.klass,
            fc.reasons,
            fc.docstring_only,
            fc.all_changed,
            fc.reexports_removed,
            [
                (c.qualname, c.change, c.signature_changed, c.types_only, c.shape_changed)
                for c in fc.symbols
            ],
        )

    paired = extract_pair(_PAIR_BASE, head)
    assert outcome(*paired) == outcome(extract(_PAIR_BASE), extract(head))
    for side, source in zip(paired, (_PAIR_BASE, head), strict=True):
        assert _plain(side) == extract(source, with_digests=False)
