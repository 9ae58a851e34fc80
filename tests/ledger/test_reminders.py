import datetime
import smtplib

import pytest
import time_machine
from django.core import mail
from django.core.management import CommandError, call_command

from ledger.models import DigestClaim, FreezeAction, Owner, ReminderClaim
from ledger.reminders import CLAIM_LEASE, ReminderDeliveryFailed, milestone_for, reminders_send
from ledger.tasks import send_freeze_reminders
from tests.concurrency import at_once, races_need_postgresql
from tests.factories import FreezeFactory, UserFactory

EXPIRES = datetime.date(2026, 11, 30)
UTC = datetime.UTC


def day(text: str) -> datetime.date:
    return datetime.date.fromisoformat(text)


def at(text: str, hour: int = 9) -> datetime.datetime:
    return datetime.datetime.combine(day(text), datetime.time(hour), tzinfo=UTC)


def owner_mails(address: str = "payments@example.com") -> list[mail.EmailMessage]:
    return [message for message in mail.outbox if message.to == [address]]


def wording(message: mail.EmailMessage) -> str:
    """ "[Freeze Debt] repo-1: freeze FRZ-001 expires today" -> "expires today"."""
    return message.subject.split(" ", 5)[-1]


def digests() -> list[mail.EmailMessage]:
    return [message for message in mail.outbox if "Digest" in message.subject]


@pytest.fixture
def lead(db):
    """A lead: staff with an address, so they get the digest and the owners' replies."""
    return UserFactory(username="lead", email="lead@example.com", is_staff=True)


@pytest.fixture
def payments(db) -> Owner:
    return Owner.objects.create(
        handle="team-payments", name="Payments", email="payments@example.com", is_team=True
    )


@pytest.fixture
def freeze(db, payments):
    return FreezeFactory(owner="team-payments", expires=EXPIRES)


# --- milestones ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("today", "expected"),
    [
        ("2026-11-22", None),
        ("2026-11-23", "d7"),
        ("2026-11-26", "d7"),
        ("2026-11-27", "d3"),
        ("2026-11-28", "d3"),
        ("2026-11-29", "d1"),
        ("2026-11-30", "d0"),
        ("2026-12-01", "expired:2026-12-01"),
        ("2026-12-09", "expired:2026-12-09"),
    ],
)
def test_latest_due_milestone_by_days_left(today, expected):
    assert milestone_for(expires=EXPIRES, today=day(today)) == expected


@pytest.mark.parametrize(
    ("today", "milestone", "subject_end"),
    [
        ("2026-11-23", "d7", "expires in 7 days"),
        ("2026-11-27", "d3", "expires in 3 days"),
        ("2026-11-29", "d1", "expires tomorrow"),
        ("2026-11-30", "d0", "expires today"),
        ("2026-12-01", "expired:2026-12-01", "expired yesterday"),
        ("2026-12-04", "expired:2026-12-04", "expired 4 days ago"),
    ],
)
def test_each_milestone_mails_the_owner_once_from_the_beat_task(
    freeze, today, milestone, subject_end
):
    with time_machine.travel(at(today), tick=False):
        send_freeze_reminders.delay()

    [message] = owner_mails()
    assert message.subject.endswith(f"freeze {freeze.freeze_id} {subject_end}")
    assert freeze.freeze_id in message.subject
    claim = ReminderClaim.objects.get()
    assert (claim.freeze, claim.freeze_version, claim.milestone) == (freeze, 1, milestone)
    assert claim.recipient == "payments@example.com"
    assert claim.sent_at is not None
    assert claim.attempts == 1


def test_no_reminder_more_than_seven_days_before_expiry(freeze):
    with time_machine.travel(at("2026-11-22"), tick=False):
        send_freeze_reminders.delay()
    assert mail.outbox == []
    assert not ReminderClaim.objects.exists()


