import datetime
import json
import textwrap

import pytest

from freezedebt_ci.errors import InputError
from freezedebt_ci.ledger import diff_ledgers, parse_ledger
from ledger.models import Freeze, FreezeEvent, LedgerVersion
from ledger.sync import LedgerConflict, ledger_sync

PATH = "freeze_ledger.toml"


def freeze_toml(
    freeze_id="FRZ-014",
    *,
    test="tests/test_pricing.py::test_rounding_boundary",
    covers=('"src/pricing/**"',),
    expires="2026-12-04",
    reason="Timeout against the sandbox tax service",
    opened="2026-11-24",
    extra="",
) -> str:
    return textwrap.dedent(f"""
        [[freeze]]
        id = "{freeze_id}"
        test = "{test}"
        covers = [{", ".join(covers)}]
        owner = "team-pricing"
        opened = {opened}
        expires = {expires}
        reason = "{reason}"
        {extra}
        """)


def sync(repository, sha, raw):
    return ledger_sync(repository=repository, sha=sha, raw=raw, path=PATH)


def kinds(result):
    return [(event.kind, event.freeze_id) for event in result.events]


def stored_events(freeze_id):
    return list(FreezeEvent.objects.filter(freeze__freeze_id=freeze_id).order_by("pk"))


def test_first_sync_opens_every_freeze_and_stores_the_version(repository):
    raw = freeze_toml() + freeze_toml("FRZ-020", test="tests/test_net.py::test_fetch")
    result = sync(repository, "a" * 40, raw)

    assert result.created
    assert kinds(result) == [("opened", "FRZ-014"), ("opened", "FRZ-020")]
    version = LedgerVersion.objects.get()
    assert (version.sha, version.path, version.raw) == ("a" * 40, PATH, raw)
    assert version.freezes == [f.as_dict() for f in parse_ledger(raw)]
    row = Freeze.objects.get(freeze_id="FRZ-014")
    assert row.nodeid == "tests/test_pricing.py::test_rounding_boundary"
    assert row.covers == ["src/pricing/**"]
    assert row.expires == datetime.date(2026, 12, 4)
    assert (row.version, row.renewals, row.current) == (1, 0, True)
    assert row.first_version == row.last_version == version
    event = stored_events("FRZ-014")[0]
    assert (event.kind, event.before, event.silent, event.chain) == ("opened", None, False, 0)
    assert event.after["expires"] == "2026-12-04"
    assert event.ledger_version == version


def test_renewal_with_the_same_reason_is_silent_and_counts_the_chain(repository):
    sync(repository, "a" * 40, freeze_toml(expires="2026-12-04"))
    first = sync(repository, "b" * 40, freeze_toml(expires="2026-12-10"))
    second = sync(repository, "c" * 40, freeze_toml(expires="2026-12-16"))

    assert [(e.kind, e.silent, e.chain) for e in first.events] == [("renewed", True, 1)]
    assert [(e.kind, e.silent, e.chain) for e in second.events] == [("renewed", True, 2)]
    row = Freeze.objects.get(freeze_id="FRZ-014")
    assert (row.renewals, row.version, row.expires) == (2, 3, datetime.date(2026, 12, 16))
    assert row.last_version == second.version
    assert row.first_version.sha == "a" * 40
    stored = stored_events("FRZ-014")
    assert [(e.kind, e.silent, e.chain) for e in stored] == [
        ("opened", False, 0),
        ("renewed", True, 1),
        ("renewed", True, 2),
    ]
    assert stored[1].before["expires"] == "2026-12-04"
    assert stored[1].after["expires"] == "2026-12-10"


def test_renewal_with_a_new_reason_is_not_silent(repository):
    sync(repository, "a" * 40, freeze_toml())
    renewed = sync(
        repository,
        "b" * 40,
        freeze_toml(expires="2026-12-10", reason="Timeout: the tax sandbox moved regions"),
    )
    assert [(e.kind, e.silent, e.chain) for e in renewed.events] == [("renewed", False, 1)]


def test_edit_without_a_later_expiry_is_edited_and_keeps_the_chain(repository):
    sync(repository, "a" * 40, freeze_toml())
    sync(repository, "b" * 40, freeze_toml(expires="2026-12-10"))
    edited = sync(
        repository, "c" * 40, freeze_toml(expires="2026-12-10", covers=('"src/pricing/tax.py"',))
    )
    assert [(e.kind, e.chain, e.silent) for e in edited.events] == [("edited", 1, False)]
    row = Freeze.objects.get(freeze_id="FRZ-014")
    assert (row.covers, row.version, row.renewals) == (["src/pricing/tax.py"], 3, 1)


def test_retired_freeze_is_no_longer_current_and_keeps_its_history(repository):
    sync(repository, "a" * 40, freeze_toml() + freeze_toml("FRZ-020"))
    sync(repository, "b" * 40, freeze_toml(expires="2026-12-10") + freeze_toml("FRZ-020"))
    retired = sync(repository, "c" * 40, freeze_toml("FRZ-020"))

    assert [(e.kind, e.freeze_id, e.chain) for e in retired.events] == [("retired", "FRZ-014", 1)]
    row = Freeze.objects.get(freeze_id="FRZ-014")
    assert (row.current, row.version) == (False, 3)
    # "As of the latest ledger that held it": the version before its removal.
    assert row.last_version.sha == "b" * 40
    event = stored_events("FRZ-014")[-1]
    assert (event.kind, event.after) == ("retired", None)
    assert event.before["expires"] == "2026-12-10"
    assert Freeze.objects.get(freeze_id="FRZ-020").last_version == retired.version


