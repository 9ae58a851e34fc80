"""``freezedebt-ci analyze``: what a patch changed, who calls it, which tests reach it, and
whether anything the patch did not write itself still judges it (SPEC 4.5 and 5.7).

Everything is read from git's object store and ``ast``; the project's code is never imported
or run. Each finding says how strong its evidence is: resolved through an import, matched by a
name defined once, matched by an attribute name only, or seen executing (coverage)."""

from __future__ import annotations

import datetime as dt
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import InputError
from ..ledger import Freeze, parse_ledger
from ..paths import matches_any
from ..policy import BLOCK, Policy
from .cache import FactsCache
from .compare import (
    ADDED,
    COSMETIC,
    CROSS,
    LOCAL,
    REMOVED,
    FileChange,
    SymbolChange,
    compare,
    highest,
    is_public,
)
from .config import Settings, settings_from_pyproject
from .facts import FACTS_VERSION, PYTHON, Facts, Symbol, extract
from .gitread import MODE_LINK, Entry, Git
from .governance import (
    check_lock,
    parse_lock,
    parse_oracle_map,
    score_oracle_map,
    sha256,
)
from .reach import read_contexts

FORMAT = "freezedebt-analysis/1"
PRODUCTION, TEST, FIXTURE, OTHER = "production", "test", "fixture", "other"
#: Evidence of a caller or a test, strongest first.
IMPORT, SELF, UNIQUE, NAME, COVERAGE = "import", "self", "unique-name", "name", "coverage"
CONE_CAP = 200
CONE_DEPTH = 4
LIST_CAP = 200
ANALYSIS_CODES = (
    "untested-caller",
    "contract-change",
    "fixture-lock",
    "co-modified",
    "unlabeled-path",
    "frozen-symbol",
    "candidate-only",
)


class OutOfTime(Exception):
    """The budget ran out: the analysis stops and says it is incomplete."""


@dataclass(slots=True)
class Options:
    repo: Path
    base: str
    head: str = "HEAD"
    src: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    fixtures: tuple[str, ...] = ()
    fixture_lock: str | None = None
    oracle_map: str | None = None
    ledger: str | None = None
    today: dt.date = field(default_factory=dt.date.today)
    coverage: Path | None = None
    budget: float = 600.0
    cache: bool = True
    policy: Policy = field(default_factory=Policy)


def key(module: str, qualname: str) -> str:
    return f"{module}:{qualname}"


def _is_test_file(path: str, tests: tuple[str, ...]) -> bool:
    if not path.endswith(".py"):
        return False
    name = PurePosixPath(path).name
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    return any(root and (path + "/").startswith(root + "/") for root in tests)


class Layout:
    """Which files are production code, tests, fixtures; and each production file's module."""

    def __init__(self, settings: Settings, paths: Iterable[str]) -> None:
        every = list(paths)
        self.settings = settings
        src = settings.src
        if not src:
            src = ("src",) if any(p.startswith("src/") for p in every) else ("",)
        self.src = src

    def kind(self, path: str) -> str:
        if matches_any(self.settings.fixtures, path):
            return FIXTURE
        if _is_test_file(path, self.settings.tests):
            return TEST
        if path.endswith(".py") and self.root_of(path) is not None:
            return PRODUCTION
        return OTHER

    def root_of(self, path: str) -> str | None:
        found = [r for r in self.src if r == "" or path.startswith(r + "/")]
        return max(found, key=len) if found else None

    def module(self, path: str) -> str:
        root = self.root_of(path) or ""
        rel = path[len(root) + 1 :] if root else path
        parts = rel[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)


@dataclass(slots=True)
class Module:
    name: str
    path: str
    oid: str
    package: bool
    facts: Facts | None = None
    #: a module the patch deleted or moved away: its old import path still resolves, so that
    #: code still importing it shows as its caller, but it is never read as a caller itself
    ghost: bool = False


class Clock:
    def __init__(self, budget: float) -> None:
        self.start = time.monotonic()
        self.budget = budget

    def check(self) -> None:
        if time.monotonic() - self.start > self.budget:
            raise OutOfTime

    def elapsed(self) -> float:
        return time.monotonic() - self.start


class Reader:
    """Blobs and their facts, read once each, through the cache."""

    def __init__(self, git: Git, cache: FactsCache, clock: Clock) -> None:
        self.git = git
        self.cache = cache
        self.clock = clock
        self.bytes: dict[str, bytes] = {}
        self.facts: dict[str, Facts] = {}
        self.parsed = 0
        self.parse_errors: dict[str, str] = {}

    def load(self, oids: Iterable[str]) -> None:
        wanted = [o for o in dict.fromkeys(oids) if o not in self.bytes]
        self.bytes.update(self.git.blobs(wanted))

    def facts_of(self, oid: str, *, with_digests: bool = False) -> Facts:
        facts = self.facts.get(oid)
        if facts is not None and (not with_digests or facts.digest or facts.error):
            return facts
        cached = self.cache.get(oid, with_digests=with_digests)
        if cached is None:
            self.clock.check()
            if oid not in self.bytes:
                self.load([oid])
            cached = extract(self.bytes.get(oid, b""), with_digests=with_digests)
            self.cache.put(oid, cached, with_digests=with_digests)
            self.parsed += 1
        self.facts[oid] = cached
        return cached


