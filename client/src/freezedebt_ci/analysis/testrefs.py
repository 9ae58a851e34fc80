"""The tests of the head tree and what each one reaches: the names it, its fixtures and its
helpers mention, and the files those live in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from .facts import Facts, Symbol
from .gitread import Entry
from .index import words
from .reading import Reader


def is_test_file(path: str, tests: tuple[str, ...]) -> bool:
    if not path.endswith(".py"):
        return False
    name = PurePosixPath(path).name
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    return any(root and (path + "/").startswith(root + "/") for root in tests)


@dataclass(slots=True)
class TestFile:
    path: str
    facts: Facts
    tops: set[str]
    relative: bool
    aliases: dict[str, str]
    support: list[TestFile] | None = None


@dataclass(slots=True)
class Closure:
    """What a test reaches: the names it and its fixtures and helpers mention, and the files
    those live in."""

    names: set[str]
    attributes: set[str]
    files: list[TestFile]

    def imports(self, module: str, qualname: str) -> bool:
        """Whether one of the files imports ``module`` (or the symbol), or patches it by name."""
        dotted_path = f"{module}.{qualname}"
        for tf in self.files:
            if imports_module(tf, module):
                return True
            for symbol in tf.facts.symbols.values():
                if any(t == dotted_path or t.startswith(module + ".") for t in symbol.targets):
                    return True
        return False


class Tests:
    """The tests of the head tree and what each one names, its fixtures and helpers included."""

    def __init__(self, files: dict[str, Entry], reader: Reader) -> None:
        self.entries = files
        self.reader = reader
        self.files: dict[str, TestFile] = {}
        self.searched: set[str] = set()
        self.closures: dict[str, Closure] = {}
        reader.load(e.oid for e in files.values())
        for path in files:
            if PurePosixPath(path).name == "conftest.py":
                self._parse(path)

    def _parse(self, path: str) -> None:
        if path in self.files:
            return
        facts = self.reader.facts_of(self.entries[path].oid)
        if facts.error:
            self.reader.parse_errors[path] = facts.error
        tops: set[str] = set()
        relative = False
        aliases: dict[str, str] = {}
        for imp in facts.imports:
            if imp.level:
                relative = True
            elif imp.module:
                tops.add(imp.module.split(".")[0])
            if imp.name and imp.local != imp.name:
                aliases[imp.local] = imp.name
        for symbol in [*facts.symbols.values(), *([facts.module] if facts.module else [])]:
            tops.update(t.split(".")[0] for t in symbol.targets)
        self.files[path] = TestFile(path, facts, tops, relative, aliases)

    def _support(self, tf: TestFile) -> list[TestFile]:
        """Test-support modules a test file imports (``from helpers import build``): files of
        the test tree found beside it, above it, or at the root."""
        if tf.support is not None:
            return tf.support
        tf.support = []
        folder = PurePosixPath(tf.path).parent
        folders = [folder, *folder.parents]
        for imp in tf.facts.imports:
            base = folders[imp.level - 1] if 0 < imp.level <= len(folders) else None
            names = [imp.module] if imp.module else []
            if imp.name:
                names.append(f"{imp.module}.{imp.name}".strip("."))
            for dotted_name in names:
                rel = dotted_name.replace(".", "/")
                places = [base] if base is not None else folders
                for place in places:
                    for candidate in (f"{place}/{rel}.py", f"{place}/{rel}/__init__.py"):
                        candidate = candidate.removeprefix("./")
                        if candidate in self.entries and candidate != tf.path:
                            self._parse(candidate)
                            tf.support.append(self.files[candidate])
        return tf.support

    def ensure(self, names: Iterable[str]) -> None:
        """Parse every test-tree file that could reach one of ``names``: those that spell it,
        then, in turn, those that spell a fixture or helper that reaches it."""
        new = {n for n in names if n and n not in self.searched}
        for _round in range(8):
            if not new:
                break
            self.searched |= new
            needle = words(new)
            for path, entry in self.entries.items():
                if path not in self.files and needle.search(self.reader.bytes.get(entry.oid, b"")):
                    self._parse(path)
            more: set[str] = set()
            for tf in list(self.files.values()):
                for qualname, symbol in tf.facts.symbols.items():
                    if symbol.kind == "class" or not symbol.names() & self.searched:
                        continue
                    if symbol.autouse:  # reaches every test below its file's folder
                        folder = str(PurePosixPath(tf.path).parent)
                        for path in self.entries:
                            if folder == "." or path.startswith(folder + "/"):
                                self._parse(path)
                    more.add(symbol.fixture or qualname.rsplit(".", 1)[-1])
            new = more - self.searched
        self.closures.clear()

    def tests(self) -> dict[str, tuple[TestFile, Symbol, str | None]]:
        """Every test function: node id (without parameters) to its file, symbol and class."""
        out: dict[str, tuple[TestFile, Symbol, str | None]] = {}
        for tf in self.files.values():
            if tf.path.endswith("conftest.py"):
                continue
            for qualname, symbol in tf.facts.symbols.items():
                name = qualname.rsplit(".", 1)[-1]
                if symbol.kind == "class" or not name.startswith("test") or symbol.fixture:
                    continue
                owner = qualname.rpartition(".")[0] or None
                out[f"{tf.path}::{qualname.replace('.', '::')}"] = (tf, symbol, owner)
        return out

    def _fixture(self, tf: TestFile, name: str) -> list[tuple[TestFile, Symbol]]:
        """The fixture ``name`` as seen from a test file: its own, then the nearest conftest."""
        for symbol in tf.facts.symbols.values():
            if symbol.fixture == name:
                return [(tf, symbol)]
        folder = PurePosixPath(tf.path).parent
        while True:
            conf = "conftest.py" if str(folder) == "." else f"{folder}/conftest.py"
            other = self.files.get(conf)
            if other is not None:
                for symbol in other.facts.symbols.values():
                    if symbol.fixture == name:
                        return [(other, symbol)]
            if str(folder) == ".":
                return []
            folder = folder.parent

    def _autouse(self, tf: TestFile) -> list[tuple[TestFile, Symbol]]:
        found = [(tf, s) for s in tf.facts.symbols.values() if s.autouse]
        folder = PurePosixPath(tf.path).parent
        while True:
            conf = "conftest.py" if str(folder) == "." else f"{folder}/conftest.py"
            other = self.files.get(conf)
            if other is not None:
                found += [(other, s) for s in other.facts.symbols.values() if s.autouse]
            if str(folder) == ".":
                return found
            folder = folder.parent

    def closure(self, nodeid: str, tf: TestFile, symbol: Symbol, owner: str | None) -> Closure:
        """What a test reaches: its own names, its class's, its fixtures' (its file's, then
        each conftest's above it, autouse ones included) and its helpers' (in its file and in
        test-support modules it imports), transitively; an imported alias stands for the
        name it aliases."""
        cached = self.closures.get(nodeid)
        if cached is not None:
            return cached
        names: set[str] = set()
        attributes: set[str] = set()
        files: dict[str, TestFile] = {}
        seen: set[tuple[str, str]] = set()
        todo: list[tuple[TestFile, Symbol]] = [(tf, symbol), *self._autouse(tf)]
        if owner:
            klass = tf.facts.symbols.get(owner)
            if klass is not None:
                todo.append((tf, klass))
            for qualname, other in tf.facts.symbols.items():
                tail = qualname.rsplit(".", 1)[-1]
                if qualname.startswith(owner + ".") and (other.fixture or tail in _SETUPS):
                    todo.append((tf, other))
        while todo:
            file, sym = todo.pop()
            mark = (file.path, sym.qualname)
            if mark in seen:
                continue
            seen.add(mark)
            files[file.path] = file
            mentioned = sym.names()
            names |= mentioned
            attributes |= sym.attributes()
            names.update(file.aliases[n] for n in mentioned if n in file.aliases)
            for param in (*sym.params, *sym.usefixtures):
                todo.extend(self._fixture(file, param))
            support = self._support(file)
            for name in mentioned:
                helper = file.facts.symbols.get(name)
                if helper is not None and helper is not sym:
                    todo.append((file, helper))
                for helper_file in support:
                    found = helper_file.facts.symbols.get(file.aliases.get(name, name))
                    if found is not None:
                        todo.append((helper_file, found))
        closure = Closure(names, attributes, list(files.values()))
        self.closures[nodeid] = closure
        return closure


_SETUPS = frozenset(("setUp", "setup_method", "setUpClass", "setup_class"))


def imports_module(tf: TestFile, module: str) -> bool:
    return any(
        imp.module == module
        or imp.module.startswith(module + ".")
        or f"{imp.module}.{imp.name}" == module
        for imp in tf.facts.imports
    )
