import datetime
from types import SimpleNamespace

import pytest
from django.db import connection

from config.postgresql import base as backend
from config.postgresql.base import MAX_QUERY_PARAMS, DatabaseOperations
from dashboards.models import DebtSnapshot
from tests.concurrency import ON_POSTGRESQL
from tests.factories import RepositoryFactory


def operations(**options):
    return DatabaseOperations(SimpleNamespace(settings_dict={"OPTIONS": options}))


def test_batches_fit_the_parameter_limit_when_bound_on_the_server():
    ops = operations(server_side_binding=True)
    rows = [object()] * 100_000
    assert ops.bulk_batch_size(["a"] * 7, rows) == MAX_QUERY_PARAMS // 14
    assert ops.bulk_batch_size(["pk"], rows) == MAX_QUERY_PARAMS // 2
    assert ops.bulk_batch_size(["a"] * 7, rows[:10]) == 10
    assert ops.bulk_batch_size(["a"] * 70_000, rows) == 1


def test_client_side_binding_keeps_one_batch():
    assert operations().bulk_batch_size(["a"] * 7, [object()] * 100_000) == 100_000


@pytest.mark.skipif(
    not ON_POSTGRESQL or connection.settings_dict["OPTIONS"].get("server_side_binding") is not True,
    reason="the limit is that of PostgreSQL's wire protocol for parameters bound on the server",
)
@pytest.mark.django_db
def test_bulk_update_statements_stay_under_the_limit(monkeypatch):
    # bulk_create passes arrays (UNNEST) on PostgreSQL; bulk_update sends two parameters per row
    # and field, and one more per row. Under a limit of 1,000, 300 rows of 4 fields (2,700
    # parameters) take several statements, each within it.
    monkeypatch.setattr(backend, "MAX_QUERY_PARAMS", 1_000)
    fields = ["active", "expired", "skipped", "patches"]
    repository = RepositoryFactory()
    first = datetime.date(2000, 1, 1)
    snapshots = DebtSnapshot.objects.bulk_create(
        DebtSnapshot(repository=repository, day=first + datetime.timedelta(days=n))
        for n in range(300)
    )
    for snapshot in snapshots:
        for name in fields:
            setattr(snapshot, name, 3)
    sent = []

    def count(execute, sql, params, many, context):
        sent.append(len(params or ()))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        DebtSnapshot.objects.bulk_update(snapshots, fields)
    updates = [n for n in sent if n]
    assert len(updates) > 1
    assert max(updates) <= 1_000
    assert DebtSnapshot.objects.filter(repository=repository, patches=3).count() == 300
