"""Reads written in SQL, for the few that a page runs on every request.

Building a query with the ORM cost the repository page more than running it (bench_pages
measures it). A ``Read`` holds its SQL, written once in what SQLite and PostgreSQL
share, and the model field behind each column it selects, whose converters (the ORM's own,
for the connection's backend) give each value as the ORM would have: dates, aware datetimes,
booleans, decoded JSON. Only reads already limited to what the user may see belong here (a
repository's rows, by its id): who sees what stays in the ORM's querysets.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from django.db import connection
from django.db.models import DEFERRED, Field, Model

Converter = tuple[int, Any, list[Callable[..., Any]]]


# How a Read's SQL tests membership in a list passed as one parameter (a Python list).
ANY = "= ANY(%s)"


def in_lists(sql: str, params: Sequence[Any]) -> tuple[str, list[Any]]:
    """``sql`` and ``params`` with each ``= ANY(%s)`` of a list written ``IN (%s, …)`` with its
    values, for a backend without arrays (SQLite). An empty list matches nothing, as ``ANY`` of
    an empty array does."""
    parts = sql.split("%s")
    if len(parts) != len(params) + 1:
        raise ValueError(f"{len(parts) - 1} placeholders for {len(params)} parameters")
    text, flat = [parts[0]], []
    for value, after in zip(params, parts[1:], strict=True):
        if isinstance(value, list):
            if not (text[-1].endswith("= ANY(") and after.startswith(")")):
                raise ValueError(f"a list parameter goes in {ANY}, not after {text[-1]!r}")
            text[-1] = text[-1].removesuffix("= ANY(") + "IN ("
            text.append(", ".join(["%s"] * len(value)))
            flat.extend(value)
        elif text[-1].endswith("= ANY("):
            raise ValueError(f"{ANY} takes a list, not {type(value).__name__}")
        else:
            text.append("%s")
            flat.append(value)
        text.append(after)
    return "".join(text), flat


def fields(model: type[Model], *names: str) -> list[tuple[str, Field]]:
    """(name, field) of these fields of ``model``, as a ``Read`` names its columns (a foreign
    key by its attname, ``repository_id``, or its name)."""
    return [(name, cast(Field, model._meta.get_field(name))) for name in names]


@contextlib.contextmanager
def _unprepared(psycopg_connection: Any) -> Iterator[None]:
    """Statements run meanwhile are neither prepared nor counted towards being prepared."""
    threshold = psycopg_connection.prepare_threshold
    psycopg_connection.prepare_threshold = None
    try:
        yield
    finally:
        psycopg_connection.prepare_threshold = threshold


class Read:
    """A SELECT and the field of each of its columns, in order (None: no conversion, as for a
    count or a text column).

    A list among a run's parameters is tested with ``column = ANY(%s)``. PostgreSQL takes it
    as one array: one statement (and one prepared plan) whatever the list's length, and a plan
    that does not build the array again for each row it filters, as ``IN ($1, $2, …)`` does
    in a prepared statement's generic plan. Other backends get ``IN (%s, …)``.

    ``replan``: PostgreSQL plans the read for its parameters on every run, rather than
    preparing it. For reads whose best plan depends on them, such as a range of days: a
    prepared statement's generic plan assumes that a range holds few rows, and sorts a year of
    snapshots where a plan for the real range does not.
    """

    def __init__(
        self,
        sql: str,
        columns: Sequence[tuple[str, Field | None]],
        *,
        tables: Mapping[str, type[Model]] | None = None,
        replan: bool = False,
    ) -> None:
        # Table names come from the models: ``{Freeze}`` in the text is Freeze's db_table.
        self.sql = sql.format(
            **{name: model._meta.db_table for name, model in (tables or {}).items()}
        )
        self.replan = replan
        self.names = tuple(name for name, _ in columns)
        self.fields = tuple(field for _, field in columns)
        self._converters: dict[str, list[Converter]] = {}

    @classmethod
    def of(cls, model: type[Model], rest: str) -> Read:
        """Every column of ``model``'s table, then ``rest`` (``WHERE …``): its instances whole."""
        concrete = model._meta.concrete_fields
        columns = ", ".join(f'"{field.column}"' for field in concrete)
        return cls(
            f"SELECT {columns} FROM {model._meta.db_table} {rest}",  # noqa: S608 - our names
            [(field.attname, field) for field in concrete],
        )

    def _converters_now(self) -> list[Converter]:
        """Per column, the converters the ORM applies to it on this backend (cached)."""
        vendor = connection.vendor
        found = self._converters.get(vendor)
        if found is None:
            found = []
            for index, field in enumerate(self.fields):
                if field is None:
                    continue
                column = field.get_col(field.model._meta.db_table)
                functions = connection.ops.get_db_converters(column) + column.get_db_converters(
                    connection
                )
                if functions:
                    found.append((index, column, functions))
            self._converters[vendor] = found
        return found

    def values(self, params: Sequence[Any] = ()) -> list[list[Any]]:
        """Each row's values, converted."""
        sql = self.sql
        if connection.vendor != "postgresql" and ANY in sql:
            sql, params = in_lists(sql, params)
        with connection.cursor() as cursor:
            if self.replan and connection.vendor == "postgresql":
                with _unprepared(connection.connection):
                    cursor.execute(sql, params)
            else:
                cursor.execute(sql, params)
            rows = [list(row) for row in cursor.fetchall()]
        for index, column, functions in self._converters_now():
            for row in rows:
                value = row[index]
                for function in functions:
                    value = function(value, column, connection)
                row[index] = value
        return rows

    def rows(self, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Each row as a dict keyed by the column names."""
        names = self.names
        return [dict(zip(names, row, strict=True)) for row in self.values(params)]

    def instances(self, model: type[Model], params: Sequence[Any] = ()) -> list[Any]:
        """Each row as an instance of ``model``; the column names are attnames of its fields,
        in any order, and the fields not selected are deferred."""
        position = {name: index for index, name in enumerate(self.names)}
        order = [position.get(field.attname) for field in model._meta.concrete_fields]
        database = connection.alias
        return [
            model.from_db(
                database,
                self.names,
                [DEFERRED if index is None else row[index] for index in order],
            )
            for row in self.values(params)
        ]
