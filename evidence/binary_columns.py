"""Binary columns written from a binary parameter on PostgreSQL (the stored upload of a run,
its packed outcomes)."""

from django.db import connection
from django.db.models import Field
from psycopg import Cursor

from evidence.models import Run, RunOutcomes


def write_bytes(model: type[Run] | type[RunOutcomes], pk: int, field: str, data: bytes) -> None:
    """Set a binary column of one stored row, on PostgreSQL, from a binary parameter.

    Django binds parameters on the client: a bytes value becomes a hex literal twice its size
    that the server then parses, several times slower than sending the bytes as they are for
    the MiBs of an upload. Runs in the current transaction, on Django's connection.
    """
    quote = connection.ops.quote_name
    column = model._meta.get_field(field)
    key = model._meta.pk
    if not isinstance(column, Field) or key is None:
        raise TypeError(f"{model.__name__}.{field} is not a column")
    sql = (
        f"UPDATE {quote(model._meta.db_table)} SET {quote(column.column)} = %b "  # noqa: S608
        f"WHERE {quote(key.column)} = %s"
    )
    connection.ensure_connection()
    with Cursor(connection.connection) as cursor:
        cursor.execute(sql, [data, pk])
        if cursor.rowcount != 1:
            raise RuntimeError(f"{model.__name__} {pk}: {cursor.rowcount} rows hold its {field}")
