"""What one Python file says about itself, read with ``ast`` only (the code is never imported or
run): its definitions with their signatures and digests, its imports, and the names each
definition uses. Facts are plain data, so they can be cached by blob id."""

from __future__ import annotations

import ast
import hashlib
import sys
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

#: Bumped whenever the facts below change meaning, so cached facts of older versions are unused.
FACTS_VERSION = 6
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"

#: Calls whose first argument names a target by a dotted string (``mock.patch("a.b.c")``).
_PATCHERS = frozenset(("patch", "setattr", "delattr", "patch.object", "object"))
#: The last part of a call's chain for which ``_Uses._patched`` reads its arguments.
_PATCHING = _PATCHERS | {"getattr"}
#: Base classes whose class-level fields are a serialized shape even without a decorator.
_SHAPED_BASES = frozenset(
    ("TypedDict", "NamedTuple", "Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "BaseModel")
)


def _digest(*parts: str) -> str:
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=10).hexdigest()


def _dump(node: ast.AST | list[Any] | None) -> str:
    if node is None:
        return ""
    if isinstance(node, list):
        return "[" + ",".join(_dump(n) for n in node) + "]"
    return ast.dump(node, include_attributes=False)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    return body[1:] if body and _is_docstring(body[0]) else body


def _strip_docstrings(tree: ast.AST) -> None:
    """Drop every docstring in place (for the "docstrings only" comparison, after the full
    digests were taken)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            node.body = _without_docstring(node.body) or [ast.Pass()]


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name; ``.b.c`` when the chain starts elsewhere
    (a call's result, a subscript); ``None`` for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif parts:
        parts.append("")
    else:
        return None
    return ".".join(reversed(parts))


@dataclass(slots=True)
class Symbol:
    """A function, method or class. ``digest`` covers the whole definition (for a class, its
    own statements, not its methods'); ``signature`` its parameters, defaults, annotations
    and decorators; ``untyped`` the same without annotations; ``shape`` a class's fields."""

    qualname: str
    kind: str
    first: int
    last: int
    body_first: int
    signature: str = ""
    untyped: str = ""
    digest: str = ""
    nodoc: str = ""
    shape: str = ""
    calls: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    decorators: list[str] = field(default_factory=list)
    fixture: str | None = None
    autouse: bool = False
    usefixtures: list[str] = field(default_factory=list)
    #: names the body binds itself (parameters, assignments, loop and ``with`` targets): a
    #: use of one of them is of the local, not of an import of that name
    locals: list[str] = field(default_factory=list)
    _names: frozenset[str] | None = field(default=None, repr=False, compare=False)
    _attributes: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def names(self) -> frozenset[str]:
        """Every identifier the definition mentions (each part of each chain, keywords, the
        parts of patched targets); computed once."""
        if self._names is None:
            out: set[str] = set(self.words)
            # one split of every chain joined: the same parts, without a call per chain
            out.update(".".join((*self.calls, *self.uses)).split("."))
            out.discard("")
            self._names = frozenset(out)
        return self._names

    def attributes(self) -> frozenset[str]:
        """The identifiers the definition reaches as attributes (``x.name``), keywords and
        patched names: how a method is reached, where a bare name is a local or a builtin;
        computed once."""
        if self._attributes is None:
            out: set[str] = set(self.words)
            tails = [c.partition(".")[2] for c in (*self.calls, *self.uses) if "." in c]
            out.update(".".join(tails).split("."))
            out.discard("")
            self._attributes = frozenset(out)
        return self._attributes


@dataclass(slots=True)
class Import:
    """``local`` is bound to ``module`` (``level`` dots of relative import), or to ``name``
    inside it for ``from … import``."""

    local: str
    level: int
    module: str
    name: str | None = None


@dataclass(slots=True)
class Facts:
    """The facts of one file. ``error`` is set when it could not be read as Python."""

    error: str | None = None
    digest: str = ""
    nodoc: str = ""
    toplevel: str = ""
    imports_ordered: str = ""
    imports_set: str = ""
    all: list[str] | None = None
    imports: list[Import] = field(default_factory=list)
    star: list[tuple[int, str]] = field(default_factory=list)
    symbols: dict[str, Symbol] = field(default_factory=dict)
    module: Symbol | None = None
    #: the names the module's top-level imports bind (a package re-exports them)
    exports: list[str] = field(default_factory=list)

    def to_record(self) -> tuple[Any, ...]:
        """Plain tuples, lists and strings (what ``marshal`` writes and reads fast): the
        fields in their declared order."""
        return (
            self.error,
            self.digest,
            self.nodoc,
            self.toplevel,
            self.imports_ordered,
            self.imports_set,
            self.all,
            [(i.local, i.level, i.module, i.name) for i in self.imports],
            [tuple(s) for s in self.star],
            [_symbol_record(s) for s in self.symbols.values()],
            _symbol_record(self.module) if self.module else None,
            self.exports,
        )

    @classmethod
    def from_record(cls, record: tuple[Any, ...]) -> Facts:
        (error, digest, nodoc, toplevel, ordered, unordered, names, imports, star, symbols,
         module, exports) = record  # fmt: skip
        return cls(
            error,
            digest,
            nodoc,
            toplevel,
            ordered,
            unordered,
            names,
            [Import(*i) for i in imports],
            [(int(level), str(name)) for level, name in star],
            {s[0]: Symbol(*s) for s in symbols},
            Symbol(*module) if module else None,
            exports,
        )


_SYMBOL_FIELDS = tuple(f.name for f in fields(Symbol) if not f.name.startswith("_"))


def _symbol_record(symbol: Symbol) -> tuple[Any, ...]:
    return tuple(getattr(symbol, name) for name in _SYMBOL_FIELDS)


class _Uses(ast.NodeVisitor):
    """Collects the chains a body calls and uses, keyword names and patched targets. Nested
    function and class definitions count as part of the enclosing symbol."""

    def __init__(self) -> None:
        self.calls: set[str] = set()
        self.uses: set[str] = set()
        self.words: set[str] = set()
        self.targets: set[str] = set()
        self.imports: list[ast.Import | ast.ImportFrom] = []
        self.stored: set[str] = set()

    def collect(self, nodes: list[ast.AST]) -> None:
        """The same walk as the ``visit_*`` methods below, without a call per node: a stack,
        a test of each node's exact type (``ast.parse`` makes no subclasses) and each node's
        child fields read directly (the visitor's dispatch and ``iter_child_nodes`` were most
        of the cost of reading a file's facts)."""
        stack: list[ast.AST] = nodes[::-1]
        push = stack.append
        uses, stored = self.uses, self.stored
        fields_of = _CHILD_FIELDS
        node_type = ast.AST
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                name = node.id  # type: ignore[attr-defined]
                if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                    uses.add(name)
                else:
                    stored.add(name)
            elif kind is ast.Constant:
                continue
            elif kind is ast.Attribute:
                # dotted(node) inline: one in every few nodes is an attribute
                parts: list[str] = []
                base = node
                while type(base) is ast.Attribute:
                    parts.append(base.attr)
                    base = base.value
                if type(base) is ast.Name:
                    parts.append(base.id)
                    uses.add(".".join(reversed(parts)))
                else:
                    parts.append("")
                    uses.add(".".join(reversed(parts)))
                    push(base)
            elif kind is ast.Call:
                assert isinstance(node, ast.Call)  # noqa: S101 - for the type checker
                chain = dotted(node.func)
                later: list[ast.AST] = []
                if chain is not None:
                    self.calls.add(chain)
                    if chain.rpartition(".")[2] in _PATCHING:  # what _patched looks at
                        self._patched(chain, node)
                    if chain.startswith("."):
                        later.append(_root(node.func))
                else:
                    later.append(node.func)
                for keyword in node.keywords:
                    if keyword.arg:
                        self.words.add(keyword.arg)
                later.extend(node.args)
                later.extend(k.value for k in node.keywords)
                stack.extend(reversed(later))
            elif kind is ast.arg:
                stored.add(node.arg)  # type: ignore[attr-defined]
                annotation = node.annotation  # type: ignore[attr-defined]
                if annotation is not None:
                    push(annotation)
            elif kind is ast.Import or kind is ast.ImportFrom:
                self.imports.append(node)  # type: ignore[arg-type]
            else:
                if kind is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
                    stored.add(node.name)  # type: ignore[attr-defined]
                names = fields_of.get(kind)
                if names is None:
                    names = fields_of[kind] = _child_fields(kind)
                children: list[ast.AST] = []
                for field_name in names:
                    value = getattr(node, field_name, None)
                    if type(value) is list:
                        children.extend([v for v in value if isinstance(v, node_type)])
                    elif isinstance(value, node_type):
                        children.append(value)
                if children:
                    stack.extend(reversed(children))

    def visit_arg(self, node: ast.arg) -> None:
        self.stored.add(node.arg)
        if node.annotation is not None:
            self.visit(node.annotation)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.stored.add(node.name)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        return None  # nothing to collect; NodeVisitor's default here is a slow compatibility shim

    def visit_Import(self, node: ast.Import) -> None:
        self.imports.append(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.imports.append(node)

    def visit_Call(self, node: ast.Call) -> None:
        chain = dotted(node.func)
        if chain is not None:
            self.calls.add(chain)
            self._patched(chain, node)
            if chain.startswith("."):
                self._visit_root(node.func)
        else:
            self.visit(node.func)
        for keyword in node.keywords:
            if keyword.arg:
                self.words.add(keyword.arg)
        for arg in node.args:
            self.visit(arg)
        for keyword in node.keywords:
            self.visit(keyword.value)

    def _patched(self, chain: str, node: ast.Call) -> None:
        last = chain.rsplit(".", 1)[-1]
        tail2 = ".".join(chain.split(".")[-2:])
        if last not in _PATCHERS and tail2 not in _PATCHERS and last != "getattr":
            return
        strings = [
            a.value
            for a in node.args[:2]
            if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        for text in strings:
            if last == "getattr" or tail2 == "patch.object" or "." not in text:
                if text.isidentifier():
                    self.words.add(text)
                continue
            self.targets.add(text)
            self.words.update(p for p in text.split(".") if p.isidentifier())

    def _visit_root(self, node: ast.AST) -> None:
        while isinstance(node, ast.Attribute):
            node = node.value
        self.visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = dotted(node)
        if chain is None:  # pragma: no cover - an Attribute always gives a chain
            return
        self.uses.add(chain)
        if chain.startswith("."):
            self._visit_root(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.stored.add(node.id)
        else:
            self.uses.add(node.id)


#: The fields of each node type that may hold child nodes: those an expression context or
#: an operator fills are left out (leaves with nothing to collect, one in every few nodes).
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    return tuple(f for f in getattr(kind, "_fields", ()) if f not in ("ctx", "op", "ops"))


def _root(node: ast.AST) -> ast.AST:
    """The node a chain of attributes hangs from (``f()`` in ``f().a.b``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return dotted(target) or ""


def _fixture_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str | None, bool]:
    """The fixture name a definition declares (``@pytest.fixture``), and whether it is autouse."""
    for deco in node.decorator_list:
        name = _decorator_name(deco)
        if name.rsplit(".", 1)[-1] not in ("fixture", "yield_fixture"):
            continue
        fixture, autouse = node.name, False
        if isinstance(deco, ast.Call):
            for keyword in deco.keywords:
                value = keyword.value
                if keyword.arg == "name" and isinstance(value, ast.Constant):
                    fixture = str(value.value)
                if keyword.arg == "autouse" and isinstance(value, ast.Constant):
                    autouse = bool(value.value)
        return fixture, autouse
    return None, False


def _usefixtures(decorators: Iterable[ast.expr]) -> list[str]:
    names: list[str] = []
    for deco in decorators:
        if isinstance(deco, ast.Call) and _decorator_name(deco).endswith("usefixtures"):
            names.extend(
                a.value
                for a in deco.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            )
    return names


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, str]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg:
        every.append(args.vararg)
    if args.kwarg:
        every.append(args.kwarg)
    kind = "async" if isinstance(node, ast.AsyncFunctionDef) else "def"
    decorators = _dump(node.decorator_list)
    typed = _digest(kind, _dump(args), _dump(node.returns), decorators)
    saved = [a.annotation for a in every]
    for a in every:
        a.annotation = None
    untyped = _digest(kind, _dump(args), decorators)
    for a, annotation in zip(every, saved, strict=True):
        a.annotation = annotation
    return typed, untyped


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


def _shaped(node: ast.ClassDef) -> bool:
    if any(
        _decorator_name(d).rsplit(".", 1)[-1] in ("dataclass", "define", "attrs", "frozen")
        for d in node.decorator_list
    ):
        return True
    return any((dotted(b) or "").rsplit(".", 1)[-1] in _SHAPED_BASES for b in node.bases)


class _Extractor:
    def __init__(self, with_digests: bool) -> None:
        self.with_digests = with_digests
        self.symbols: dict[str, Symbol] = {}
        self.imports: list[ast.Import | ast.ImportFrom] = []
        # what each definition's digest covers: a function whole, a class its own statements
        self.nodes: list[tuple[Symbol, ast.AST | None, list[ast.AST]]] = []

    def digests(self, attr: str, same: dict[str, bytes] | None = None) -> list[str]:
        """Each definition's digest (``attr``): of its tree, or for one in ``same`` (whose
        text the other side of the file holds unchanged) of that text, tagged apart."""
        out = []
        for symbol, node, parts in self.nodes:
            text = same.get(symbol.qualname) if same else None
            if text is not None:
                value = (
                    "t" + hashlib.blake2b(attr.encode() + b"\0" + text, digest_size=10).hexdigest()
                )
            else:
                value = _digest(_dump(node) if node is not None else _dump(parts))
            setattr(symbol, attr, value)
            out.append(f"{symbol.qualname}={value}")
        return out

    def uses_of(self, nodes: Iterable[ast.AST], symbol: Symbol) -> None:
        visitor = _Uses()
        visitor.collect(list(nodes))
        symbol.calls = sorted(visitor.calls)
        symbol.uses = sorted(visitor.uses - visitor.calls)
        symbol.words = sorted(visitor.words)
        symbol.targets = sorted(visitor.targets)
        symbol.locals = sorted(visitor.stored)
        self.imports.extend(visitor.imports)

    def function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, in_class: bool
    ) -> None:
        qualname = prefix + node.name
        body = node.body
        symbol = Symbol(
            qualname,
            "method" if in_class else "function",
            min([node.lineno, *(d.lineno for d in node.decorator_list)]),
            node.end_lineno or node.lineno,
            (_without_docstring(body) or body)[0].lineno,
        )
        if self.with_digests:
            symbol.signature, symbol.untyped = _signature(node)
            self.nodes.append((symbol, node, []))
        self.uses_of([*node.decorator_list, node.args, *body], symbol)
        symbol.params = _params(node)
        symbol.decorators = [_decorator_name(d) for d in node.decorator_list]
        symbol.fixture, symbol.autouse = _fixture_of(node)
        symbol.usefixtures = _usefixtures(node.decorator_list)
        self.symbols[qualname] = symbol

    def klass(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = prefix + node.name
        own = [
            s
            for s in node.body
            if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ]
        symbol = Symbol(
            qualname,
            "class",
            min([node.lineno, *(d.lineno for d in node.decorator_list)]),
            node.end_lineno or node.lineno,
            node.body[0].lineno,
        )
        if self.with_digests:
            head = _dump([*node.bases, *node.keywords]) + _dump(node.decorator_list)
            symbol.signature = symbol.untyped = _digest(head)
            fields = [s for s in _without_docstring(own) if not isinstance(s, ast.Pass)]
            symbol.shape = _digest(_dump(fields)) if _shaped(node) else ""
            self.nodes.append(
                (symbol, None, [*node.bases, *node.keywords, *node.decorator_list, *own])
            )
        self.uses_of([*node.decorator_list, *node.bases, *node.keywords, *own], symbol)
        symbol.decorators = [_decorator_name(d) for d in node.decorator_list]
        symbol.usefixtures = _usefixtures(node.decorator_list)
        self.symbols[qualname] = symbol
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self.function(stmt, qualname + ".", in_class=True)
            elif isinstance(stmt, ast.ClassDef):
                self.klass(stmt, qualname + ".")


def _assigns_all(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    else:
        return False
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def _all_names(tree: ast.Module) -> list[str] | None:
    for stmt in tree.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
            targets = [stmt.target]
        value = getattr(stmt, "value", None)
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and isinstance(
            value, ast.List | ast.Tuple
        ):
            return sorted(
                e.value
                for e in value.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
    return None


def extract(source: bytes, *, with_digests: bool = True) -> Facts:
    """The facts of one file's bytes. Never raises for bad input: a file that is not UTF-8 or
    not valid Python gives facts with ``error`` set."""
    begun = _begin(source, with_digests)
    return begun if isinstance(begun, Facts) else begun.finish()


def extract_pair(old: bytes, new: bytes) -> tuple[Facts, Facts]:
    """The facts with digests of both sides of a changed file, for comparing them only. A
    definition whose text is the same on both sides (the rest of a large file around a small
    change) gets a digest of that text instead of a dump of its tree: equal texts parse to
    equal trees, so every comparison of the two sides comes out as with tree digests, at a
    fraction of the cost. These digests mean nothing against any other file."""
    sides = [_begin(old, True), _begin(new, True)]
    a, b = sides
    if isinstance(a, Facts) or isinstance(b, Facts):
        return (
            a if isinstance(a, Facts) else a.finish(),
            b if isinstance(b, Facts) else b.finish(),
        )
    same: dict[str, bytes] = {}
    ours, theirs = a.segments(), b.segments()
    if ours is not None and theirs is not None:
        same = {q: text for q, text in ours.items() if theirs.get(q) == text}
    return a.finish(same), b.finish(same)


def _future(tree: ast.Module) -> str:
    return _dump(
        [s for s in tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__"]
    )


class _Begun:
    """A file parsed and walked, its digests not yet taken."""

    def __init__(
        self,
        source: bytes,
        tree: ast.Module,
        extractor: _Extractor,
        top_imports: list[ast.Import | ast.ImportFrom],
        toplevel: list[ast.stmt],
        facts: Facts,
    ) -> None:
        self.facts = facts
        self.source = source
        self.tree = tree
        self.extractor = extractor
        self.top_imports = top_imports
        self.toplevel = toplevel

    def segments(self) -> dict[str, bytes] | None:
        """The text of each definition whose name occurs once in the file, by qualified name,
        with the file's first two lines (a coding declaration) and ``__future__`` imports (how
        the text parses) in front; ``None`` where lines could be counted otherwise than by
        ``\\n`` alone."""
        if b"\r" in self.source:
            return None
        try:
            self.source.decode("utf-8")  # so that each b"\n" ends a line as the parser saw it
        except UnicodeDecodeError:
            return None
        lines = self.source.split(b"\n")
        preamble = b"\n".join(lines[:2]) + b"\0" + _future(self.tree).encode() + b"\0"
        counts: dict[str, int] = {}
        for symbol, _node, _parts in self.extractor.nodes:
            counts[symbol.qualname] = counts.get(symbol.qualname, 0) + 1
        return {
            symbol.qualname: preamble + b"\n".join(lines[symbol.first - 1 : symbol.last])
            for symbol, _node, _parts in self.extractor.nodes
            if counts[symbol.qualname] == 1
        }

    def finish(self, same: dict[str, bytes] | None = None) -> Facts:
        tree, extractor = self.tree, self.extractor
        top_imports, toplevel = self.top_imports, self.toplevel
        with_digests = extractor.with_digests
        facts = self.facts
        if with_digests:
            # The module's digests are made of its parts' (each node is dumped once per side):
            # its docstring, imports, module-level code and every definition in order.
            dumps = [_dump(s) for s in top_imports]
            facts.imports_ordered = _digest(*dumps)
            facts.imports_set = _digest(*sorted(dumps))
            facts.toplevel = _digest(_dump(_without_docstring(toplevel)))
            docstring = _dump(tree.body[0]) if tree.body and _is_docstring(tree.body[0]) else ""
            full = extractor.digests("digest", same)
            exported = repr(facts.all)
            facts.digest = _digest(
                docstring, exported, facts.imports_ordered, facts.toplevel, *full
            )
            if same:
                # only what is dumped again below: the definitions not digested by their text
                roots: list[ast.AST] = list(toplevel)
                for symbol, node, parts in extractor.nodes:
                    if symbol.qualname not in same:
                        roots.extend([node] if node is not None else parts)
                for root in roots:
                    _strip_docstrings(root)
            else:
                _strip_docstrings(tree)
            bare = extractor.digests("nodoc", same)
            code = _digest(_dump(_without_docstring(toplevel)))
            facts.nodoc = _digest(exported, facts.imports_ordered, code, *bare)
        return facts


def _begin(source: bytes, with_digests: bool) -> _Begun | Facts:
    """Parse and walk a file (facts with ``error`` where it cannot be read as Python)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in old code
            # bytes, so that a coding declaration (PEP 263) is honoured as Python honours it
            tree = ast.parse(source)
    except SyntaxError as exc:
        if "unicode error" in str(exc.msg) or "decode" in str(exc.msg):
            return Facts(error=f"not UTF-8 nor its declared encoding ({exc.msg})")
        return Facts(error=f"syntax error at line {exc.lineno}: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return Facts(error=f"cannot be parsed ({type(exc).__name__})")

    facts = Facts()
    extractor = _Extractor(with_digests)
    top_imports: list[ast.Import | ast.ImportFrom] = []
    toplevel: list[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            extractor.function(stmt, "", in_class=False)
        elif isinstance(stmt, ast.ClassDef):
            extractor.klass(stmt, "")
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            top_imports.append(stmt)
        elif not _assigns_all(stmt):  # __all__ is compared on its own, as the interface
            toplevel.append(stmt)
    facts.symbols = extractor.symbols
    module = Symbol("<module>", "module", 1, len(source.splitlines()) or 1, 1)
    extractor.uses_of(toplevel, module)  # before the imports: it finds those in try/if blocks
    facts.module = module

    # every import at any depth: one inside a function still binds how that code reaches a module
    for node in [*top_imports, *extractor.imports]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                target = alias.name if alias.asname else alias.name.split(".")[0]
                facts.imports.append(Import(local, 0, target))
                if not alias.asname and "." in alias.name:
                    facts.imports.append(Import("", 0, alias.name))  # the module, for the graph
        else:
            for alias in node.names:
                if alias.name == "*":
                    facts.star.append((node.level, node.module or ""))
                else:
                    facts.imports.append(
                        Import(
                            alias.asname or alias.name, node.level, node.module or "", alias.name
                        )
                    )
    facts.all = _all_names(tree)
    facts.exports = sorted(
        {
            alias.asname or alias.name.split(".")[0]
            for node in top_imports
            for alias in node.names
            if alias.name != "*"
        }
    )
    return _Begun(source, tree, extractor, top_imports, toplevel, facts)
