import datetime

import pytest
from django.db import connection

from ledger.models import Freeze, FreezeEvent
from sqlreads import Read, fields, in_lists
from tests.factories import FreezeEventFactory, FreezeFactory

pytestmark = pytest.mark.django_db

AT = datetime.datetime(2026, 11, 30, 8, 15, tzinfo=datetime.UTC)


def test_values_come_back_as_the_orm_gives_them():
    freeze = FreezeFactory(
        expires=datetime.date(2026, 12, 4), covers=["src/pricing/**"], allowed_in_merge=True
    )
    read = Read(
        "SELECT expires, covers, allowed_in_merge, created_at, freeze_id FROM ledger_freeze"
        " WHERE id = %s",
        [
            *fields(Freeze, "expires", "covers", "allowed_in_merge", "created_at"),
            ("freeze_id", None),
        ],
    )
    Freeze.objects.filter(pk=freeze.pk).update(created_at=AT)
    orm = Freeze.objects.values("expires", "covers", "allowed_in_merge", "created_at").get(
        pk=freeze.pk
    )
    (row,) = read.rows([freeze.pk])
    assert row == {**orm, "freeze_id": freeze.freeze_id}
    # Of the right types on either backend: SQLite stores text and integers.
    assert type(row["expires"]) is datetime.date
    assert row["covers"] == ["src/pricing/**"]
    assert row["allowed_in_merge"] is True
    assert row["created_at"] == AT and row["created_at"].tzinfo is not None


def test_instances_take_columns_in_any_order_and_defer_the_rest():
    freeze = FreezeFactory(freeze_id="FRZ-9", version=3)
    read = Read(
        "SELECT version, freeze_id, id FROM ledger_freeze WHERE id = %s",
        fields(Freeze, "version", "freeze_id", "id"),
    )
    (instance,) = read.instances(Freeze, [freeze.pk])
    assert (instance.pk, instance.freeze_id, instance.version) == (freeze.pk, "FRZ-9", 3)
    assert {"reason", "expires"} <= instance.get_deferred_fields()
    assert instance.reason == freeze.reason  # a deferred field loads on access, as in the ORM


def test_foreign_keys_are_named_by_their_attname():
    event = FreezeEventFactory()
    read = Read(
        "SELECT freeze_id, silent FROM ledger_freezeevent WHERE id = %s",
        fields(FreezeEvent, "freeze_id", "silent"),
    )
    assert read.rows([event.pk]) == [{"freeze_id": event.freeze_id, "silent": False}]


def test_a_list_parameter_is_tested_with_any_whatever_its_length():
    first, second, third = FreezeFactory(), FreezeFactory(), FreezeFactory()
    read = Read(
        "SELECT id FROM ledger_freeze WHERE id = ANY(%s) AND id <> %s ORDER BY id", [("id", None)]
    )
    assert read.values([[first.pk, second.pk, third.pk], second.pk]) == [[first.pk], [third.pk]]
    assert read.values([[first.pk], 0]) == [[first.pk]]
    assert read.values([[], 0]) == []


def test_lists_are_written_as_in_lists_for_a_backend_without_arrays():
    sql, params = in_lists(
        "SELECT 1 WHERE a = %s AND b = ANY(%s) AND c = ANY(%s) AND d = %s",
        [1, [2, 3], [], 4],
    )
    assert sql == "SELECT 1 WHERE a = %s AND b IN (%s, %s) AND c IN () AND d = %s"
    assert params == [1, 2, 3, 4]


def test_a_list_parameter_anywhere_but_in_any_is_refused():
    with pytest.raises(ValueError, match="goes in = ANY"):
        in_lists("SELECT 1 WHERE b IN (%s)", [[2, 3]])
    with pytest.raises(ValueError, match="takes a list, not int"):
        in_lists("SELECT 1 WHERE b = ANY(%s)", [2])
    with pytest.raises(ValueError, match="2 placeholders for 1 parameters"):
        in_lists("SELECT 1 WHERE a = %s AND b = %s", [1])


def test_a_read_of_a_model_gives_its_instances_whole():
    freeze = FreezeFactory(covers=["src/**"], expires=datetime.date(2026, 12, 4), version=2)
    read = Read.of(Freeze, 'WHERE "current" = %s AND id = %s')
    (instance,) = read.instances(Freeze, [True, freeze.pk])
    assert instance.get_deferred_fields() == set()
    assert instance == freeze
    assert (instance.covers, instance.expires, instance.version, instance.current) == (
        ["src/**"],
        datetime.date(2026, 12, 4),
        2,
        True,
    )
    assert read.instances(Freeze, [False, freeze.pk]) == []


OPTIONS = connection.settings_dict["OPTIONS"]
# DATABASE_URL's default on PostgreSQL; ?server_side_binding=false or ?prepare_threshold=none
# prepare nothing.
PREPARES = (
    connection.vendor == "postgresql"
    and OPTIONS.get("server_side_binding") is True
    and OPTIONS.get("prepare_threshold") is not None
)


@pytest.mark.skipif(not PREPARES, reason="a connection that prepares statements")
def test_a_replanned_read_is_never_prepared_and_others_are():
    FreezeFactory()
    kept = Read("SELECT count(*) FROM ledger_freeze WHERE id > %s", [("count", None)])
    replanned = Read(
        "SELECT count(*) FROM ledger_freeze WHERE id >= %s", [("count", None)], replan=True
    )
    for _ in range(8):
        assert kept.values([0]) == replanned.values([0]) == [[1]]

    def prepared(text: str) -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                [f"%{text}%"],
            )
            return cursor.fetchone()[0] > 0

    assert prepared("WHERE id > $1")
    assert not prepared("WHERE id >= $1")
    assert connection.connection.prepare_threshold == OPTIONS["prepare_threshold"]  # as it was
