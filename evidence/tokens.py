"""Token mechanics: the token text, its digest, and checking a presented token.

A token reads ``<marker>_<prefix>_<secret>``: the marker makes a leaked token recognisable and
tells its kind (``fdk`` upload tokens, ``fdp`` personal tokens, see ``personal_tokens``), the
8-character prefix finds its row (and is safe to show), the secret is 32 random bytes. The
functions default to upload tokens; personal tokens pass their marker and queryset.

Only a plain SHA-256 of the whole token is stored, not an HMAC keyed by SECRET_KEY: with 256
random bits nothing can be guessed from the digest, so a key adds no protection, while it would
tie every CI token to SECRET_KEY and make rotating that key after a leak lock out every pipeline.
"""

import hashlib
import hmac
import re
import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import TypeVar

from django.db.models import Q, QuerySet
from django.utils import timezone

from evidence.models import TOKEN_MARKER, PersonalToken, UploadToken

T = TypeVar("T", UploadToken, PersonalToken)

PREFIX_LENGTH = 8
SECRET_BYTES = 32
_PREFIX_ALPHABET = string.ascii_lowercase + string.digits
# last_used_at is for people deciding which token to revoke; minute precision is plenty and
# spares a write on every request.
LAST_USED_GRANULARITY = timedelta(minutes=1)


@cache
def _token_re(marker: str) -> re.Pattern[str]:
    return re.compile(rf"{marker}_([a-z0-9]{{{PREFIX_LENGTH}}})_[A-Za-z0-9_-]{{20,128}}")


@cache
def _prefix_re(marker: str) -> re.Pattern[str]:
    return re.compile(rf"(?:{marker}_)?([a-z0-9]{{{PREFIX_LENGTH}}})(?:_[A-Za-z0-9_-]+)?")


@dataclass(frozen=True)
class NewToken:
    prefix: str
    plain: str
    digest: str


def hash_token(plain: str) -> str:
    return hashlib.sha256(plain.encode("utf-8")).hexdigest()


def generate(marker: str = TOKEN_MARKER) -> NewToken:
    """A fresh token; the caller stores prefix and digest and shows ``plain`` once."""
    prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(PREFIX_LENGTH))
    plain = f"{marker}_{prefix}_{secrets.token_urlsafe(SECRET_BYTES)}"
    return NewToken(prefix=prefix, plain=plain, digest=hash_token(plain))


def looks_like_token(text: str, marker: str = TOKEN_MARKER) -> bool:
    return text.startswith(f"{marker}_")


def is_well_formed(text: str, marker: str = TOKEN_MARKER) -> bool:
    """Whether ``text`` has the whole shape of a token (a cut or altered one has not)."""
    return _token_re(marker).fullmatch(text) is not None


def parse_prefix(text: str, marker: str = TOKEN_MARKER) -> str | None:
    """The lookup prefix named by a full token, by ``<marker>_<prefix>``, or by a bare prefix."""
    match = _prefix_re(marker).fullmatch(text.strip())
    return match[1] if match else None


def find(live: QuerySet[T], plain: str, *, marker: str) -> T | None:
    """The token row of ``live`` matching ``plain``, or None. The digest comparison is
    constant-time."""
    match = _token_re(marker).fullmatch(plain)
    if match is None:
        return None
    token = live.filter(prefix=match[1]).first()
    if token is None or not hmac.compare_digest(token.digest, hash_token(plain)):
        return None
    return token


def verify(plain: str) -> UploadToken | None:
    """The live upload token matching ``plain``, or None."""
    return find(UploadToken.objects.live().select_related("repository"), plain, marker=TOKEN_MARKER)


def record_use(token: UploadToken | PersonalToken, *, now: datetime | None = None) -> None:
    """Set last_used_at, writing at most once per LAST_USED_GRANULARITY per token."""
    now = now or timezone.now()
    stale_before = now - LAST_USED_GRANULARITY
    if token.last_used_at is not None and token.last_used_at > stale_before:
        return
    # Conditional, so concurrent requests holding the same stale copy write once between them.
    updated = (
        type(token)
        .objects.filter(pk=token.pk)
        .filter(Q(last_used_at__isnull=True) | Q(last_used_at__lte=stale_before))
        .update(last_used_at=now)
    )
    if updated:
        token.last_used_at = now