def test_running_again_sends_nothing_new(freeze, lead):
    first = reminders_send(today=day("2026-11-27"))
    assert (first.reminders_sent, first.digests_sent) == (1, 1)
    sent = len(mail.outbox)

    again = reminders_send(today=day("2026-11-27"))
    assert len(mail.outbox) == sent
    assert (again.reminders_sent, again.digests_sent) == (0, 0)
    assert again.already_claimed == 2

    # The 3-day reminder is still the latest due the next day: only the day's digest goes out.
    next_day = reminders_send(today=day("2026-11-28"))
    assert (next_day.reminders_sent, next_day.digests_sent) == (0, 1)
    assert ReminderClaim.objects.count() == 1


def test_an_hourly_run_after_the_sends_tries_no_claim_again(freeze, lead):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    reminders_send(today=day("2026-11-27"))
    with CaptureQueriesContext(connection) as queries:
        again = reminders_send(today=day("2026-11-27"))
    assert again.already_claimed == 2
    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("INSERT")]
    assert inserts == []  # neither claim is attempted (and refused) again


def test_the_command_sends_for_the_given_day_and_nothing_when_run_again(freeze, lead, capsys):
    call_command("send_freeze_reminders", "--today", "2026-11-29")
    call_command("send_freeze_reminders", "--today", "2026-11-29")

    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("2026-11-29: sent 1 reminder(s) and 1 digest(s)")
    assert out[1].startswith("2026-11-29: sent 0 reminder(s) and 0 digest(s); 2 already sent")
    assert ReminderClaim.objects.get().milestone == "d1"


def test_the_command_refuses_a_day_that_is_not_a_date(db):
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        call_command("send_freeze_reminders", "--today", "next tuesday")


def test_an_expired_freeze_gets_one_reminder_a_day(freeze):
    for today in ["2026-12-01", "2026-12-01", "2026-12-02", "2026-12-03"]:
        reminders_send(today=day(today))

    assert [wording(m) for m in owner_mails()] == [
        "expired yesterday",
        "expired 2 days ago",
        "expired 3 days ago",
    ]
    assert sorted(ReminderClaim.objects.values_list("milestone", flat=True)) == [
        "expired:2026-12-01",
        "expired:2026-12-02",
        "expired:2026-12-03",
    ]


# --- catch-up after missed days -----------------------------------------------------------


def test_catch_up_after_missed_days_sends_only_the_latest_milestone(freeze):
    # Beat was down from seven to three days before expiry.
    reminders_send(today=day("2026-11-27"))
    reminders_send(today=day("2026-11-28"))

    [message] = owner_mails()
    assert "expires in 3 days" in message.subject
    assert list(ReminderClaim.objects.values_list("milestone", flat=True)) == ["d3"]


def test_catch_up_across_expiry_sends_one_expired_reminder(freeze):
    reminders_send(today=day("2026-11-23"))
    # Down from the 3-day reminder until two days after expiry: d3, d1, d0 and day 1 missed.
    reminders_send(today=day("2026-12-02"))

    assert [wording(m) for m in owner_mails()] == [
        "expires in 7 days",
        "expired 2 days ago",
    ]


def test_a_renewed_freeze_is_reminded_again_for_its_new_version(freeze):
    reminders_send(today=day("2026-11-29"))
    # A ledger sync changed the freeze (same expiry here): the old links and claims are done.
    freeze.version = 2
    freeze.save()
    reminders_send(today=day("2026-11-29"))

    assert len(owner_mails()) == 2
    assert sorted(ReminderClaim.objects.values_list("freeze_version", flat=True)) == [1, 2]


def test_retired_and_undated_freezes_get_no_reminder(payments):
    FreezeFactory(owner="team-payments", expires=EXPIRES, current=False)
    FreezeFactory(owner="team-payments", expires=None)
    reminders_send(today=day("2026-11-30"))
    assert mail.outbox == []


# --- owners -------------------------------------------------------------------------------


def test_an_address_in_the_ledger_is_its_own_owner(db):
    FreezeFactory(owner="alice@example.com", expires=EXPIRES)
    reminders_send(today=day("2026-11-30"))
    [message] = mail.outbox
    assert message.to == ["alice@example.com"]