class Index:
    """The production modules of the head tree and the references between them, built lazily:
    a file is parsed only once a name it could mention matters (its bytes contain the name)."""

    def __init__(self, modules: dict[str, Module], reader: Reader) -> None:
        self.modules = modules
        self.reader = reader
        self.parsed: set[str] = set()
        self.searched: set[str] = set()
        self.definers: dict[str, set[str]] = defaultdict(set)
        self.aliases: dict[str, set[str]] = defaultdict(set)
        self.unresolved = 0
        # Packages and star imports re-export names they do not spell: always read them.
        live = [m for m in modules.values() if not m.ghost]
        always = [m for m in live if m.package]
        reader.load(m.oid for m in live if m.facts is None)
        always += [m for m in live if b"import *" in reader.bytes.get(m.oid, b"")]
        for module in always:
            self._parse(module)

    def _parse(self, module: Module) -> None:
        if module.name in self.parsed:
            return
        module.facts = self.reader.facts_of(module.oid)
        self.parsed.add(module.name)
        if module.facts.error:
            self.reader.parse_errors.setdefault(module.path, module.facts.error)
        for qualname in module.facts.symbols:
            self.definers[qualname.rsplit(".", 1)[-1]].add(key(module.name, qualname))

    def ensure(self, names: Iterable[str]) -> None:
        """Parse every module that spells one of ``names``, and then every module that spells
        a name one of them is imported as (``from .pricing import price_of as price``)."""
        new = {n for n in names if n and n not in self.searched}
        for _round in range(8):
            if not new:
                return
            self.searched |= new
            needle = _words(new)
            for module in self.modules.values():
                if module.ghost:
                    continue
                if module.name not in self.parsed and needle.search(
                    self.reader.bytes.get(module.oid, b"")
                ):
                    self._parse(module)
            more: set[str] = set()
            for name in self.parsed:
                facts = self.modules[name].facts
                for imp in facts.imports if facts else ():
                    if imp.name in self.searched and imp.local and imp.local != imp.name:
                        self.aliases[imp.name].add(imp.local)
                        more.add(imp.local)
            new = more - self.searched

    def spellings(self, names: Iterable[str]) -> set[str]:
        """The names and every name they are imported as, transitively."""
        out = set(names)
        todo = list(out)
        while todo:
            for alias in self.aliases.get(todo.pop(), ()):
                if alias not in out:
                    out.add(alias)
                    todo.append(alias)
        return out

    # -- resolution --------------------------------------------------------------------------

    def absolute(self, module: Module, level: int, target: str) -> str:
        if level == 0:
            return target
        package = module.name if module.package else module.name.rpartition(".")[0]
        parts = package.split(".") if package else []
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        base = ".".join(parts)
        return f"{base}.{target}".strip(".") if target else base

    def bindings(self, module: Module) -> dict[str, str]:
        facts = module.facts
        out: dict[str, str] = {}
        if facts is None:
            return out
        for imp in facts.imports:
            if not imp.local:
                continue
            target = self.absolute(module, imp.level, imp.module)
            out[imp.local] = f"{target}.{imp.name}".strip(".") if imp.name else target
        return out

    def resolve_dotted(self, dotted: str, depth: int = 0) -> str | None:
        """``pkg.mod.Class.meth`` to ``pkg.mod:Class.meth``, following re-exports; ``None``
        for names outside the project (the standard library, dependencies)."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            module = self.modules.get(name)
            if module is None:
                continue
            rest = parts[i:]
            if not rest:
                return key(name, "")
            facts = module.facts
            if facts is None:
                return key(name, ".".join(rest))
            for j in range(len(rest), 0, -1):
                if ".".join(rest[:j]) in facts.symbols:
                    return key(name, ".".join(rest[:j]))
            binding = self.bindings(module).get(rest[0])
            if binding is not None and depth < 8:
                return self.resolve_dotted(".".join([binding, *rest[1:]]), depth + 1)
            if depth < 8:
                for level, source in facts.star:
                    found = self.resolve_dotted(
                        ".".join([self.absolute(module, level, source), *rest]), depth + 1
                    )
                    if found is not None and found.split(":", 1)[1]:
                        return found
            return key(name, ".".join(rest))
        return None

    def resolve(
        self, module: Module, chain: str, owner: str | None, called: bool
    ) -> tuple[str, str] | None:
        """What a chain used inside ``module`` refers to: ``(target, evidence)``, where the
        target is ``module:qualname`` or ``.name`` for an attribute name alone."""
        facts = module.facts
        assert facts is not None  # noqa: S101 - only parsed modules are resolved
        parts = chain.split(".")
        root = parts[0]
        if root == "":
            return (f".{parts[-1]}", NAME) if called else None
        if root in ("self", "cls") and owner and len(parts) >= 2:
            qualname = f"{owner}.{parts[1]}"
            if len(parts) == 2 and qualname in facts.symbols:
                return key(module.name, qualname), SELF
            return (f".{parts[-1]}", NAME) if called else None
        binding = self.bindings(module).get(root)
        if binding is not None:
            target = self.resolve_dotted(".".join([binding, *parts[1:]]))
            if target is not None:
                return target, IMPORT
            return None  # outside the project
        for j in range(len(parts), 0, -1):
            if ".".join(parts[:j]) in facts.symbols:
                return key(module.name, ".".join(parts[:j])), IMPORT
        if len(parts) > 1 and called:
            return f".{parts[-1]}", NAME
        if called:
            self.unresolved += 1
        return None

    def references(self, wanted: set[str]) -> dict[str, dict[str, str]]:
        """For each wanted target (``module:qualname``), the production symbols that refer to
        it with the strongest evidence found: ``{target: {caller: evidence}}``."""
        by_name: dict[str, set[str]] = defaultdict(set)
        for w in wanted:
            parts = w.split(":", 1)[1].split(".")
            by_name[parts[-1]].add(w)
            if parts[-1] == "__init__" and len(parts) > 1:
                by_name[parts[-2]].add(w)  # a call of the class runs its __init__
        self.ensure({*by_name, *(w.split(":", 1)[0].rsplit(".", 1)[-1] for w in wanted)})
        spelled = self.spellings(by_name)
        found: dict[str, dict[str, str]] = defaultdict(dict)
        rank = (IMPORT, SELF, UNIQUE, NAME)
        for name in sorted(self.parsed):
            module = self.modules[name]
            facts = module.facts
            assert facts is not None  # noqa: S101
            symbols: list[Symbol] = list(facts.symbols.values())
            if facts.module is not None:
                symbols.append(facts.module)
            # local names bound to a wanted name under another name (``import f as g``)
            aliased = {
                local
                for local, target in self.bindings(module).items()
                if target.rsplit(".", 1)[-1] in spelled
            }
            for symbol in symbols:
                caller = key(name, symbol.qualname)
                owner = _owner(symbol, facts)
                for chains, called in ((symbol.calls, True), (symbol.uses, False)):
                    for chain in chains:
                        parts = chain.split(".")
                        if parts[0] not in aliased and not any(p in spelled for p in parts):
                            continue
                        hit = self.resolve(module, chain, owner, called)
                        if hit is None:
                            continue
                        target, evidence = hit
                        targets: set[str]
                        if target.startswith("."):
                            targets = by_name.get(target[1:], set())
                            definers = self.definers.get(target[1:], set())
                            evidence = UNIQUE if len(definers) == 1 else NAME
                        else:
                            targets = {t for t in wanted if target == t}
                            # a call of a class reaches its __init__
                            if target + ".__init__" in wanted:
                                targets.add(target + ".__init__")
                        for t in targets:
                            if t == caller:
                                continue
                            before = found[t].get(caller)
                            if before is None or rank.index(evidence) < rank.index(before):
                                found[t][caller] = evidence
        return found

    def importers(self, module_name: str) -> set[str]:
        """Modules that import ``module_name`` (or a name from it)."""
        self.ensure([module_name.rsplit(".", 1)[-1]])
        out: set[str] = set()
        for name in self.parsed:
            module = self.modules[name]
            facts = module.facts
            if facts is None or name == module_name:
                continue
            for imp in facts.imports:
                target = self.absolute(module, imp.level, imp.module)
                full = f"{target}.{imp.name}" if imp.name else target
                if target == module_name or full == module_name:
                    out.add(name)
                    break
        return out


def _words(names: Iterable[str]) -> re.Pattern[bytes]:
    """A search for any of ``names`` as a whole word: a file that does not spell a name cannot
    refer to it (``getattr`` with a computed string aside), so it need not be parsed."""
    alternatives = b"|".join(
        re.escape(n.encode()) for n in sorted(set(names), key=len, reverse=True)
    )
    return re.compile(rb"(?<![\w])(?:" + alternatives + rb")(?![\w])")


def _owner(symbol: Symbol, facts: Facts) -> str | None:
    """The class a method belongs to (for ``self.x``)."""
    if symbol.kind != "method":
        return None
    owner = symbol.qualname.rpartition(".")[0]
    return owner if owner in facts.symbols else None


# -- tests ---------------------------------------------------------------------------------------


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
    files: list[TestFile]

    def imports(self, module: str, qualname: str) -> bool:
        """Whether one of the files imports ``module`` (or the symbol), or patches it by name."""
        dotted_path = f"{module}.{qualname}"
        for tf in self.files:
            if _imports_module(tf, module):
                return True
            for symbol in tf.facts.symbols.values():
                if any(t == dotted_path or t.startswith(module + ".") for t in symbol.targets):
                    return True
        return False


def _strip_params(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


class Tests:
    """The tests of the head tree and what each one names, its fixtures and helpers included."""

    def __init__(self, files: dict[str, Entry], reader: Reader, layout: Layout) -> None:
        self.entries = files
        self.reader = reader
        self.layout = layout
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
            needle = _words(new)
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
        closure = Closure(names, list(files.values()))
        self.closures[nodeid] = closure
        return closure


_SETUPS = frozenset(("setUp", "setup_method", "setUpClass", "setup_class"))


# -- the analysis --------------------------------------------------------------------------------


def _problem(
    code: str, policy: Policy, message: str, items: Iterable[str]
) -> dict[str, Any] | None:
    severity = policy.severity(code)
    if severity == "off":
        return None
    return {"code": code, "severity": severity, "message": message, "items": sorted(set(items))}


def _capped(values: Iterable[str], cap: int = LIST_CAP) -> list[str]:
    return sorted(set(values))[:cap]


@dataclass(slots=True)
class Changed_:
    """A changed symbol, where it lives."""

    path: str
    module: str
    change: SymbolChange


class Analysis:
    """One run of the analysis, step by step; each step reads what the ones before it found."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.policy = options.policy
        self.git = Git(options.repo)
        self.clock = Clock(options.budget)
        self.incomplete_reason: str | None = None
        self.governance: dict[str, dict[str, Any]] = {}
        self.result: dict[str, Any] = {}
        self.changed: dict[str, Changed_] = {}
        self.moved: dict[str, str] = {}
        self.stats: dict[str, float] = {}

    # -- inputs ------------------------------------------------------------------------------

    def _blob(self, entry: Entry | None) -> bytes | None:
        if entry is None or not entry.is_file:
            return None
        return self.git.blobs([entry.oid]).get(entry.oid)

    def _governance_file(self, what: str, path: str) -> bytes | None:
        """A governance file as the base commit holds it (or a file outside the repository,
        given as an absolute path). Records its sha256 and whether the patch changed it."""
        on_disk = Path(path)
        if on_disk.is_absolute():
            try:
                data = on_disk.read_bytes()
            except OSError as exc:
                raise InputError.single(path, "", f"cannot be read ({exc.strerror})") from None
            self.governance[what] = {
                "path": path,
                "source": "file",
                "sha256": sha256(data),
                "changed_by_patch": False,
            }
            return data
        base = self.base_tree.get(path)
        head = self.head_tree.get(path)
        held = self._blob(base)
        self.governance[what] = {
            "path": path,
            "source": "base",
            "sha256": sha256(held) if held is not None else None,
            "changed_by_patch": (base.oid if base else None) != (head.oid if head else None),
        }
        return held

    def _read_inputs(self) -> None:
        options = self.options
        git = self.git
        self.head_sha = git.resolve(options.head)
        self.merge = git.merge_base(git.resolve(options.base), self.head_sha)
        self.base_tree = git.tree(self.merge)
        self.head_tree = git.tree(self.head_sha)
        self.changes = git.diff(self.merge, self.head_sha)

        base_pyproject = self._blob(self.base_tree.get("pyproject.toml"))
        settings = settings_from_pyproject(base_pyproject, source="pyproject.toml (base)")
        self.settings = settings.with_overrides(
            src=options.src,
            tests=options.tests,
            fixtures=options.fixtures,
            fixture_lock=options.fixture_lock,
            oracle_map=options.oracle_map,
            ledger=options.ledger,
        )
        config_changed = False
        head_entry = self.head_tree.get("pyproject.toml")
        base_entry = self.base_tree.get("pyproject.toml")
        if (head_entry and head_entry.oid) != (base_entry and base_entry.oid):
            try:
                config_changed = settings != settings_from_pyproject(self._blob(head_entry))
            except InputError:
                config_changed = True
        self.layout = Layout(self.settings, self.head_tree)
        cache_folder = git.git_dir() / "freezedebt" if options.cache else None
        self.cache = FactsCache(cache_folder)
        self.reader = Reader(git, self.cache, self.clock)
        self.result.update(
            {
                "format": FORMAT,
                "base": self.merge,
                "head": self.head_sha,
                "base_ref": options.base,
                "head_ref": options.head,
                "analyzer": {"facts_version": FACTS_VERSION, "python": PYTHON},
                "settings": {
                    "src": list(self.layout.src),
                    "tests": list(self.settings.tests),
                    "fixtures": list(self.settings.fixtures),
                    "fixture_lock": self.settings.fixture_lock,
                    "oracle_map": self.settings.oracle_map,
                    "ledger": self.settings.ledger,
                    "source": "pyproject.toml of the base" if base_pyproject else "defaults",
                    "changed_by_patch": config_changed,
                },
            }
        )

    # -- 1. the class of each changed file ------------------------------------------------------

    def _classify_files(self) -> None:
        layout, reader = self.layout, self.reader
        skipped: list[dict[str, str]] = []
        wanted = []
        for change in self.changes:
            before = self.base_tree.get(change.old_path or change.path)
            after = self.head_tree.get(change.path)
            for side in (before, after):
                if side is not None and side.is_file and side.path.endswith(".py"):
                    wanted.append(side.oid)
        reader.load(wanted)

        files: list[dict[str, Any]] = []
        changed: list[Changed_] = []
        for change in self.changes:
            self.clock.check()
            old_path = change.old_path or change.path
            old = self.base_tree.get(old_path) if change.status != "A" else None
            new = self.head_tree.get(change.path) if change.status != "D" else None
            kind = layout.kind(change.path)
            if change.old_path and kind == OTHER:
                kind = layout.kind(change.old_path)
            entry: dict[str, Any] = {
                "path": change.path,
                "old_path": change.old_path,
                "status": change.status,
                "kind": kind,
            }
            files.append(entry)
            links = [e for e in (old, new) if e is not None and not e.is_file]
            for link in links:
                what = "a symbolic link" if link.mode == MODE_LINK else "a submodule"
                skipped.append({"path": link.path, "reason": f"{what}: its target is not read"})
            if links:
                entry["class"] = CROSS
                entry["reasons"] = ["a symbolic link or submodule: what it points to is not read"]
                continue
            if not (change.path.endswith(".py") or old_path.endswith(".py")):
                entry["class"] = COSMETIC if _is_doc(change.path) else LOCAL
                entry["reasons"] = ["not Python: its content is not compared"]
                continue
            base_facts = reader.facts_of(old.oid, with_digests=True) if old else None
            head_facts = reader.facts_of(new.oid, with_digests=True) if new else None
            for where, facts in (
                (f"{old_path} (base)", base_facts),
                (f"{change.path} (head)", head_facts),
            ):
                if facts is not None and facts.error:
                    reader.parse_errors[where] = facts.error
            production = kind == PRODUCTION
            module = layout.module(change.path) if production else ""
            old_module = layout.module(old_path) if production else ""
            if change.old_path and module != old_module:
                # a moved module: every symbol leaves its old import path and arrives at a new one
                gone = compare(base_facts, None, module=old_module)
                came = compare(None, head_facts, module=module)
                fc = FileChange(
                    highest([gone.klass, came.klass]),
                    [f"module moved from {old_module} to {module}", *gone.reasons],
                    came.symbols,
                )
                changed.extend(Changed_(old_path, old_module, sc) for sc in gone.symbols)
            else:
                conftest = PurePosixPath(change.path).name == "conftest.py"
                fc = compare(base_facts, head_facts, module=module, conftest=conftest)
            entry["class"] = fc.klass
            entry["reasons"] = fc.reasons
            if fc.docstring_only:
                entry["docstring_only"] = True
            if fc.all_changed:
                entry["all_changed"] = True
            if production:
                changed.extend(Changed_(change.path, module, sc) for sc in fc.symbols)
        self.result["class"] = highest([f["class"] for f in files])
        self.result["files"] = files
        self.result["skipped"] = skipped
        self.files = files
        self.changed = {key(c.module, c.change.qualname): c for c in changed}
        # a definition that left one place and arrived unchanged at another moved
        removed = {
            c.change.base.digest: k
            for k, c in self.changed.items()
            if c.change.change == REMOVED and c.change.base is not None
        }
        for k, c in self.changed.items():
            head = c.change.head
            if c.change.change == ADDED and head is not None and head.digest in removed:
                self.moved[k] = removed[head.digest]

    # -- 2. callers, and 3. the tests that name each symbol ---------------------------------

    def _index(self) -> None:
        modules: dict[str, Module] = {}
        for path, entry in self.head_tree.items():
            if entry.is_file and self.layout.kind(path) == PRODUCTION:
                name = self.layout.module(path)
                if name and name not in modules:
                    modules[name] = Module(name, path, entry.oid, path.endswith("__init__.py"))
        for change in self.changes:
            old_path = change.old_path or change.path
            gone = self.base_tree.get(old_path)
            if change.status in ("D", "R") and gone and self.layout.kind(old_path) == PRODUCTION:
                name = self.layout.module(old_path)
                if name and name not in modules:
                    package = old_path.endswith("__init__.py")
                    modules[name] = Module(name, old_path, gone.oid, package, ghost=True)
        self.modules = modules
        self.index = Index(modules, self.reader)
        self.refs = self.index.references(set(self.changed))
        callers = {c for found in self.refs.values() for c in found}

        test_entries = {
            p: e
            for p, e in self.head_tree.items()
            if e.is_file and p.endswith(".py") and self.layout.kind(p) in (TEST, FIXTURE)
        }
        self.tests = Tests(test_entries, self.reader, self.layout)
        interest = set(self.changed) | callers
        lasts = {k.split(":", 1)[1].split(".")[-1] for k in interest}
        self.tests.ensure(self.index.spellings(lasts))
        self.tests.ensure(k.split(":", 1)[1].split(".")[0] for k in interest)
        self.every_test = self.tests.tests()
        self.reach: _Reach | None = None
        self.result["reach"] = "off"
        if self.options.coverage is not None:
            lines = read_contexts(self.options.coverage, set(self.head_tree))
            self.reach = _Reach(lines) if lines is not None else None
            self.result["reach"] = "coverage" if lines is not None else "unavailable"
        self._tested: dict[str, dict[str, str]] = {}
        self._by_name: dict[str, set[str]] | None = None

    def _tests_by_name(self) -> dict[str, set[str]]:
        """Every name a test reaches, to the tests that reach it (built once)."""
        if self._by_name is None:
            self._by_name = defaultdict(set)
            for nodeid, (tf, symbol, klass) in self.every_test.items():
                for name in self.tests.closure(nodeid, tf, symbol, klass).names:
                    self._by_name[name].add(nodeid)
        return self._by_name

    def tests_of(self, target: str) -> dict[str, str]:
        """The tests that name ``module:qualname``, with their evidence. A test counts when it
        (with its fixtures and helpers) names the symbol and imports its top package; a method
        needs its class named too, and a name that several definitions share needs the
        symbol's module imported (``import``), else a name defined once is enough
        (``unique-name``)."""
        if target in self._tested:
            return self._tested[target]
        module, _, qualname = target.partition(":")
        found: dict[str, str] = {}
        parts = qualname.split(".")
        last = parts[-1]
        owner = parts[-2] if len(parts) > 1 else None
        top = module.split(".")[0]
        unique = len(self.index.definers.get(last, ())) <= 1
        spelled = self.index.spellings([last])  # re-exported under other names too
        by_name = self._tests_by_name()
        if qualname == "<module>":
            candidates = set(self.every_test)
        else:
            candidates = set().union(*(by_name.get(n, ()) for n in spelled))
        for nodeid in sorted(candidates):
            tf, symbol, klass = self.every_test[nodeid]
            closure = self.tests.closure(nodeid, tf, symbol, klass)
            if qualname == "<module>":
                if closure.imports(module, ""):
                    found[nodeid] = IMPORT
                continue
            if owner and owner not in closure.names and not unique:
                continue
            if not any(top in f.tops or f.relative for f in closure.files):
                continue
            imported = closure.imports(module, qualname)
            if not unique and not imported:
                continue  # another definition of that name is the likelier one
            found[nodeid] = IMPORT if imported else UNIQUE
        if self.reach is not None:
            for nodeid in self.reach.tests_of(self.modules.get(module), qualname):
                found.setdefault(nodeid, COVERAGE)
        self._tested[target] = found
        return found

    # -- 4. each changed symbol, judged ---------------------------------------------------------

    def _judge_symbols(self) -> None:
        layout, settings, today = self.layout, self.settings, self.options.today
        ledger = self._governance_file("ledger", settings.ledger)
        freezes = parse_ledger(ledger, source=f"{settings.ledger} (base)") if ledger else []
        active = [f for f in freezes if f.is_active(today)]
        frozen_tests: dict[str, list[str]] = defaultdict(list)
        for freeze in active:
            if freeze.test:
                frozen_tests[_strip_params(freeze.test)].append(freeze.id)
        self.candidate_files = sorted(
            c.path
            for c in self.changes
            if c.status != "D" and _is_test_file(c.path, settings.tests)
        )
        candidates = set(self.candidate_files)

        symbols: list[dict[str, Any]] = []
        self.untested: set[str] = set()
        self.frozen: list[str] = []
        self.candidate_only: list[str] = []
        self.contract: list[str] = []
        for target, c in sorted(self.changed.items()):
            self.clock.check()
            sc = c.change
            callers = self.refs.get(target, {})
            strong = {k: e for k, e in callers.items() if e != NAME}
            weak = sorted(k for k, e in callers.items() if e == NAME)
            tests = self.tests_of(target)
            untested = sorted(k for k in strong if not self.tests_of(k))
            weak_untested = [k for k in weak if not self.tests_of(k)]
            frozen_by = {f.id for f in active if _blocks(f, c.module, sc.qualname)}
            only_frozen = bool(tests) and all(t in frozen_tests for t in tests)
            if only_frozen:
                frozen_by.update(i for t in tests for i in frozen_tests[t])
            candidate_only = bool(tests) and all(t.split("::", 1)[0] in candidates for t in tests)
            item: dict[str, Any] = {
                "path": c.path,
                "module": c.module,
                "name": sc.qualname,
                "kind": sc.kind,
                "change": sc.change,
                "public": sc.public,
                "signature_changed": sc.signature_changed,
                "types_only": sc.types_only,
                "shape_changed": sc.shape_changed,
                "callers": _capped(strong),
                "callers_count": len(strong),
                "name_callers": weak[:LIST_CAP],
                "tests": _capped(tests),
                "tests_count": len(tests),
                "untested_callers": untested[:LIST_CAP],
                "untested_name_callers": weak_untested[:LIST_CAP],
                "evidence": {
                    "callers": dict(sorted(strong.items())[:LIST_CAP]),
                    "tests": dict(sorted(tests.items())[:LIST_CAP]),
                },
                "frozen_by": sorted(frozen_by),
                "only_frozen_tests": only_frozen,
                "candidate_only": candidate_only,
            }
            if target in self.moved:
                item["moved_from"] = self.moved[target]
            symbols.append(item)
            self.untested.update(untested)
            if frozen_by:
                self.frozen.append(target)
            if candidate_only:
                self.candidate_only.append(target)
            if sc.contract and target not in self.moved.values():
                self.contract.append(target)
        self.result["symbols"] = symbols
        self.result["candidates"] = self.candidate_files
        self.all_changed_modules = sorted(
            layout.module(f["path"])
            for f in self.files
            if f.get("all_changed") and f["kind"] == PRODUCTION
        )

    # -- 5. the impact cone of contract changes ------------------------------------------------

    def _cone(self) -> None:
        """Everything that may observe a contract change: the callers of the changed names,
        their callers in turn (a few levels), and the public definitions of every module that
        imports a changed module. Only public entries are listed."""
        cone: set[str] = set()
        roots = set(self.contract)
        if roots or self.all_changed_modules:
            seen, frontier = set(roots), set(roots)
            for _level in range(CONE_DEPTH):
                self.clock.check()
                reached = self.index.references(frontier)
                callers = {k for found in reached.values() for k, e in found.items() if e != NAME}
                frontier = {k for k in callers - seen if not k.endswith(":<module>")}
                seen |= callers
                if not frontier:
                    break
            cone |= seen - roots
            for name in {k.split(":", 1)[0] for k in roots} | set(self.all_changed_modules):
                for importer in self.index.importers(name):
                    facts = self.modules[importer].facts
                    if facts is not None:
                        cone.update(key(importer, q) for q in facts.symbols)
        public = sorted(
            c for c in cone if not c.endswith(":<module>") and is_public(*c.split(":", 1))
        )
        self.cone_count = len(public)
        self.result["cone"] = public[:CONE_CAP]
        self.result["cone_count"] = len(public)

    # -- 6. fixture lock and oracle map ----------------------------------------------------------

    def _fixtures(self) -> None:
        settings, reader = self.settings, self.reader
        data = self._governance_file("fixture_lock", settings.fixture_lock)
        lock = (
            parse_lock(data, source=f"{settings.fixture_lock} (base)") if data is not None else None
        )

        def fixture_files(tree: Mapping[str, Entry]) -> dict[str, Entry]:
            return {
                p: e
                for p, e in tree.items()
                if e.is_file and (matches_any(settings.fixtures, p) or (lock and p in lock))
            }

        head_files = fixture_files(self.head_tree)
        base_files = fixture_files(self.base_tree)
        reader.load(e.oid for e in (*head_files.values(), *base_files.values()))
        head = {p: sha256(reader.bytes.get(e.oid, b"")) for p, e in head_files.items()}
        base = {p: sha256(reader.bytes.get(e.oid, b"")) for p, e in base_files.items()}
        untracked: list[str] = []
        top = self.git.toplevel()
        if top is not None and self.head_sha == self.git.resolve("HEAD"):
            # a fixture file left untracked in the checkout is still read by the tests
            for path in self.git.untracked():
                if matches_any(settings.fixtures, path):
                    try:
                        head[path] = sha256((top / path).read_bytes())
                    except OSError:
                        continue
                    untracked.append(path)
        check = check_lock(
            lock,
            lock_path=settings.fixture_lock,
            lock_sha256=self.governance["fixture_lock"]["sha256"],
            head=head,
            base=base,
            renames={c.old_path: c.path for c in self.changes if c.status == "R" and c.old_path},
            lock_changed=self.governance["fixture_lock"]["changed_by_patch"],
        )
        self.lock_check = check
        self.result["fixtures"] = {**check.as_dict(), "untracked": untracked}

        data = self._governance_file("oracle_map", settings.oracle_map)
        features = (
            parse_oracle_map(data, source=f"{settings.oracle_map} (base)", path=settings.oracle_map)
            if data is not None
            else None
        )
        self.oracle = score_oracle_map(
            features,
            map_path=settings.oracle_map,
            map_sha256=self.governance["oracle_map"]["sha256"],
            changed={p for c in self.changes for p in (c.path, c.old_path) if p},
            tree=self.head_tree,
            map_changed=self.governance["oracle_map"]["changed_by_patch"],
        )
        self.result["oracle"] = self.oracle.as_dict()

    # -- 7. problems ------------------------------------------------------------------------------

    def _problems(self) -> list[dict[str, Any]]:
        policy = self.policy
        out: list[dict[str, Any] | None] = []
        if self.untested:
            out.append(
                _problem(
                    "untested-caller",
                    policy,
                    f"{_count(len(self.untested), 'production caller')} of changed symbols "
                    f"{'is' if len(self.untested) == 1 else 'are'} named by no test",
                    self.untested,
                )
            )
        if self.contract or self.all_changed_modules:
            changed = sorted(self.contract) or self.all_changed_modules
            shown = ", ".join(changed[:5]) + (" …" if len(changed) > 5 else "")
            out.append(
                _problem(
                    "contract-change",
                    policy,
                    f"public interface changed: {shown}; impact cone: "
                    f"{_count(self.cone_count, 'public entry', 'public entries')}",
                    [*self.contract, *self.all_changed_modules],
                )
            )
        check = self.lock_check
        items = check.findings()
        parts = []
        if check.missing:
            parts.append(f"{_count(len(check.missing), 'locked fixture')} missing")
        if check.mutated:
            parts.append(f"{_count(len(check.mutated), 'locked fixture')} mutated")
        if check.unregistered:
            parts.append(f"{_count(len(check.unregistered), 'fixture file')} not in the lock")
        if check.changed_by_patch:
            parts.append("the patch changes the lock itself: rotate it in its own reviewed commit")
            items.append(self.settings.fixture_lock)
        if items:
            out.append(_problem("fixture-lock", policy, "; ".join(parts), items))
        oracle = self.oracle
        items = [p for row in oracle.co_modified for p in (*row["prod"], *row["oracle"])]
        parts = []
        if oracle.co_modified:
            names = ", ".join(row["feature"] for row in oracle.co_modified)
            parts.append(f"production code changed together with its own oracle ({names})")
        if oracle.changed_by_patch:
            parts.append("the patch changes the oracle map that judges it")
            items.append(self.settings.oracle_map)
        if items:
            out.append(_problem("co-modified", policy, "; ".join(parts), items))
        if oracle.unlabeled:
            out.append(
                _problem(
                    "unlabeled-path",
                    policy,
                    f"{_count(len(oracle.unlabeled), 'changed path')} belong to no feature "
                    "of the oracle map",
                    oracle.unlabeled,
                )
            )
        if self.frozen:
            out.append(
                _problem(
                    "frozen-symbol",
                    policy,
                    "changed symbols are blocked by an active freeze, or reached only by "
                    "frozen tests",
                    self.frozen,
                )
            )
        if self.candidate_only:
            out.append(
                _problem(
                    "candidate-only",
                    policy,
                    "changed symbols are named only by tests this patch added or edited",
                    self.candidate_only,
                )
            )
        return sorted((p for p in out if p is not None), key=lambda p: p["code"])

    # -- the whole --------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        self._read_inputs()
        result = self.result
        steps = (self._classify_files, self._index, self._judge_symbols, self._cone, self._fixtures)
        try:
            for step in steps:
                step()
            result["problems"] = self._problems()
        except OutOfTime:
            self.incomplete_reason = (
                f"the budget of {self.options.budget:g} s ran out: what was not reached by "
                "then is not in this analysis"
            )
            result["problems"] = []
        self.cache.save()
        complete = self.incomplete_reason is None
        result["complete"] = complete
        result["incomplete_reason"] = self.incomplete_reason
        result["governance"] = self.governance
        result.setdefault("class", CROSS)
        for name in ("files", "symbols", "cone", "skipped", "candidates"):
            result.setdefault(name, [])
        result.setdefault("cone_count", 0)
        result.setdefault("reach", "off")
        result.setdefault(
            "fixtures", {"lock": None, "missing": [], "mutated": [], "unregistered": []}
        )
        result.setdefault("oracle", {"map": None, "co_modified": [], "unlabeled": []})
        result["parse_errors"] = [
            {"path": p, "error": e} for p, e in sorted(self.reader.parse_errors.items())
        ]
        index = getattr(self, "index", None)
        tests = getattr(self, "tests", None)
        result["stats"] = {
            "seconds": round(self.clock.elapsed(), 3),
            "files_parsed": self.reader.parsed,
            "cache_entries_loaded": self.cache.loaded,
            "production_modules": len(getattr(self, "modules", {})),
            "modules_read": len(index.parsed) if index else 0,
            "test_files_read": len(tests.files) if tests else 0,
            "unresolved_calls": index.unresolved if index else 0,
        }
        blocking = any(p["severity"] == BLOCK for p in result["problems"])
        result["verdict"] = "block" if blocking or not complete else "pass"
        return result


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


