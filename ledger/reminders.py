"""Reminder e-mails to freeze owners and the daily lead digest (section 8).

Exactly once comes from the database: each e-mail is claimed by inserting a row under a unique
constraint before it is sent, and only the run that inserted it (or, after a failed send, the
run that takes the failed claim back with a conditional UPDATE) sends it. A claim whose send
failed keeps ``sent_at`` null and ``failed_at`` set, so the task's retry or the next run sends
it again on the same row instead of adding one.

What this cannot rule out: a worker killed after the mail server accepted a message but before
``sent_at`` was written. That claim is taken back once its lease is over, and the owner gets the
reminder twice; losing it instead would be worse.
"""

import datetime
import logging
import smtplib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from evidence.teams import staff_addresses, team_lead_addresses
from freezedebt_ci.ledger import expiry_status
from ledger.emails import Digest, DigestRow, days_left_text, digest_message, reminder_message
from ledger.models import Claim, DigestClaim, Freeze, ReminderClaim
from ledger.owners import ResolvedOwner, owners_resolve
from ledger.selectors import latest_actions, open_renewal_requests

logger = logging.getLogger(__name__)

C = TypeVar("C", bound=Claim)

# Days before expiry that get a reminder; the expiry day and every day after it get one too.
MILESTONE_DAYS = (1, 3, 7)
# A claim still unsent this long after it was taken belongs to a worker that died mid-send.
CLAIM_LEASE = datetime.timedelta(minutes=15)
# What a mail server or the network does now and then; anything else is a bug and surfaces.
TRANSIENT_SEND_ERRORS = (smtplib.SMTPException, OSError)


def milestone_for(*, expires: datetime.date, today: datetime.date) -> str | None:
    """The latest reminder due on ``today``, or None when none is due yet.

    Only the latest: after missed days (beat down from 7 to 3 days before expiry) the next run
    sends the 3-day reminder alone, and the 7-day one is never due again.
    """
    days_left = (expires - today).days
    if days_left < 0:
        return f"expired:{today.isoformat()}"
    if days_left == 0:
        return "d0"
    for days in MILESTONE_DAYS:
        if days_left <= days:
            return f"d{days}"
    return None


@dataclass
class ReminderRun:
    today: datetime.date
    reminders_sent: int = 0
    digests_sent: int = 0
    already_claimed: int = 0
    unowned: int = 0
    failed: list[str] = field(default_factory=list)


class ReminderDeliveryFailed(Exception):
    """Some e-mails could not be handed to the mail server; their claims wait for a retry."""

    def __init__(self, run: ReminderRun) -> None:
        self.run = run
        super().__init__(f"{len(run.failed)} e-mail(s) not sent: {', '.join(run.failed)}")


def lead_addresses() -> list[str]:
    """Active staff with an address: they lead every repository and get every digest."""
    return staff_addresses()


def _repository_leads(repository_ids: Iterable[int], staff: list[str]) -> dict[int, list[str]]:
    """Each repository's leads: the members of its teams, then staff (one per mailbox)."""
    team_leads = team_lead_addresses(repository_ids)
    leads: dict[int, list[str]] = {}
    for repository_id in set(repository_ids):
        unique: dict[str, str] = {}
        for address in [*team_leads.get(repository_id, []), *staff]:
            unique.setdefault(address.lower(), address)
        leads[repository_id] = list(unique.values())
    return leads


def _claim(model: type[C], *, lookup: dict[str, object], recipient: str) -> C | None:
    """The claim on one e-mail if this caller won it, else None (sent, or another is sending)."""
    now = timezone.now()
    try:
        with transaction.atomic():
            return model._default_manager.create(
                **{**lookup, "recipient": recipient, "claimed_at": now}
            )
    except IntegrityError:
        pass
    existing = model._default_manager.filter(**lookup).first()
    if existing is None or existing.sent_at is not None:
        return None
    # Taken back only after a failed send or an expired lease, and by one caller only: the
    # update matches the attempt count it read, which the winner changes.
    retakeable = Q(failed_at__isnull=False) | Q(claimed_at__lt=now - CLAIM_LEASE)
    won = (
        model._default_manager.filter(
            pk=existing.pk, sent_at__isnull=True, attempts=existing.attempts
        )
        .filter(retakeable)
        .update(attempts=existing.attempts + 1, claimed_at=now, failed_at=None, recipient=recipient)
    )
    if not won:
        return None
    existing.refresh_from_db()
    return existing