def test_the_directory_routes_an_address_handle_elsewhere(db):
    Owner.objects.create(handle="alice@example.com", email="alice.team@example.com")
    FreezeFactory(owner="alice@example.com", expires=EXPIRES)
    reminders_send(today=day("2026-11-30"))
    assert [message.to for message in mail.outbox] == [["alice.team@example.com"]]


def test_an_unowned_freeze_is_not_mailed_but_listed_in_the_digest(lead):
    FreezeFactory(freeze_id="FRZ-ORPHAN", owner="team-gone", expires=EXPIRES)
    run = reminders_send(today=day("2026-11-29"))

    assert run.unowned == 1
    assert run.reminders_sent == 0
    [digest] = mail.outbox
    assert digest.to == ["lead@example.com"]
    assert 'FRZ-ORPHAN: unowned freeze, owner "team-gone"' in digest.body
    assert "(unowned freeze)" in digest.body
    assert not ReminderClaim.objects.exists()


# --- the lead digest ----------------------------------------------------------------------


def test_one_digest_a_day_to_each_lead_with_an_address(freeze):
    UserFactory(username="lead", email="lead@example.com", is_staff=True)
    UserFactory(username="lead2", email="LEAD@example.com", is_staff=True)  # same mailbox
    UserFactory(username="noaddress", email="", is_staff=True)
    UserFactory(username="gone", email="gone@example.com", is_staff=True, is_active=False)
    UserFactory(username="member", email="member@example.com")

    for _ in range(3):
        reminders_send(today=day("2026-11-27"))
    reminders_send(today=day("2026-11-28"))

    assert [(m.to, m.subject[:30]) for m in digests()] == [
        (["LEAD@example.com"], "[Freeze Debt] Digest 2026-11-2"),
        (["LEAD@example.com"], "[Freeze Debt] Digest 2026-11-2"),
    ]
    assert sorted(DigestClaim.objects.values_list("day", flat=True)) == [
        day("2026-11-27"),
        day("2026-11-28"),
    ]


def test_the_digest_lists_expired_expiring_and_unacknowledged_freezes(payments, lead):
    FreezeFactory(freeze_id="FRZ-OLD", owner="team-payments", expires=day("2026-11-20"))
    acknowledged = FreezeFactory(freeze_id="FRZ-SOON", owner="team-payments", expires=EXPIRES)
    FreezeFactory(freeze_id="FRZ-LATER", owner="team-payments", expires=day("2026-12-31"))
    FreezeAction.objects.create(
        freeze=acknowledged,
        freeze_version=1,
        owner_email="payments@example.com",
        action=FreezeAction.Action.ACKNOWLEDGE,
        nonce="n1",
    )
    reminders_send(today=day("2026-11-28"))

    [digest] = digests()
    assert digest.subject == (
        "[Freeze Debt] Digest 2026-11-28: 1 expired, 1 expiring, 1 unacknowledged"
    )
    expired, expiring = digest.body.split("Expiring within 7 days")
    assert "FRZ-OLD: expired 8 days ago; owner team-payments; unacknowledged" in expired
    assert (
        "FRZ-SOON: expires in 2 days; owner team-payments; acknowledged (I am on it) by "
        "payments@example.com" in expiring
    )
    assert "FRZ-LATER" not in digest.body


def test_no_digest_on_a_day_with_nothing_to_report(lead):
    FreezeFactory(owner="alice@example.com", expires=day("2026-12-31"))
    reminders_send(today=day("2026-11-28"))
    assert mail.outbox == []
    assert not DigestClaim.objects.exists()


# --- failures and retries -----------------------------------------------------------------


class FlakyBackend:
    """Refuses the first ``failures`` messages, then delivers to the test outbox."""

    failures = 0

    def __init__(self, *args, **kwargs):
        pass

    def send_messages(self, messages):
        if FlakyBackend.failures:
            FlakyBackend.failures -= 1
            raise smtplib.SMTPServerDisconnected("connection unexpectedly closed")
        mail.outbox.extend(messages)
        return len(messages)

    def open(self):
        return True

    def close(self):
        pass


