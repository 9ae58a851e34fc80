"""The production modules of the head tree and the references between them: which
definitions call or use which, resolved through each module's imports."""

from __future__ import annotations

import io
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from .facts import Facts, Symbol
from .reading import _RELATIVE, RELATIVE_IMPORT, STAR_IMPORT, Reader

#: Attribute names of the built-in types and files: a call of one says nothing of its class.
BUILTIN_METHODS = frozenset(
    name
    for kind in (object, str, bytes, bytearray, list, dict, set, frozenset, tuple, int, float,
                 complex, io.TextIOWrapper, io.BufferedReader, io.BytesIO, BaseException)
    for name in dir(kind)
)  # fmt: skip
#: Evidence of a caller or a test, strongest first.
IMPORT, SELF, UNIQUE, NAME, COVERAGE = "import", "self", "unique-name", "name", "coverage"


def key(module: str, qualname: str) -> str:
    return f"{module}:{qualname}"


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
        reader.load_words(m.oid for m in live)
        always += [m for m in live if reader.words[m.oid][0] & STAR_IMPORT]
        reader.prefetch(m.oid for m in always)
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
            needle = words(new)
            unread = [m for m in self.modules.values() if not m.ghost and m.name not in self.parsed]
            spelled = spelled_in(self.reader, needle, [m.oid for m in unread])
            found = [m for m in unread if m.oid in spelled]
            self.reader.prefetch(m.oid for m in found)
            for module in found:
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
        self,
        module: Module,
        chain: str,
        owner: str | None,
        called: bool,
        local: frozenset[str] = frozenset(),
    ) -> tuple[str, str] | None:
        """What a chain used inside ``module`` refers to: ``(target, evidence)``, where the
        target is ``module:qualname`` or ``.name`` for an attribute name alone. ``local`` are
        the names the using definition binds itself, which shadow imports and globals."""
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
        if root in local:
            # a local of unknown type: only its attribute name says anything
            return (f".{parts[-1]}", NAME) if called and len(parts) > 1 else None
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
                mentioned = symbol.names()  # every part of every chain: most symbols end here
                if spelled.isdisjoint(mentioned) and aliased.isdisjoint(mentioned):
                    continue
                caller = key(name, symbol.qualname)
                owner = _owner(symbol, facts)
                local = frozenset(symbol.locals) if symbol.kind != "module" else frozenset()
                for chains, called in ((symbol.calls, True), (symbol.uses, False)):
                    for chain in chains:
                        parts = chain.split(".")
                        if parts[0] not in aliased and spelled.isdisjoint(parts):
                            continue
                        hit = self.resolve(module, chain, owner, called, local)
                        if hit is None:
                            continue
                        target, evidence = hit
                        targets: set[str]
                        if target.startswith("."):
                            attribute = target[1:]
                            if attribute.startswith("__") or attribute in BUILTIN_METHODS:
                                # super().__init__(), ", ".join(...): such a name alone says
                                # nothing of which definition is called
                                continue
                            targets = by_name.get(attribute, set())
                            evidence = UNIQUE if self.unique(attribute) else NAME
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

    def gates(self, modules: Iterable[str]) -> set[str]:
        """The top packages through which code can import ``modules``: their own, and those of
        modules that re-export them (``os`` binds ``posixpath`` as ``path``)."""
        wanted = set(modules)
        out = {m.split(".")[0] for m in wanted if m}
        for name in self.parsed:
            module = self.modules[name]
            for local, target in self.bindings(module).items():
                # ``import posixpath as path`` offers the module under a new name; a package
                # offers the names it imports; ``import shutil`` only uses it
                renamed = (
                    target in wanted
                    and local != target.rsplit(".", 1)[-1]
                    and not local.startswith("_")
                )
                offered = module.package and any(target.startswith(m + ".") for m in wanted)
                if renamed or offered:
                    out.add(name.split(".")[0])
                    break
        return out

    def unique(self, name: str) -> bool:
        """Whether an attribute name alone points at one definition: the project defines it
        once, and it is not a method of the built-in types (``items.append`` is a list's)."""
        return len(self.definers.get(name, ())) == 1 and name not in BUILTIN_METHODS

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


class Needle:
    """A search for any of some names as whole words: a file that does not spell a name
    cannot refer to it (``getattr`` with a computed string aside), so it need not be parsed.
    A plain alternation finds candidates fast; word boundaries are checked on those alone
    (on the standard library, 0.25 s against 1.2 s with lookarounds at every position).
    ``relative`` also matches a file with a relative ``from .`` import."""

    def __init__(self, names: Iterable[str], *, relative: bool = False) -> None:
        ordered = sorted(set(names), key=len, reverse=True)
        body = b"|".join(re.escape(n.encode()) for n in ordered)
        extra = _RELATIVE.pattern if relative else b""
        self.rough = re.compile(b"|".join(p for p in (body, extra) if p))
        self.bounded = re.compile(rb"\b(?:" + body + rb")\b") if ordered else None
        # a file's words lie between single spaces: a space is a literal the engine skips
        # to, where \b would be tried at every position
        self.spaced = re.compile(b" (?:" + body + b") ") if ordered else None
        self.extra = _RELATIVE if relative else None
        #: names of word characters only can be looked for in a file's words alone
        self.plain = all(_PLAIN.fullmatch(n) for n in ordered)

    def search(self, data: bytes) -> bool:
        if not self.rough.search(data):
            return False
        if self.extra is not None and self.extra.search(data):
            return True
        return self.bounded is not None and self.bounded.search(data) is not None

    def search_words(self, words: tuple[int, bytes]) -> bool:
        """The same answer as :meth:`search` of the file, from its words (``plain`` only)."""
        flags, text = words
        if self.extra is not None and flags & RELATIVE_IMPORT:
            return True
        return self.spaced is not None and self.spaced.search(text) is not None


_PLAIN = re.compile(r"[A-Za-z0-9_]+")


def words(names: Iterable[str], *, relative: bool = False) -> Needle:
    return Needle(list(names), relative=relative)


def spelled_in(reader: Reader, needle: Needle, oids: list[str]) -> set[str]:
    """Which of the blobs spell a name of the needle: searched in their words, read from the
    cache when it has them; in their text only for names of other characters."""
    if needle.plain:
        reader.load_words(oids)
        return {o for o in oids if needle.search_words(reader.words[o])}
    reader.load(oids)
    return {o for o in oids if needle.search(reader.bytes.get(o, b""))}


def _owner(symbol: Symbol, facts: Facts) -> str | None:
    """The class a method belongs to (for ``self.x``)."""
    if symbol.kind != "method":
        return None
    owner = symbol.qualname.rpartition(".")[0]
    return owner if owner in facts.symbols else None