def _deliver(
    claim: Claim, build: Callable[[], EmailMultiAlternatives], run: ReminderRun, what: str
) -> bool:
    claims = type(claim)._default_manager.filter(pk=claim.pk)
    try:
        build().send()
    except TRANSIENT_SEND_ERRORS:
        logger.warning("Could not send %s; it will be retried", what, exc_info=True)
        claims.update(failed_at=timezone.now())
        run.failed.append(what)
        return False
    except Exception:
        claims.update(failed_at=timezone.now())
        raise
    claims.update(sent_at=timezone.now())
    return True


def digest_build(*, today: datetime.date) -> Digest:
    """Expired, expiring and unowned current freezes, and the pending renewal requests."""
    current = list(Freeze.objects.current().select_related("repository"))
    owners = owners_resolve(freeze.owner for freeze in current)
    status = {freeze.pk: expiry_status(freeze.expires, today) for freeze in current}
    due = [freeze for freeze in current if status[freeze.pk] in ("expired", "expiring")]
    latest = latest_actions(due)

    def row(freeze: Freeze) -> DigestRow:
        days_left = (freeze.expires - today).days if freeze.expires is not None else None
        return DigestRow(
            freeze=freeze,
            owner=owners.get(freeze.owner),
            days_left=days_left,
            days_left_text=days_left_text(days_left) if days_left is not None else "no expiry",
            latest_action=latest.get(freeze.pk),
        )

    def by_expiry(freeze: Freeze) -> tuple[datetime.date, str, str]:
        return (freeze.expires or today, freeze.repository.slug, freeze.freeze_id)

    return Digest(
        day=today,
        expired=[row(f) for f in sorted(due, key=by_expiry) if status[f.pk] == "expired"],
        expiring=[row(f) for f in sorted(due, key=by_expiry) if status[f.pk] == "expiring"],
        unowned=[row(f) for f in sorted(current, key=by_expiry) if f.owner not in owners],
        renewal_requests=open_renewal_requests(),
    )


def _send_owner_reminders(*, today: datetime.date, leads: list[str], run: ReminderRun) -> None:
    horizon = today + datetime.timedelta(days=max(MILESTONE_DAYS))
    freezes = list(
        Freeze.objects.current()
        .filter(expires__isnull=False, expires__lte=horizon)
        .select_related("repository")
        .order_by("expires", "pk")
    )
    owners = owners_resolve(freeze.owner for freeze in freezes)
    repository_leads = _repository_leads({freeze.repository_id for freeze in freezes}, leads)
    # What earlier runs sent, read once: every hour would otherwise try each claim again, an
    # insert refused by the unique constraint per freeze (and an error line in the server's
    # log). The claim itself still decides between runs racing for the same e-mail.
    sent = set(
        ReminderClaim.objects.filter(freeze__in=freezes, sent_at__isnull=False).values_list(
            "freeze_id", "freeze_version", "milestone"
        )
    )
    for freeze in freezes:
        assert freeze.expires is not None  # noqa: S101 - filtered above
        milestone = milestone_for(expires=freeze.expires, today=today)
        if milestone is None:
            continue
        if (freeze.pk, freeze.version, milestone) in sent:
            run.already_claimed += 1
            continue
        owner: ResolvedOwner | None = owners.get(freeze.owner)
        if owner is None:
            # Nobody to write to: the lead digest lists it as an unowned freeze.
            run.unowned += 1
            continue
        claim = _claim(
            ReminderClaim,
            lookup={"freeze": freeze, "freeze_version": freeze.version, "milestone": milestone},
            recipient=owner.email,
        )
        if claim is None:
            run.already_claimed += 1
            continue

        def build(freeze: Freeze = freeze, owner: ResolvedOwner = owner) -> EmailMultiAlternatives:
            reply_to = repository_leads[freeze.repository_id]
            return reminder_message(freeze=freeze, owner=owner, today=today, reply_to=reply_to)

        what = f"{milestone} reminder of {freeze.repository.slug}/{freeze.freeze_id}"
        if _deliver(claim, build, run, what):
            run.reminders_sent += 1