@pytest.fixture
def flaky(settings):
    settings.EMAIL_BACKEND = "tests.ledger.test_reminders.FlakyBackend"
    FlakyBackend.failures = 0
    return FlakyBackend


def test_a_failed_send_raises_and_the_next_run_sends_it_on_the_same_claim(freeze, flaky):
    flaky.failures = 1
    with pytest.raises(ReminderDeliveryFailed, match="d1 reminder of") as failure:
        reminders_send(today=day("2026-11-29"))

    assert failure.value.run.failed == [f"d1 reminder of {freeze.repository.slug}/{freeze}"]
    claim = ReminderClaim.objects.get()
    assert claim.sent_at is None
    assert claim.failed_at is not None
    assert mail.outbox == []

    reminders_send(today=day("2026-11-29"))
    reminders_send(today=day("2026-11-29"))

    assert len(owner_mails()) == 1
    claim = ReminderClaim.objects.get()
    assert claim.sent_at is not None
    assert claim.failed_at is None
    assert claim.attempts == 2


def test_one_failed_send_does_not_hold_back_the_others(payments, flaky):
    FreezeFactory(freeze_id="FRZ-A", owner="team-payments", expires=EXPIRES)
    FreezeFactory(freeze_id="FRZ-B", owner="team-payments", expires=EXPIRES)
    flaky.failures = 1
    with pytest.raises(ReminderDeliveryFailed):
        reminders_send(today=day("2026-11-30"))

    assert len(mail.outbox) == 1
    assert ReminderClaim.objects.filter(sent_at__isnull=True).count() == 1


@pytest.fixture
def eager_retries():
    # Eager tasks re-raise by default here; let apply() run the retries as a worker would.
    conf = send_freeze_reminders.app.conf
    propagates = conf.task_eager_propagates
    conf.task_eager_propagates = False
    yield
    conf.task_eager_propagates = propagates


def test_the_beat_task_retries_a_failed_send_without_duplicating_it(freeze, flaky, eager_retries):
    flaky.failures = 2
    with time_machine.travel(at("2026-11-30"), tick=False):
        result = send_freeze_reminders.apply()

    assert result.get() == {"reminders": 1, "digests": 0}

    assert len(owner_mails()) == 1
    assert ReminderClaim.objects.get().attempts == 3


def test_a_claim_abandoned_mid_send_waits_for_its_lease(freeze):
    # A worker died after claiming: no sent_at, no failure recorded.
    with time_machine.travel(at("2026-11-30", hour=8), tick=False):
        ReminderClaim.objects.create(
            freeze=freeze, freeze_version=1, milestone="d0", recipient="payments@example.com"
        )
    with time_machine.travel(at("2026-11-30", hour=8) + CLAIM_LEASE / 2, tick=False):
        reminders_send(today=day("2026-11-30"))
    assert mail.outbox == []

    with time_machine.travel(at("2026-11-30", hour=8) + CLAIM_LEASE * 2, tick=False):
        reminders_send(today=day("2026-11-30"))
    assert len(owner_mails()) == 1
    assert ReminderClaim.objects.get().attempts == 2


# --- concurrency --------------------------------------------------------------------------


@races_need_postgresql("concurrent reminder runs")
@pytest.mark.django_db(transaction=True)
def test_concurrent_runs_send_each_reminder_and_digest_once():
    Owner.objects.create(handle="team-payments", email="payments@example.com")
    UserFactory(username="lead", email="lead@example.com", is_staff=True)
    for number in range(5):
        FreezeFactory(freeze_id=f"FRZ-{number}", owner="team-payments", expires=EXPIRES)
    at_once(*[lambda: reminders_send(today=day("2026-11-29"))] * 8)

    assert len(owner_mails()) == 5
    assert len(digests()) == 1
    assert ReminderClaim.objects.filter(sent_at__isnull=False).count() == 5
    assert DigestClaim.objects.get().sent_at is not None
