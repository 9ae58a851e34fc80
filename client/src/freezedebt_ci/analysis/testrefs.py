"""The tests of the head tree and what each one reaches: the names it, its fixtures and its
helpers mention, and the files those live in."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from .facts import Facts, Symbol
from .gitread import Entry
from .index import Needle, spelled_in, words
from .reading import Reader


def _name(path: str) -> str:
    """The last part of a git tree path (as ``PurePosixPath(path).name``, without pathlib)."""
    return path.rpartition("/")[2]


def _folders(path: str) -> list[str]:
    """The folders a git tree path lies in, nearest first, the root as ``.`` (as
    ``PurePosixPath(path).parent`` and its parents, without pathlib)."""
    out = []
    head = path.rpartition("/")[0]
    while head:
        out.append(head)
        head = head.rpartition("/")[0]
    out.append(".")
    return out


def _test_module(path: str) -> bool:
    name = _name(path)
    return name.startswith("test_") or name.endswith("_test.py")


def is_test_file(path: str, tests: tuple[str, ...]) -> bool:
    if not path.endswith(".py"):
        return False
    name = _name(path)
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
    #: every module the file imports, with their parent packages, and what it patches by
    #: dotted name: ``module in reaches`` says the file can reach a symbol of ``module``
    reaches: frozenset[str] = frozenset()
    support: list[TestFile] | None = None
    #: local name -> the dotted name an absolute import binds it to
    bindings: dict[str, str] = field(default_factory=dict)
    fixtures: dict[str, Symbol] = field(default_factory=dict)
    autouse: list[Symbol] = field(default_factory=list)

    def __post_init__(self) -> None:
        for imp in self.facts.imports:
            if imp.local and not imp.level:
                self.bindings[imp.local] = f"{imp.module}.{imp.name}" if imp.name else imp.module
        for symbol in self.facts.symbols.values():
            if symbol.fixture and symbol.fixture not in self.fixtures:
                self.fixtures[symbol.fixture] = symbol
            if symbol.autouse:
                self.autouse.append(symbol)


@dataclass(slots=True)
class Closure:
    """What a test reaches: the names it and its fixtures and helpers mention, and the files
    those live in."""

    names: set[str]
    files: list[TestFile]
    members: list[tuple[TestFile, Symbol]] = field(default_factory=list)
    # asked of few tests (those that name a target): found when first asked
    _attributes: set[str] | None = None
    _reaches: frozenset[str] | None = None

    @property
    def attributes(self) -> set[str]:
        """The names the members reach as attributes (``Symbol.attributes``)."""
        if self._attributes is None:
            self._attributes = set().union(*(s.attributes() for _, s in self.members))
        return self._attributes

    @property
    def reaches(self) -> frozenset[str]:
        if self._reaches is None:
            every = self.files
            # one file's reaches are shared as they are (frozen), not copied for each test
            self._reaches = (
                every[0].reaches
                if len(every) == 1
                else frozenset().union(*(f.reaches for f in every))
            )
        return self._reaches

    def imports(self, module: str) -> bool:
        """Whether one of the files imports ``module`` (or a name from it), or patches a name
        of it by dotted string."""
        return module in self.reaches


class Tests:
    """The tests of the head tree and what each one names, its fixtures and helpers included."""

    def __init__(self, files: dict[str, Entry], reader: Reader) -> None:
        self.entries = files
        self.reader = reader
        self.files: dict[str, TestFile] = {}
        self.searched: set[str] = set()
        self.closures: dict[str, Closure] = {}
        self._steps: dict[tuple[str, str], _Step] = {}
        self._class_cache: dict[tuple[str, str], list[tuple[TestFile, Symbol]]] = {}
        self._conftest_cache: dict[str, list[TestFile]] = {}
        self._members_cache: dict[str, dict[str, list[Symbol]]] = {}
        self._autouse_cache: dict[str, list[tuple[TestFile, Symbol]]] = {}
        self._helpers_cache: dict[str, dict[str, list[tuple[TestFile, Symbol]]]] = {}
        self._graph: (
            tuple[
                dict[str, tuple[TestFile, Symbol, str | None]],
                dict[_Mark, _Step],
                dict[_Mark, list[_Mark]],
                dict[str, list[_Mark]],
            ]
            | None
        ) = None
        reader.load_words(e.oid for e in files.values())
        for path in files:
            if _name(path) == "conftest.py":
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
        self.files[path] = TestFile(path, facts, tops, relative, aliases, reaches_of(facts))

    def _support(self, tf: TestFile) -> list[TestFile]:
        """Test-support modules a test file imports (``from helpers import build``): files of
        the test tree found beside it, above it, or at the root."""
        if tf.support is not None:
            return tf.support
        tf.support = []
        for candidate in self._support_paths(tf):
            self._parse(candidate)
            tf.support.append(self.files[candidate])
        return tf.support

    def _support_paths(self, tf: TestFile) -> list[str]:
        """The paths :meth:`_support` reads, in its order, each once (``from pkg import a, b``
        finds ``pkg`` for each name)."""
        found: dict[str, None] = {}
        folders = _folders(tf.path)
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
                            found[candidate] = None
        return list(found)

    def submit_support(self, tests: dict[str, tuple[TestFile, Symbol, str | None]]) -> None:
        """Give the workers the support modules of every file with tests: finding the tests
        that name a symbol reads them (one by one, in this process, where workers sit idle)."""
        with_tests = {tf.path: tf for tf, _symbol, _owner in tests.values()}
        paths = {
            p for tf in with_tests.values() for p in self._support_paths(tf) if p not in self.files
        }
        oids = [self.entries[p].oid for p in sorted(paths)]
        self.reader.submit(oids, with_digests=False, count=self.reader.parsed + len(oids))

    def _helpers(self, tf: TestFile) -> dict[str, list[tuple[TestFile, Symbol]]]:
        """The definitions of the test-support modules a file imports, by qualname: one
        lookup a mentioned name, not one per module."""
        found = self._helpers_cache.get(tf.path)
        if found is None:
            found = {}
            for helper_file in self._support(tf):
                for qualname, symbol in helper_file.facts.symbols.items():
                    found.setdefault(qualname, []).append((helper_file, symbol))
            self._helpers_cache[tf.path] = found
        return found

    def ensure(self, names: Iterable[str], gates: Iterable[str]) -> None:
        """Parse every test-tree file that could reach one of ``names``: those that spell one
        and also spell one of ``gates`` (the top packages a test must import to reach them;
        relative imports pass), then, in turn, those that spell a fixture or helper of those
        that reaches them."""
        new = {n for n in names if n and n not in self.searched}
        first = set(new)
        gate: Needle | None = words(gates, relative=True) if gates else None
        for _round in range(8):
            if not new:
                break
            self.searched |= new
            needle = words(new)
            unread = {p: e.oid for p, e in self.entries.items() if p not in self.files}
            spelled = spelled_in(self.reader, needle, list(unread.values()))
            if gate is not None:
                spelled &= spelled_in(self.reader, gate, list(spelled))
            found = [p for p, oid in unread.items() if oid in spelled]
            self.reader.prefetch(self.entries[p].oid for p in found)
            for path in found:
                self._parse(path)
            gate = None  # a file reached through a fixture or helper need not import anything
            more: set[str] = set()
            for tf in list(self.files.values()):
                test_module = _test_module(tf.path)  # once a file, not once a definition
                for qualname, symbol in tf.facts.symbols.items():
                    if symbol.kind == "class":
                        continue
                    if symbol.fixture:
                        # fixtures chain by name (a fixture requesting one that reaches them)
                        if not (symbol.names() | set(symbol.params)) & self.searched:
                            continue
                    elif (
                        "." in qualname
                        or qualname.startswith("test")
                        or test_module
                        or not symbol.names() & first
                    ):
                        # a support module's function or class is imported by other files,
                        # one step from the names themselves; a test module's own helpers,
                        # tests and methods only serve that module
                        continue
                    if symbol.autouse:  # reaches every test below its file's folder
                        folder = _folders(tf.path)[0]
                        for path in self.entries:
                            if folder == "." or path.startswith(folder + "/"):
                                self._parse(path)
                    more.add(symbol.fixture or qualname.rsplit(".", 1)[-1])
            new = more - self.searched
        for cache in (
            self.closures,
            self._steps,
            self._class_cache,
            self._conftest_cache,
            self._members_cache,
            self._autouse_cache,
            self._helpers_cache,
        ):
            cache.clear()
        self._graph = None

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

    def _conftests(self, tf: TestFile) -> list[TestFile]:
        """The conftest files that apply to a test file, nearest first."""
        found = self._conftest_cache.get(tf.path)
        if found is None:
            found = []
            for folder in _folders(tf.path):
                conf = "conftest.py" if folder == "." else f"{folder}/conftest.py"
                other = self.files.get(conf)
                if other is not None and other is not tf:
                    found.append(other)
            self._conftest_cache[tf.path] = found
        return found

    def _fixture(self, tf: TestFile, name: str) -> list[tuple[TestFile, Symbol]]:
        """The fixture ``name`` as seen from a test file: its own, then the nearest conftest."""
        for place in (tf, *self._conftests(tf)):
            symbol = place.fixtures.get(name)
            if symbol is not None:
                return [(place, symbol)]
        return []

    def _autouse(self, tf: TestFile) -> list[tuple[TestFile, Symbol]]:
        found = self._autouse_cache.get(tf.path)
        if found is None:
            found = [(f, s) for f in (tf, *self._conftests(tf)) for s in f.autouse]
            self._autouse_cache[tf.path] = found
        return found

    def _step(self, file: TestFile, sym: Symbol) -> _Step:
        """One definition's own names and what it leads to (fixtures, helpers), once."""
        mark = (file.path, sym.qualname)
        step = self._steps.get(mark)
        if step is not None:
            return step
        mentioned = sym.names()
        aliases = file.aliases
        # set operations in place of a lookup per mentioned name: this runs for every test
        aliased = mentioned & aliases.keys()
        names = mentioned | {aliases[n] for n in aliased} if aliased else mentioned
        deps: list[tuple[TestFile, Symbol]] = []
        for param in sym.params:
            deps.extend(self._fixture(file, param))
        for param in sym.usefixtures:
            deps.extend(self._fixture(file, param))
        own = file.facts.symbols
        hits = mentioned & own.keys()
        if hits:
            deps.extend([(file, own[n]) for n in hits if own[n] is not sym])
        helpers = self._helpers(file)
        if helpers:
            looked_up = (mentioned - aliased) | {aliases[n] for n in aliased}
            for n in looked_up & helpers.keys():
                deps.extend(helpers[n])
        step = _Step(names, tuple(deps))
        self._steps[mark] = step
        return step

    def _class_parts(self, tf: TestFile, owner: str) -> list[tuple[TestFile, Symbol]]:
        """A test method's class, its fixtures and its set-up methods."""
        mark = (tf.path, owner)
        parts = self._class_cache.get(mark)
        if parts is None:
            parts = []
            klass = tf.facts.symbols.get(owner)
            if klass is not None:
                parts.append((tf, klass))
            parts.extend((tf, other) for other in self._class_members(tf).get(owner, ()))
            self._class_cache[mark] = parts
        return parts

    def _class_members(self, tf: TestFile) -> dict[str, list[Symbol]]:
        """The fixtures and set-up methods of each class of a file, in the file's order, by
        every class they are nested in: one pass per file, not one per test class."""
        found = self._members_cache.get(tf.path)
        if found is None:
            found = defaultdict(list)
            for qualname, other in tf.facts.symbols.items():
                owner, _, tail = qualname.rpartition(".")
                if owner and (other.fixture or tail in _SETUPS):
                    parts = owner.split(".")
                    for i in range(1, len(parts) + 1):
                        found[".".join(parts[:i])].append(other)
            self._members_cache[tf.path] = found
        return found

    def reaching(
        self, tests: dict[str, tuple[TestFile, Symbol, str | None]], names: set[str]
    ) -> list[str]:
        """The tests (of :meth:`tests`) whose closure names one of ``names``, found backwards
        from the definitions that name one: every definition the tests reach is visited once,
        not once for each test that reaches it, and most tests name none of them."""
        graph = self._graph
        if graph is None or graph[0] is not tests:
            graph = self._graph = (tests, *self._reach_graph(tests))
        _tests, steps, callers, roots = graph
        found = [mark for mark, step in steps.items() if not step.names.isdisjoint(names)]
        reached = set(found)
        while found:
            for caller in callers.get(found.pop(), ()):
                if caller not in reached:
                    reached.add(caller)
                    found.append(caller)
        return [nodeid for nodeid, starts in roots.items() if not reached.isdisjoint(starts)]

    def _reach_graph(
        self, tests: dict[str, tuple[TestFile, Symbol, str | None]]
    ) -> tuple[dict[_Mark, _Step], dict[_Mark, list[_Mark]], dict[str, list[_Mark]]]:
        """Every definition the tests reach (the union of their closures) with its step, who
        leads to each, and where each test's closure starts."""
        steps: dict[_Mark, _Step] = {}
        callers: dict[_Mark, list[_Mark]] = defaultdict(list)
        roots: dict[str, list[_Mark]] = {}
        for nodeid, (tf, symbol, owner) in tests.items():
            todo: list[tuple[TestFile, Symbol]] = [(tf, symbol), *self._autouse(tf)]
            if owner:
                todo.extend(self._class_parts(tf, owner))
            roots[nodeid] = [(f.path, s.qualname) for f, s in todo]
            while todo:
                file, sym = todo.pop()
                mark = (file.path, sym.qualname)
                if mark in steps:
                    continue
                step = steps[mark] = self._steps.get(mark) or self._step(file, sym)
                for dep in step.deps:
                    dep_mark = (dep[0].path, dep[1].qualname)
                    callers[dep_mark].append(mark)
                    if dep_mark not in steps:
                        todo.append(dep)
        return steps, callers, roots

    def closure(self, nodeid: str, tf: TestFile, symbol: Symbol, owner: str | None) -> Closure:
        """What a test reaches: its own names, its class's, its fixtures' (its file's, then
        each conftest's above it, autouse ones included) and its helpers' (in its file and in
        test-support modules it imports), transitively; an imported alias stands for the
        name it aliases."""
        cached = self.closures.get(nodeid)
        if cached is not None:
            return cached
        names: set[str] = set()
        files: dict[str, TestFile] = {}
        seen: set[tuple[str, str]] = set()
        members: list[tuple[TestFile, Symbol]] = []
        todo: list[tuple[TestFile, Symbol]] = [(tf, symbol), *self._autouse(tf)]
        if owner:
            todo.extend(self._class_parts(tf, owner))
        steps = self._steps
        while todo:
            item = todo.pop()
            file, sym = item
            mark = (file.path, sym.qualname)
            if mark in seen:
                continue
            seen.add(mark)
            members.append(item)
            files[file.path] = file
            step = steps.get(mark) or self._step(file, sym)
            names |= step.names
            todo.extend(step.deps)
        closure = Closure(names, list(files.values()), members)
        self.closures[nodeid] = closure
        return closure


_Mark = tuple[str, str]


@dataclass(frozen=True, slots=True)
class _Step:
    names: frozenset[str]
    deps: tuple[tuple[TestFile, Symbol], ...]


_SETUPS = frozenset(("setUp", "setup_method", "setUpClass", "setup_class"))


def _prefixes(dotted_name: str) -> list[str]:
    """``a.b.c`` → ``a``, ``a.b``, ``a.b.c``."""
    parts = dotted_name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def reaches_of(facts: Facts) -> frozenset[str]:
    out: set[str] = set()
    for imp in facts.imports:
        if imp.module:
            out.update(_prefixes(imp.module))
            if imp.name:
                out.add(f"{imp.module}.{imp.name}")
    for symbol in [*facts.symbols.values(), *([facts.module] if facts.module else [])]:
        for target in symbol.targets:
            out.update(_prefixes(target)[:-1])
    return frozenset(out)