def _digest_of(digest: Digest, repository_ids: set[int]) -> Digest:
    """The part of a digest about some repositories."""

    def mine(rows: list[DigestRow]) -> list[DigestRow]:
        return [row for row in rows if row.freeze.repository_id in repository_ids]

    return replace(
        digest,
        expired=mine(digest.expired),
        expiring=mine(digest.expiring),
        unowned=mine(digest.unowned),
        renewal_requests=[
            action
            for action in digest.renewal_requests
            if action.freeze.repository_id in repository_ids
        ],
    )


def _digest_recipients(digest: Digest, staff: list[str]) -> dict[str, set[int] | None]:
    """Each recipient's repositories: None (all) for staff, else those of their teams."""
    involved = {row.freeze.repository_id for row in digest.expired + digest.expiring}
    involved |= {row.freeze.repository_id for row in digest.unowned}
    involved |= {action.freeze.repository_id for action in digest.renewal_requests}
    recipients: dict[str, set[int] | None] = {}
    mailboxes: dict[str, str] = {}
    for address in staff:
        mailboxes.setdefault(address.lower(), address)
        recipients[mailboxes[address.lower()]] = None
    for repository_id, addresses in sorted(team_lead_addresses(involved).items()):
        for address in addresses:
            address = mailboxes.setdefault(address.lower(), address)
            scope = recipients.setdefault(address, set())
            if scope is not None:
                scope.add(repository_id)
    return recipients


def _send_digests(*, today: datetime.date, leads: list[str], run: ReminderRun) -> None:
    full = digest_build(today=today)
    if full.is_empty():
        # Nothing to act on: no mail and no claim, so a ledger synced later in the day still
        # gets the day's digest out on the next hourly run.
        return
    sent = set(
        DigestClaim.objects.filter(day=today, sent_at__isnull=False).values_list(
            "recipient", flat=True
        )
    )
    for address, repository_ids in _digest_recipients(full, leads).items():
        # Staff get every repository; a team member only their teams' repositories.
        digest = full if repository_ids is None else _digest_of(full, repository_ids)
        if digest.is_empty():
            continue
        if address in sent:  # as above: read once rather than refused one by one
            run.already_claimed += 1
            continue
        claim = _claim(DigestClaim, lookup={"recipient": address, "day": today}, recipient=address)
        if claim is None:
            run.already_claimed += 1
            continue

        def build(address: str = address, digest: Digest = digest) -> EmailMultiAlternatives:
            return digest_message(digest=digest, recipient=address, reply_to=leads)

        if _deliver(claim, build, run, f"digest of {today} to {address}"):
            run.digests_sent += 1


def reminders_send(*, today: datetime.date) -> ReminderRun:
    """Send the owner reminders and lead digests due on ``today`` that nobody sent yet.

    Safe to run any number of times, concurrently too. Raises ReminderDeliveryFailed, after
    trying every other e-mail, when some could not be sent; their claims wait for the retry.
    """
    run = ReminderRun(today=today)
    leads = lead_addresses()
    _send_owner_reminders(today=today, leads=leads, run=run)
    _send_digests(today=today, leads=leads, run=run)
    if run.failed:
        raise ReminderDeliveryFailed(run)
    return run
