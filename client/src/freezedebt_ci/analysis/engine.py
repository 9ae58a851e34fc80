"""``freezedebt-ci analyze``: what a patch changed, who calls it, which tests reach it, and
whether anything the patch did not write itself still judges it (SPEC 4.5 and 5.7).

Everything is read from git's object store and ``ast``; the project's code is never imported
or run. Each finding says how strong its evidence is: resolved through an import, matched by a
name defined once, matched by an attribute name only, or seen executing (coverage)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import InputError
from ..ledger import parse_ledger
from ..paths import matches_any
from ..policy import BLOCK, Policy
from .cache import FactsCache, Memo
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
from .facts import FACTS_VERSION, PYTHON, Facts
from .gitread import MODE_LINK, Changed, Entry, Git
from .governance import (
    check_lock,
    parse_lock,
    parse_oracle_map,
    score_oracle_map,
    sha256,
)
from .index import COVERAGE, IMPORT, NAME, UNIQUE, Index, Module, key, spelled_in, words
from .judge import frozen_by, test_freezes
from .reach import read_contexts
from .reading import STAR_IMPORT, Clock, OutOfTime, Reader
from .testrefs import Closure, Tests, is_test_file

FORMAT = "freezedebt-analysis/1"
PRODUCTION, TEST, FIXTURE, OTHER = "production", "test", "fixture", "other"
CONE_CAP = 200
CONE_DEPTH = 4
LIST_CAP = 200


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
    #: read and keep whole answers by their inputs (with ``cache``)
    memo: bool = True
    policy: Policy = field(default_factory=Policy)


class Layout:
    """Which files are production code, tests, fixtures; and each production file's module."""

    def __init__(self, settings: Settings, paths: Iterable[str]) -> None:
        every = list(paths)
        self.settings = settings
        src = settings.src
        if not src:
            src = ("src",) if any(p.startswith("src/") for p in every) else ("",)
        self.src = src
        self._kinds: dict[str, str] = {}

    def kind(self, path: str) -> str:
        """Asked of every path of the tree several times: matched once each."""
        found = self._kinds.get(path)
        if found is None:
            found = self._kinds[path] = self._kind(path)
        return found

    def _kind(self, path: str) -> str:
        if matches_any(self.settings.fixtures, path):
            return FIXTURE
        if is_test_file(path, self.settings.tests):
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
class ChangedSymbol:
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
        self.changed: dict[str, ChangedSymbol] = {}
        self.moved: dict[str, str] = {}
        self.reexports_removed: list[str] = []
        #: (path, qualname) of test-tree definitions the patch added or edited
        self.changed_tests: set[tuple[str, str]] = set()
        self._files: tuple[dict[str, Entry], dict[str, Entry]] | None = None
        self._head_now: str | None = None
        self._untracked_files: list[str] | None = None

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
        self.folder = git.git_dir() / "freezedebt" if options.cache else None
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

    def _head_checked_out(self) -> bool:
        """Whether the head commit is the checkout's (asked by the memo and the fixtures)."""
        if self._head_now is None:
            self._head_now = self.git.resolve("HEAD")
        return self.head_sha == self._head_now

    def _untracked(self) -> list[str]:
        if self._untracked_files is None:
            self._untracked_files = self.git.untracked()
        return self._untracked_files

    # -- 1. the class of each changed file ------------------------------------------------------

    def _classify_files(self) -> None:
        layout, reader = self.layout, self.reader
        skipped: list[dict[str, str]] = []
        wanted = []
        digested: list[str] = []
        pairs: list[tuple[str, str]] = []
        for change in self.changes:
            before = self.base_tree.get(change.old_path or change.path)
            after = self.head_tree.get(change.path)
            present = [s for s in (before, after) if s is not None]
            for side in present:
                if side.is_file and side.path.endswith(".py"):
                    wanted.append(side.oid)
            data = layout.kind(change.path) == FIXTURE and not change.path.endswith("conftest.py")
            if not all(s.is_file for s in present) or data:
                continue
            if before is not None and after is not None and self._compared_whole(change):
                pairs.append((before.oid, after.oid))
            else:
                digested.extend(s.oid for s in present if s.path.endswith(".py"))
        reader.load(wanted)
        self._start_reading(digested, pairs)

        files: list[dict[str, Any]] = []
        changed: list[ChangedSymbol] = []
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
            if kind == FIXTURE and PurePosixPath(change.path).name != "conftest.py":
                # a golden file that happens to end in .py is data the lock judges, not code
                entry["class"] = LOCAL
                entry["reasons"] = ["fixture data: judged by the fixture lock, not as code"]
                continue
            base_facts: Facts | None
            head_facts: Facts | None
            if old is not None and new is not None and self._compared_whole(change):
                base_facts, head_facts = reader.pair_facts(old.oid, new.oid)
            else:
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
                changed.extend(ChangedSymbol(old_path, old_module, sc) for sc in gone.symbols)
            else:
                conftest = PurePosixPath(change.path).name == "conftest.py"
                fc = compare(
                    base_facts,
                    head_facts,
                    module=module,
                    conftest=conftest,
                    interface=production,
                    package=production and change.path.endswith("__init__.py"),
                )
                if change.old_path and old and new and old.oid == new.oid:
                    fc.reasons = [f"moved from {change.old_path}, content identical"]
            entry["class"] = fc.klass
            entry["reasons"] = fc.reasons
            for name in fc.reexports_removed:
                self.reexports_removed.append(key(module, name))
            if not production:
                self.changed_tests.update(
                    (change.path, sc.qualname) for sc in fc.symbols if sc.change != REMOVED
                )
            if fc.docstring_only:
                entry["docstring_only"] = True
            if fc.all_changed:
                entry["all_changed"] = True
            if production:
                changed.extend(ChangedSymbol(change.path, module, sc) for sc in fc.symbols)
        self.result["class"] = highest([f["class"] for f in files])
        self.result["files"] = files
        self.result["skipped"] = skipped
        self.files = files
        self.changed = {key(c.module, c.change.qualname): c for c in changed}

        # A definition that left one place and arrived unchanged at another moved: matched by
        # its name, kind and digest, one to one (a class's digest leaves out its methods, so
        # plain classes alike in body are told apart by their names).
        def move_key(c: ChangedSymbol) -> tuple[str, str, str] | None:
            side = c.change.base if c.change.change == REMOVED else c.change.head
            if side is None:
                return None
            return (c.change.qualname.rsplit(".", 1)[-1], c.change.kind, side.digest)

        sides: dict[tuple[str, str, str], dict[str, list[str]]] = defaultdict(
            lambda: {ADDED: [], REMOVED: []}
        )
        for k, c in self.changed.items():
            mark = move_key(c) if c.change.change in (ADDED, REMOVED) else None
            if mark is not None:
                sides[mark][c.change.change].append(k)
        for pair in sides.values():
            if len(pair[ADDED]) == 1 and len(pair[REMOVED]) == 1:
                self.moved[pair[ADDED][0]] = pair[REMOVED][0]

    def _compared_whole(self, change: Changed) -> bool:
        """Whether the two sides of a changed file are compared with each other (they are
        not for a module moved to another import path: it left one and arrived at another)."""
        old_path = change.old_path or change.path
        kind = self.layout.kind(change.path)
        if change.old_path and kind == OTHER:
            kind = self.layout.kind(change.old_path)
        if kind != PRODUCTION or not change.old_path:
            return True
        return self.layout.module(change.path) == self.layout.module(old_path)

    def _python_files(self) -> tuple[dict[str, Entry], dict[str, Entry]]:
        """The production files and the test-tree Python files (conftests included) of head."""
        if self._files is not None:
            return self._files
        production: dict[str, Entry] = {}
        tests: dict[str, Entry] = {}
        for p, e in self.head_tree.items():
            if not e.is_file:
                continue
            kind = self.layout.kind(p)
            if kind == PRODUCTION:
                production[p] = e
            elif p.endswith(".py") and (
                kind == TEST or (kind == FIXTURE and PurePosixPath(p).name == "conftest.py")
            ):
                tests[p] = e
        self._files = (production, tests)
        return self._files

    def _start_reading(self, digested: list[str], pairs: list[tuple[str, str]]) -> None:
        """Give the worker processes (where they pay) what the analysis will parse whatever
        the patch changed: both sides of each changed file, every package and star-importing
        module, every conftest; and meanwhile find the words of every file here."""
        reader = self.reader
        production, tests = self._python_files()
        packages = [e.oid for p, e in production.items() if p.endswith("__init__.py")]
        conftests = [e.oid for p, e in tests.items() if PurePosixPath(p).name == "conftest.py"]
        count = len(digested) + 2 * len(pairs) + len(packages) + len(conftests)
        reader.submit_pairs(pairs, count=count)
        reader.submit(digested, with_digests=True, count=count)
        reader.submit([*packages, *conftests], with_digests=False, count=count)
        reader.load_words(e.oid for e in production.values())
        star = [e.oid for e in production.values() if reader.words[e.oid][0] & STAR_IMPORT]
        reader.submit(star, with_digests=False, count=count + len(star))

    def _start_tests(self) -> None:
        """Give the workers, before the callers are known, the test files that the first
        round of ``Tests.ensure`` will parse whatever they turn out to be: those that spell a
        changed function's name or a changed method's class and the top package of its module
        (or import relatively). Parsed meanwhile, they are collected there. Before them, the
        production modules the first search for callers will read: while the workers parse
        those, this process finds the test files' words."""
        reader = self.reader
        spelled_by: set[str] = set()  # as Index.references looks for the changed symbols
        for target in self.changed:
            module, _, qualname = target.partition(":")
            parts = qualname.split(".")
            spelled_by.update((parts[-1], module.rsplit(".", 1)[-1]))
            if parts[-1] == "__init__" and len(parts) > 1:
                spelled_by.add(parts[-2])
        spelled_by = {n for n in spelled_by if n.isascii() and n.isidentifier()}
        modules = [
            e.oid
            for e in self._python_files()[0].values()
            if not reader.cache.has(e.oid, with_digests=False)
        ]
        if spelled_by and modules:
            spelled = spelled_in(reader, words(spelled_by), modules)
            found = [o for o in modules if o in spelled]
            reader.submit(found, with_digests=False, count=len(found))
        needles: set[str] = set()
        for target in self.changed:
            if target.endswith(":<module>"):
                continue
            parts = target.split(":", 1)[1].split(".")
            needles.add(parts[-1] if len(parts) == 1 else parts[-2])
        tops = {t.split(":", 1)[0].split(".")[0] for t in self.changed}
        if not needles or not tops:
            return
        unread = [
            e.oid
            for p, e in self._python_files()[1].items()
            if not p.endswith("conftest.py") and not reader.cache.has(e.oid, with_digests=False)
        ]
        if not unread:
            return
        spelled = spelled_in(reader, words(needles), unread)
        spelled &= spelled_in(reader, words(tops, relative=True), list(spelled))
        found = [o for o in unread if o in spelled]
        reader.submit(found, with_digests=False, count=len(found))

    # -- 2. callers, and 3. the tests that name each symbol ---------------------------------

    def _index(self) -> None:
        self._start_tests()
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
        # the tests of strong callers only: a caller matched by a shared attribute name alone
        # is listed, not judged
        callers = {c for found in self.refs.values() for c, e in found.items() if e != NAME}

        self.tests = Tests(self._python_files()[1], self.reader)
        interest = set(self.changed) | callers
        # What a test that reaches a target must spell: a function's name; a method's class
        # (a method is only found with its class named, unless its name is the project's own)
        needles: set[str] = set()
        for target in interest:
            if target.endswith(":<module>"):
                continue
            parts = target.split(":", 1)[1].split(".")
            if len(parts) == 1 or self.index.unique(parts[-1]):
                needles.add(parts[-1])
            if len(parts) > 1:
                needles.add(parts[-2])
        gates = self.index.gates({k.split(":", 1)[0] for k in interest})
        self.tests.ensure(self.index.spellings(needles), gates)
        self.every_test = self.tests.tests()
        self.tests.submit_support(self.every_test)
        self.reach: _Reach | None = None
        self.result["reach"] = "off"
        if self.options.coverage is not None:
            lines = read_contexts(self.options.coverage, set(self.head_tree))
            self.reach = _Reach(lines) if lines is not None else None
            self.result["reach"] = "coverage" if lines is not None else "unavailable"
        self._tested: dict[str, dict[str, str]] = {}
        self._by_name: dict[str, set[str]] = defaultdict(set)
        self._covered: set[str] = set()

    def _tests_by_name(self, names: set[str]) -> dict[str, set[str]]:
        """The tests that reach each of ``names`` (and of the names asked before): one pass
        over every test for all the names the symbols to judge will ask (see _judge_symbols),
        another only for a name outside those."""
        missing = names - self._covered
        if missing:
            self._covered |= missing
            for nodeid in self.tests.reaching(self.every_test, missing):
                tf, symbol, klass = self.every_test[nodeid]
                for name in self.tests.closure(nodeid, tf, symbol, klass).names & missing:
                    self._by_name[name].add(nodeid)
        return self._by_name

    def _resolves(self, closure: Closure, target: str, names: set[str]) -> bool:
        """Whether a chain of the test's closure resolves, through its file's imports and the
        project's re-exports, to ``target`` (``import click; click.edit()`` reaches
        ``click.termui:edit``)."""
        for tf, symbol in closure.members:
            for chain in (*symbol.calls, *symbol.uses):
                parts = chain.split(".")
                if parts[-1] not in names:
                    continue
                binding = tf.bindings.get(parts[0])
                if binding is None:
                    continue
                if self.index.resolve_dotted(".".join([binding, *parts[1:]])) == target:
                    return True
        return False

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
        owner_path = ".".join(parts[:-1])
        top = module.split(".")[0]
        unique = self.index.unique(last) or not self.index.definers.get(last)
        spelled = self.index.spellings([last])  # re-exported under other names too
        if qualname == "<module>":
            candidates = set(self.every_test)
        else:
            by_name = self._tests_by_name(spelled)
            candidates = set().union(*(by_name.get(n, ()) for n in spelled))
        for nodeid in sorted(candidates):
            tf, symbol, klass = self.every_test[nodeid]
            closure = self.tests.closure(nodeid, tf, symbol, klass)
            if qualname == "<module>":
                if closure.imports(module):
                    found[nodeid] = IMPORT
                continue
            if owner and owner not in closure.names and not unique:
                continue
            if owner and not spelled & closure.attributes:
                continue  # a method is reached as an attribute; a bare name is something else
            if not any(top in f.tops or f.relative for f in closure.files):
                continue
            imported = closure.imports(module) or self._resolves(
                closure,
                key(module, owner_path) if owner else target,
                self.index.spellings([owner]) if owner else spelled,
            )
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
        frozen_tests = test_freezes(active)
        # Candidate tests (seed 001): those the patch wrote or edited, or whose fixtures or
        # helpers it wrote or edited; the rest is inherited evidence.
        self.candidate_files = sorted({path for path, _ in self.changed_tests})

        def inherited(nodeid: str, names: set[str]) -> bool:
            """Whether the test reaches one of ``names`` through a definition the patch left
            alone (a test found only through the patch's new autouse fixture is not)."""
            if nodeid not in self.every_test:
                return True  # seen executing only (coverage): not known to be the patch's
            tf, symbol, klass = self.every_test[nodeid]
            closure = self.tests.closure(nodeid, tf, symbol, klass)
            return any(
                (f.path, s.qualname) not in self.changed_tests and s.names() & names
                for f, s in closure.members
            )

        # every name tests_of will look tests up by, for one pass over the tests
        asked = set(self.changed)
        for target in self.changed:
            asked.update(k for k, e in self.refs.get(target, {}).items() if e != NAME)
        self._tests_by_name(
            self.index.spellings(
                {
                    t.partition(":")[2].rsplit(".", 1)[-1]
                    for t in asked
                    if not t.endswith(":<module>")
                }
            )
        )
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
            frozen = frozen_by(
                {"module": c.module, "name": sc.qualname, "tests": sorted(tests)}, active
            )
            only_frozen = bool(tests) and all(t in frozen_tests for t in tests)
            reached_as = self.index.spellings([sc.qualname.rsplit(".", 1)[-1]])
            candidate_only = bool(tests) and not any(inherited(t, reached_as) for t in tests)
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
                "contract": sc.contract,
                "callers": _capped(strong),
                "callers_count": len(strong),
                "name_callers": weak[:LIST_CAP],
                "tests": _capped(tests),
                "tests_count": len(tests),
                "untested_callers": untested[:LIST_CAP],
                "evidence": {
                    "callers": dict(sorted(strong.items())[:LIST_CAP]),
                    "tests": dict(sorted(tests.items())[:LIST_CAP]),
                },
                "frozen_by": frozen,
                "only_frozen_tests": only_frozen,
                "candidate_only": candidate_only,
            }
            if target in self.moved:
                item["moved_from"] = self.moved[target]
            symbols.append(item)
            self.untested.update(untested)
            if frozen:
                self.frozen.append(target)
            if candidate_only:
                self.candidate_only.append(target)
            if sc.contract:  # a moved symbol is still gone from its old import path
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
                # a path's kind is fixture first when the fixture globs match it (and is kept)
                if e.is_file and (self.layout.kind(p) == FIXTURE or (lock and p in lock))
            }

        head_files = fixture_files(self.head_tree)
        base_files = fixture_files(self.base_tree)
        reader.load(e.oid for e in (*head_files.values(), *base_files.values()))
        head = {p: sha256(reader.bytes.get(e.oid, b"")) for p, e in head_files.items()}
        base = {p: sha256(reader.bytes.get(e.oid, b"")) for p, e in base_files.items()}
        untracked: list[str] = []
        top = self.git.toplevel()
        if top is not None and self._head_checked_out():
            # a fixture file left untracked in the checkout is still read by the tests
            for path in self._untracked():
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
        interface = sorted({*self.contract, *self.reexports_removed, *self.all_changed_modules})
        if interface:
            shown = ", ".join(interface[:5]) + (" …" if len(interface) > 5 else "")
            out.append(
                _problem(
                    "contract-change",
                    policy,
                    f"public interface changed: {shown}; impact cone: "
                    f"{_count(self.cone_count, 'public entry', 'public entries')}",
                    interface,
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

    def _memo_key(self) -> str:
        """Everything the answer depends on: the commits (and so both trees and the base's
        governance files), the settings, the policy, the day, the analyzer's own code, and
        what lies outside git (coverage data, absolute governance paths, untracked fixtures)."""
        options = self.options
        outside: list[str] = []
        for path in (options.coverage, *(
            Path(p) for p in (self.settings.ledger, self.settings.fixture_lock,
                              self.settings.oracle_map) if Path(p).is_absolute()
        )):  # fmt: skip
            if path is not None:
                try:
                    outside.append(f"{path}={sha256(path.read_bytes())}")
                except OSError:
                    outside.append(f"{path}=unreadable")
        top = self.git.toplevel()
        if top is not None and self._head_checked_out():
            for name in self._untracked():
                if matches_any(self.settings.fixtures, name):
                    try:
                        outside.append(f"{name}={sha256((top / name).read_bytes())}")
                    except OSError:
                        continue
        parts = [
            FORMAT,
            str(FACTS_VERSION),
            PYTHON,
            _code_version(),
            self.merge,
            self.head_sha,
            # not repr(): a frozenset's order changes from one process to the next
            json.dumps(dataclasses.asdict(self.settings), sort_keys=True, default=sorted),
            repr(sorted(self.policy.as_dict()["severities"].items())),
            self.options.today.isoformat(),
            options.base,
            options.head,
            *outside,
        ]
        return sha256("\0".join(parts).encode())

    def run(self) -> dict[str, Any]:
        self._read_inputs()
        memo = Memo(self.folder, self._memo_key()) if self.folder and self.options.memo else None
        if memo is not None:
            answer = memo.get()
            if answer is not None:
                # what this run did: read the answer, parse nothing
                answer["stats"].update(
                    seconds=round(self.clock.elapsed(), 3),
                    files_parsed=0,
                    cache_entries_loaded=0,
                    result_cached=1,
                )
                return answer
        self.cache = FactsCache(self.folder)
        self.reader = Reader(self.git, self.cache, self.clock)
        result = self.result
        steps = (self._classify_files, self._index, self._judge_symbols, self._cone, self._fixtures)
        try:
            for step in steps:
                step()
            result["problems"] = self._problems()
        except OutOfTime:
            result["class"] = CROSS  # fail closed: what was not read may be anything
            self.incomplete_reason = (
                f"the budget of {self.options.budget:g} s ran out: what was not reached by "
                "then is not in this analysis"
            )
            result["problems"] = []
        finally:
            self.reader.close()
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
        if memo is not None and complete:
            memo.put(result)
        return result


def _code_version() -> str:
    """A digest of the analysis's own source: a changed analyzer never reuses old answers."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        folder = Path(__file__).parent
        digest = hashlib.sha256()
        for path in sorted(folder.glob("*.py")):
            digest.update(path.read_bytes())
        _CODE_VERSION = digest.hexdigest()
    return _CODE_VERSION


_CODE_VERSION: str | None = None


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


_DOC_SUFFIXES = (".md", ".rst", ".txt", ".adoc")


def _is_doc(path: str) -> bool:
    return path.endswith(_DOC_SUFFIXES) or path.startswith("docs/")


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
    # The facts of hundreds of files stay alive while more are parsed: the cyclic collector
    # would scan them again and again, and the analysis makes next to no cyclic garbage.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return Analysis(options).run()
    finally:
        if enabled:
            gc.enable()
