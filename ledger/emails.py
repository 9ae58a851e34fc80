"""The e-mails of section 8. Every message is built by :func:`message_build` from three templates
under ``templates/emails/``: ``<kind>_subject.txt``, ``<kind>.txt`` and ``<kind>.html``."""

import datetime
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from freezedebt_ci.ledger import EXPIRING_WITHIN_DAYS
from ledger.links import link_token, link_url, max_age
from ledger.models import Freeze, FreezeAction
from ledger.owners import ResolvedOwner


def message_build(
    *, kind: str, context: dict[str, object], to: list[str], reply_to: list[str]
) -> EmailMultiAlternatives:
    context = {"site_url": settings.SITE_URL, **context}
    # A subject is one line, whatever the template's line breaks.
    subject = " ".join(render_to_string(f"emails/{kind}_subject.txt", context).split())
    text = render_to_string(f"emails/{kind}.txt", context)
    html = render_to_string(f"emails/{kind}.html", context)
    message = EmailMultiAlternatives(
        subject=subject,
        body=text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=to,
        reply_to=reply_to,
    )
    message.attach_alternative(html, "text/html")
    return message


@dataclass(frozen=True)
class ActionLinkView:
    action: str
    label: str
    explanation: str
    url: str


ACTION_TEXTS = {
    FreezeAction.Action.ACKNOWLEDGE: ("I am on it", "acknowledge this freeze"),
    FreezeAction.Action.RENEWAL: ("Request a renewal", "propose a new reason to the leads"),
    FreezeAction.Action.FIXED: ("Report it fixed", "the test passes again"),
}


def action_links(*, freeze: Freeze, owner_email: str) -> list[ActionLinkView]:
    """One freshly signed link per action, for this owner and the freeze's current version."""
    return [
        ActionLinkView(
            action=action,
            label=label,
            explanation=explanation,
            url=link_url(link_token(freeze=freeze, owner_email=owner_email, action=action)),
        )
        for action, (label, explanation) in ACTION_TEXTS.items()
    ]


def days_left_text(days_left: int) -> str:
    if days_left > 1:
        return f"expires in {days_left} days"
    if days_left == 1:
        return "expires tomorrow"
    if days_left == 0:
        return "expires today"
    if days_left == -1:
        return "expired yesterday"
    return f"expired {-days_left} days ago"


def reminder_message(
    *, freeze: Freeze, owner: ResolvedOwner, today: datetime.date, reply_to: list[str]
) -> EmailMultiAlternatives:
    assert freeze.expires is not None  # noqa: S101 - only freezes with an expiry get reminders
    days_left = (freeze.expires - today).days
    context = {
        "freeze": freeze,
        "repository": freeze.repository,
        "owner": owner,
        "days_left": days_left,
        "days_left_text": days_left_text(days_left),
        "expired": days_left < 0,
        "links": action_links(freeze=freeze, owner_email=owner.email),
        "link_days": max_age().days,
    }
    return message_build(kind="reminder", context=context, to=[owner.email], reply_to=reply_to)


@dataclass(frozen=True)
class DigestRow:
    freeze: Freeze
    owner: ResolvedOwner | None
    days_left: int | None
    days_left_text: str
    latest_action: FreezeAction | None


@dataclass(frozen=True)
class Digest:
    day: datetime.date
    expired: list[DigestRow]
    expiring: list[DigestRow]
    unowned: list[DigestRow]
    renewal_requests: list[FreezeAction]

    @property
    def unacknowledged(self) -> int:
        return sum(1 for row in self.expired + self.expiring if row.latest_action is None)

    def is_empty(self) -> bool:
        return not (self.expired or self.expiring or self.unowned or self.renewal_requests)


def digest_message(
    *, digest: Digest, recipient: str, reply_to: list[str]
) -> EmailMultiAlternatives:
    return message_build(
        kind="digest",
        context={"digest": digest, "within": EXPIRING_WITHIN_DAYS},
        to=[recipient],
        reply_to=reply_to,
    )
