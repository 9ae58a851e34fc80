"""Errors raised by the readers: each one says which input, where in it, and what was wrong."""

from __future__ import annotations

from dataclasses import dataclass

#: At most this many problems are collected from one input before reading stops.
MAX_PROBLEMS = 50


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input: ``where`` is a JSON path (``$.records[3].outcome``),
    a line (``line 12``) or a field name; ``message`` says what was expected."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message

    def as_dict(self) -> dict[str, str]:
        return {"path": self.where, "message": self.message}


class InputError(ValueError):
    """An input that cannot be read. ``problems`` holds at most :data:`MAX_PROBLEMS` entries."""

    def __init__(self, source: str, problems: list[Problem]) -> None:
        self.source = source
        self.problems = problems[:MAX_PROBLEMS]
        super().__init__(self.describe())

    @classmethod
    def single(cls, source: str, where: str, message: str) -> InputError:
        return cls(source, [Problem(where, message)])

    def describe(self) -> str:
        lines = [f"{self.source}: {p}" for p in self.problems]
        return "\n".join(lines) if lines else f"{self.source}: unreadable input"


class ProblemCollector:
    """Gathers problems while a reader goes on, so one pass reports many of them."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []

    def add(self, where: str, message: str) -> None:
        if len(self.problems) >= MAX_PROBLEMS:
            raise InputError(self.source, self.problems)
        self.problems.append(Problem(where, message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise InputError(self.source, self.problems)
