"""Django's PostgreSQL backend with one change: batches of rows sized for parameters bound on
the server.

With ``server_side_binding`` (the default of ``config.dsn``), a statement takes at most 65,535
parameters, a limit of the wire protocol; Django's backend sizes ``bulk_create``,
``bulk_update`` and the batches of a cascading delete for client-side binding, which has none,
and would send a statement PostgreSQL refuses once rows x columns pass it.
"""

from django.db.backends.postgresql import base, operations

MAX_QUERY_PARAMS = 65_535


class DatabaseOperations(operations.DatabaseOperations):
    def bulk_batch_size(self, fields, objs):
        """Rows per statement. Two parameters per field and row: ``bulk_update`` names its
        fields and the primary key twice, but sends ``WHEN pk = %s THEN %s`` for each field
        and row, and the primary key once more."""
        if self.connection.settings_dict["OPTIONS"].get("server_side_binding") is not True:
            return super().bulk_batch_size(fields, objs)
        return max(1, min(len(objs), MAX_QUERY_PARAMS // (2 * max(1, len(fields)))))


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
