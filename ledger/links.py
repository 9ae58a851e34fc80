"""Signed action links of the reminder e-mails (section 8).

A link names one freeze, owner, freeze version and action, carries a nonce (it acts once), and
expires. Reading one tells apart what the person who followed it can do something about:
a cut-off link (copy it whole), a forged one, an old one (use the latest e-mail), and a link
the ledger has overtaken (the freeze was renewed or retired since).
"""

import datetime
import re
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.urls import reverse

from ledger.models import Freeze, FreezeAction

SALT = "freezedebt.freeze-action"
DEFAULT_MAX_AGE_DAYS = 14

# What signing.dumps produces: payload (a leading "." when compressed), base62 timestamp and a
# 43-character URL-safe base64 HMAC-SHA256, separated by ":". Anything else was cut or mangled
# on its way (a mail client wrapping a long line) rather than forged.
TOKEN_SHAPE = re.compile(r"\.?[A-Za-z0-9_-]+:[A-Za-z0-9]+:[A-Za-z0-9_-]{43}")


class LinkError(Exception):
    kind = "invalid"


class LinkMalformed(LinkError):
    kind = "malformed"


class LinkTampered(LinkError):
    kind = "tampered"


class LinkExpired(LinkError):
    kind = "expired"


class LinkStale(LinkError):
    kind = "stale"


class LinkUsed(LinkError):
    kind = "used"


@dataclass(frozen=True)
class ActionLink:
    freeze_pk: int
    owner_email: str
    freeze_version: int
    action: str
    nonce: str

    def payload(self) -> dict[str, object]:
        return {
            "f": self.freeze_pk,
            "o": self.owner_email,
            "v": self.freeze_version,
            "a": self.action,
            "n": self.nonce,
        }


def max_age() -> datetime.timedelta:
    days = getattr(settings, "FREEZEDEBT_LINK_MAX_AGE_DAYS", DEFAULT_MAX_AGE_DAYS)
    return datetime.timedelta(days=days)


def link_token(*, freeze: Freeze, owner_email: str, action: str) -> str:
    """A new signed token for one action on the freeze's current version."""
    if action not in FreezeAction.Action.values:
        raise ValueError(f"unknown action {action!r}")
    link = ActionLink(
        freeze_pk=freeze.pk,
        owner_email=owner_email,
        freeze_version=freeze.version,
        action=action,
        nonce=secrets.token_urlsafe(16),
    )
    return signing.dumps(link.payload(), salt=SALT, compress=True)


def link_url(token: str) -> str:
    """The absolute URL of a token; e-mails are built outside any request."""
    return settings.SITE_URL + reverse("ledger:freeze-action", kwargs={"token": token})


def link_read(token: str) -> ActionLink:
    """The verified content of a token; raises LinkMalformed, LinkTampered or LinkExpired."""
    if not TOKEN_SHAPE.fullmatch(token):
        raise LinkMalformed(token)
    try:
        data = signing.loads(token, salt=SALT, max_age=max_age())
    except signing.SignatureExpired as error:
        raise LinkExpired(token) from error
    except signing.BadSignature as error:
        raise LinkTampered(token) from error
    try:
        link = ActionLink(
            freeze_pk=int(data["f"]),
            owner_email=str(data["o"]),
            freeze_version=int(data["v"]),
            action=str(data["a"]),
            nonce=str(data["n"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise LinkMalformed(token) from error
    if link.action not in FreezeAction.Action.values or not link.nonce:
        raise LinkMalformed(token)
    return link


def link_freeze(link: ActionLink, *, for_update: bool = False) -> Freeze:
    """The freeze a link acts on, if the link still may; raises LinkStale or LinkUsed."""
    freezes = Freeze.objects.select_related("repository")
    if for_update:
        freezes = freezes.select_for_update(of=("self",))
    freeze = freezes.filter(pk=link.freeze_pk).first()
    # "Used" first: it tells the person their answer was recorded, whatever happened since.
    if FreezeAction.objects.filter(nonce=link.nonce).exists():
        raise LinkUsed(link)
    if freeze is None or not freeze.current or freeze.version != link.freeze_version:
        raise LinkStale(link)
    return freeze