def test_freeze_opened_again_after_retirement_starts_a_new_chain(repository):
    sync(repository, "a" * 40, freeze_toml() + freeze_toml("FRZ-020"))
    sync(repository, "b" * 40, freeze_toml(expires="2026-12-10") + freeze_toml("FRZ-020"))
    sync(repository, "c" * 40, freeze_toml("FRZ-020"))
    reopened = sync(repository, "d" * 40, freeze_toml() + freeze_toml("FRZ-020"))

    assert kinds(reopened) == [("opened", "FRZ-014")]
    row = Freeze.objects.get(freeze_id="FRZ-014")
    assert (row.current, row.renewals, row.version) == (True, 0, 4)
    assert row.first_version == reopened.version


def test_events_are_those_of_the_shared_rules(repository):
    old = freeze_toml() + freeze_toml("FRZ-020") + freeze_toml("FRZ-030")
    new = (
        freeze_toml(expires="2026-12-11")
        + freeze_toml("FRZ-020", reason="Connection reset by the tax sandbox")
        + freeze_toml("FRZ-040")
    )
    sync(repository, "a" * 40, old)
    result = sync(repository, "b" * 40, new)
    expected = diff_ledgers(parse_ledger(old), parse_ledger(new))
    assert [e.as_dict() for e in result.events] == [e.as_dict() for e in expected]
    assert kinds(result) == [
        ("renewed", "FRZ-014"),
        ("edited", "FRZ-020"),
        ("retired", "FRZ-030"),
        ("opened", "FRZ-040"),
    ]


def test_unchanged_ledger_for_the_same_commit_stores_nothing_new(repository):
    first = sync(repository, "a" * 40, freeze_toml())
    again = sync(repository, "a" * 40, freeze_toml())
    assert not again.created
    assert again.version == first.version
    assert again.events == []
    assert LedgerVersion.objects.count() == 1
    assert FreezeEvent.objects.count() == 1


def test_other_ledger_for_a_stored_commit_is_a_conflict(repository):
    sync(repository, "a" * 40, freeze_toml())
    with pytest.raises(LedgerConflict) as raised:
        sync(repository, "a" * 40, freeze_toml(expires="2026-12-10"))
    assert raised.value.version.sha == "a" * 40
    assert LedgerVersion.objects.count() == 1
    assert Freeze.objects.get().expires == datetime.date(2026, 12, 4)


def test_same_ledger_at_a_new_commit_is_a_version_without_events(repository):
    sync(repository, "a" * 40, freeze_toml())
    moved = sync(repository, "b" * 40, freeze_toml())
    assert moved.created
    assert moved.events == []
    assert Freeze.objects.get().last_version == moved.version


def test_unreadable_ledger_raises_the_readers_problems_and_stores_nothing(repository):
    sync(repository, "a" * 40, freeze_toml())
    with pytest.raises(InputError) as raised:
        sync(repository, "b" * 40, '[[freeze]]\nid = "FRZ-1"\nexpires = 2026-13-45\n')
    assert raised.value.problems
    assert LedgerVersion.objects.count() == 1
    assert FreezeEvent.objects.count() == 1
    assert Freeze.objects.get().version == 1


def test_ledger_fields_too_long_for_storage_are_input_problems(repository):
    with pytest.raises(InputError) as raised:
        sync(repository, "a" * 40, freeze_toml("FRZ-" + "9" * 300))
    assert "longer than 200 characters" in raised.value.problems[0].message
    assert not LedgerVersion.objects.exists()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("t\u0000", "contains the NUL character"),
        ("t\ud800", "contains text that is not valid Unicode (a lone surrogate)"),
    ],
)
def test_text_the_database_cannot_store_is_refused_before_it_reaches_it(repository, text, why):
    raw = json.dumps([{"id": "FRZ-1", "test": text, "covers": ["src/**"]}])
    with pytest.raises(InputError) as raised:
        sync(repository, "a" * 40, raw)
    assert raised.value.problems[0].message == why
    assert raised.value.problems[0].where == "freeze 'FRZ-1'.test"
    assert not LedgerVersion.objects.exists()


def test_freeze_without_expiry_is_kept_undated_for_the_report_to_flag(repository):
    raw = json.dumps({"tests/test_a.py::test_x": {"covers": ["src/a.py"], "owner": "ana"}})
    result = sync(repository, "a" * 40, raw)
    assert kinds(result) == [("opened", "tests/test_a.py::test_x")]
    row = Freeze.objects.get()
    assert row.expires is None
    assert "expires" in result.version.freezes[0]["missing"]


def test_json_list_ledger_is_synced_like_toml(repository):
    raw = json.dumps(
        [
            {
                "id": "FRZ-014",
                "nodeid": "tests/test_pricing.py::test_rounding_boundary",
                "covers": ["src/pricing/**"],
                "owner": "team-pricing",
                "opened": "2026-11-24",
                "until": "2026-12-04",
                "reason": "Timeout against the sandbox tax service",
            }
        ]
    )
    sync(repository, "a" * 40, freeze_toml())
    # The same freeze in another shape is the same freeze: no event.
    assert sync(repository, "b" * 40, raw).events == []


def test_repositories_have_separate_ledgers(repository):
    from tests.factories import RepositoryFactory

    other = RepositoryFactory()
    sync(repository, "a" * 40, freeze_toml())
    result = sync(other, "a" * 40, freeze_toml())
    assert kinds(result) == [("opened", "FRZ-014")]
    assert Freeze.objects.filter(freeze_id="FRZ-014").count() == 2
