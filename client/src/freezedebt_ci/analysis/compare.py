"""The change class of one Python file (seed 001): the facts of its base and head versions
compared symbol by symbol."""

from __future__ import annotations

from dataclasses import dataclass, field

from .facts import Facts, Symbol, extract

UNCHANGED, COSMETIC, LOCAL, CONTRACT, CROSS = "unchanged", "cosmetic", "local", "contract", "cross"
CLASSES = (UNCHANGED, COSMETIC, LOCAL, CONTRACT, CROSS)
ADDED, REMOVED, MODIFIED = "added", "removed", "modified"


#: The facts of a file that does not exist: an added file is compared with an empty module.
_EMPTY = extract(b"")


def highest(classes: list[str]) -> str:
    return max(classes, key=CLASSES.index, default=UNCHANGED)


def is_public_name(name: str) -> bool:
    """``_helper`` is private; ``__init__`` and other dunders are part of the interface."""
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def is_public(module: str, qualname: str) -> bool:
    parts = [*module.split("."), *qualname.split(".")]
    return all(is_public_name(p) for p in parts if p)


@dataclass(slots=True)
class SymbolChange:
    qualname: str
    kind: str
    change: str
    signature_changed: bool = False
    types_only: bool = False
    shape_changed: bool = False
    public: bool = False
    head: Symbol | None = None
    base: Symbol | None = None

    @property
    def contract(self) -> bool:
        """A change that callers can observe without reading the body."""
        if not self.public:
            return False
        return self.change == REMOVED or self.signature_changed or self.shape_changed


@dataclass(slots=True)
class FileChange:
    klass: str
    reasons: list[str] = field(default_factory=list)
    symbols: list[SymbolChange] = field(default_factory=list)
    docstring_only: bool = False
    all_changed: bool = False
    reexports_removed: list[str] = field(default_factory=list)


def _symbol_change(
    qualname: str, old: Symbol | None, new: Symbol | None, module: str
) -> SymbolChange | None:
    public = is_public(module, qualname)
    if old is None and new is not None:
        return SymbolChange(qualname, new.kind, ADDED, public=public, head=new)
    if new is None and old is not None:
        return SymbolChange(qualname, old.kind, REMOVED, public=public, base=old)
    assert old is not None and new is not None  # noqa: S101 - one side at least exists
    if old.digest == new.digest or old.nodoc == new.nodoc:
        return None
    signature = old.signature != new.signature
    return SymbolChange(
        qualname,
        new.kind,
        MODIFIED,
        signature_changed=signature,
        types_only=signature and old.untyped == new.untyped,
        shape_changed=old.shape != new.shape,
        public=public,
        head=new,
        base=old,
    )


def compare(
    base: Facts | None,
    head: Facts | None,
    *,
    module: str,
    conftest: bool = False,
    interface: bool = True,
    package: bool = False,
) -> FileChange:
    """How a file changed. ``None`` stands for a side where the file does not exist. A file that
    does not parse on either side is ``cross``: its changes cannot be seen, so they are not
    assumed small. ``interface`` is false for tests, which offer no interface to callers;
    a ``package`` (``__init__.py``) also offers the names it imports."""
    for side, facts in (("base", base), ("head", head)):
        if facts is not None and facts.error:
            return FileChange(CROSS, [f"does not parse on the {side} side: {facts.error}"])
    old = base or _EMPTY
    new = head or _EMPTY
    if base is not None and head is not None:
        if old.digest == new.digest:
            return FileChange(COSMETIC, ["formatting or comments only"])
        if old.nodoc == new.nodoc:
            return FileChange(COSMETIC, ["docstrings only"], docstring_only=True)

    changes = [
        c
        for q in sorted(old.symbols.keys() | new.symbols.keys())
        if (c := _symbol_change(q, old.symbols.get(q), new.symbols.get(q), module))
    ]
    if not interface:
        for c in changes:
            c.public = False
    result = FileChange(LOCAL, symbols=changes)
    classes = [LOCAL]
    behaviour = changes
    docstring_edits = [
        q
        for q in old.symbols.keys() & new.symbols.keys()
        if old.symbols[q].digest != new.symbols[q].digest
        and old.symbols[q].nodoc == new.symbols[q].nodoc
    ]
    result.docstring_only = bool(docstring_edits) and not changes
    if package and interface:
        gone = sorted(
            n
            for n in set(old.exports) - set(new.exports)
            if is_public(module, n) and n not in new.symbols
        )
        if gone:
            result.reexports_removed = gone
            classes.append(CONTRACT)
            result.reasons.append(f"re-export removed: {', '.join(gone[:5])}")
    if interface and old.all != new.all:
        result.all_changed = True
        classes.append(CONTRACT)
        result.reasons.append("__all__ changed")
    contract = [c for c in changes if c.contract]
    if contract:
        classes.append(CONTRACT)
        for what, group in (
            ("public symbol removed", [c for c in contract if c.change == REMOVED]),
            ("public signature changed (types-only)", [c for c in contract if c.types_only]),
            (
                "public interface changed",
                [c for c in contract if c.change != REMOVED and not c.types_only],
            ),
        ):
            if group:
                shown = ", ".join(c.qualname for c in group[:5])
                more = f" and {len(group) - 5} more" if len(group) > 5 else ""
                result.reasons.append(f"{what}: {shown}{more}")
    if len(behaviour) > 1:
        classes.append(CROSS)
        result.reasons.append(f"{len(behaviour)} symbols changed")
    if old.toplevel != new.toplevel:
        classes.append(CROSS)
        result.reasons.append("module-level code changed")
    if conftest:
        classes.append(CROSS)
        result.reasons.append("conftest.py changed (fixtures of many tests)")
    if old.imports_set != new.imports_set:
        result.reasons.append("imports changed")
    elif old.imports_ordered != new.imports_ordered:
        result.reasons.append("imports reordered")
    if not changes and classes == [LOCAL] and old.imports_set == new.imports_set:
        # the same plain imports at the top in another order (inside try/if they are
        # module-level code, compared above)
        classes = [COSMETIC]
    if len(behaviour) == 1 and len(classes) == 1:
        result.reasons.append(f"one symbol changed: {behaviour[0].qualname}")
    result.klass = highest(classes)
    return result