_DOC_SUFFIXES = (".md", ".rst", ".txt", ".adoc")


def _is_doc(path: str) -> bool:
    return path.endswith(_DOC_SUFFIXES) or path.startswith("docs/")


def _imports_module(tf: TestFile, module: str) -> bool:
    return any(
        imp.module == module
        or imp.module.startswith(module + ".")
        or f"{imp.module}.{imp.name}" == module
        for imp in tf.facts.imports
    )


def _blocks(freeze: Freeze, module: str, qualname: str) -> bool:
    names = {qualname, key(module, qualname), f"{module}.{qualname}", qualname.rsplit(".", 1)[-1]}
    return any(s in names for s in freeze.blocks_symbols)


class _Reach:
    """Which tests executed which lines, from a coverage data file with per-test contexts."""

    def __init__(self, lines: dict[str, dict[int, set[str]]]) -> None:
        self.lines = lines

    def tests_of(self, module: Module | None, qualname: str) -> set[str]:
        """The tests that executed a line of a definition's body (not its ``def`` line, which
        runs at import time under no test)."""
        if module is None or module.facts is None:
            return set()
        symbol = module.facts.symbols.get(qualname)
        by_line = self.lines.get(module.path)
        if symbol is None or not by_line:
            return set()
        out: set[str] = set()
        for line in range(symbol.body_first, symbol.last + 1):
            out |= by_line.get(line, set())
        return out


def analyze(options: Options) -> dict[str, Any]:
    """The analysis JSON of a patch (``freezedebt-analysis/1``)."""
    return Analysis(options).run()
