import datetime

import pytest
from django.db import IntegrityError, transaction

from ledger.models import Freeze, FreezeEvent, LedgerVersion, Policy
from tests.factories import (
    FreezeEventFactory,
    FreezeFactory,
    LedgerVersionFactory,
    RepositoryFactory,
)

TODAY = datetime.date(2026, 11, 30)


def test_one_ledger_version_per_repository_and_sha(db):
    version = LedgerVersionFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerVersionFactory(repository=version.repository, sha=version.sha)
    LedgerVersionFactory(sha=version.sha)  # another repository


def test_latest_ledger_version_is_the_last_synced(db):
    repository = RepositoryFactory()
    LedgerVersionFactory(repository=repository)
    last = LedgerVersionFactory(repository=repository)
    assert LedgerVersion.objects.latest_for(repository) == last
    assert LedgerVersion.objects.latest_for(RepositoryFactory()) is None


def test_freeze_id_is_unique_per_repository(db):
    freeze = FreezeFactory(freeze_id="FRZ-014")
    with pytest.raises(IntegrityError), transaction.atomic():
        FreezeFactory(
            repository=freeze.repository,
            freeze_id="FRZ-014",
            first_version=freeze.first_version,
        )
    FreezeFactory(freeze_id="FRZ-014")  # another repository


def test_freeze_version_counts_from_one(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        FreezeFactory(version=0)


def test_freeze_is_active_through_its_expiry_day_inclusive(db):
    freeze = FreezeFactory(expires=TODAY)
    assert list(Freeze.objects.active_on(TODAY)) == [freeze]
    assert not Freeze.objects.expired_on(TODAY).exists()
    tomorrow = TODAY + datetime.timedelta(days=1)
    assert not Freeze.objects.active_on(tomorrow).exists()
    assert list(Freeze.objects.expired_on(tomorrow)) == [freeze]


def test_retired_freezes_are_neither_active_nor_expired(db):
    FreezeFactory(expires=TODAY + datetime.timedelta(days=3), current=False)
    FreezeFactory(expires=TODAY - datetime.timedelta(days=3), current=False)
    assert not Freeze.objects.active_on(TODAY).exists()
    assert not Freeze.objects.expired_on(TODAY).exists()


def test_ledger_history_cannot_be_deleted_from_under_a_freeze(db):
    freeze = FreezeFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        freeze.first_version.delete()


def test_freeze_event_is_recorded_once_per_version_and_kind(db):
    event = FreezeEventFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        FreezeEventFactory(freeze=event.freeze, ledger_version=event.ledger_version)


@pytest.mark.parametrize("kind", ["opened", "retired", "edited"])
def test_only_a_renewal_can_be_silent(db, kind):
    snapshots = {"opened": (None, {}), "retired": ({}, None), "edited": ({}, {})}[kind]
    before, after = snapshots
    with pytest.raises(IntegrityError), transaction.atomic():
        FreezeEventFactory(kind=kind, silent=True, before=before, after=after)


def test_a_silent_renewal_is_stored(db):
    event = FreezeEventFactory(
        kind=FreezeEvent.Kind.RENEWED, silent=True, chain=2, before={"e": 1}, after={"e": 2}
    )
    assert event.silent


@pytest.mark.parametrize(
    ("kind", "before", "after"),
    [
        ("opened", {"expires": "x"}, {"expires": "y"}),
        ("opened", None, None),
        ("retired", None, None),
        ("retired", {"expires": "x"}, {"expires": "y"}),
        ("renewed", None, {"expires": "y"}),
        ("edited", {"expires": "x"}, None),
        ("thawed", {"expires": "x"}, {"expires": "y"}),
    ],
)
def test_event_snapshots_must_match_its_kind(db, kind, before, after):
    with pytest.raises(IntegrityError), transaction.atomic():
        FreezeEventFactory(kind=kind, before=before, after=after)


def test_policy_defaults_match_the_contract(repository):
    policy = Policy.objects.get(repository=repository)
    assert policy.severities == {}
    assert policy.max_freeze_days == 14
    assert policy.fixture_paths == ["tests/fixtures/**", "tests/factories/**", "**/conftest.py"]
    assert policy.ledger_path == "freeze_ledger.toml"


@pytest.mark.parametrize(("field", "value"), [("max_freeze_days", 0), ("ledger_path", "")])
def test_policy_invariants_hold_in_the_database(repository, field, value):
    with pytest.raises(IntegrityError), transaction.atomic():
        Policy.objects.filter(repository=repository).update(**{field: value})


def test_one_policy_per_repository(repository):
    with pytest.raises(IntegrityError), transaction.atomic():
        Policy.objects.create(repository=repository)
