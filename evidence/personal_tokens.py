"""Personal API tokens: a person's credential for the read endpoints.

A personal token reads ``fdp_<prefix>_<secret>`` and acts as its user, so it sees exactly what
``evidence.visibility`` lets that user see. It only reads: upload and ledger
endpoints refuse it, and an upload token (``fdk_``) is never a user. Text, digest and checking
are the upload tokens' own (``evidence.tokens``), with the personal marker.
"""

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from evidence import tokens
from evidence.models import PERSONAL_TOKEN_MARKER, PersonalToken

# 36**8 prefixes make a clash rare; a few fresh draws make it practically impossible.
_PREFIX_ATTEMPTS = 5


def looks_like_personal_token(text: str) -> bool:
    return tokens.looks_like_token(text, PERSONAL_TOKEN_MARKER)


def parse_prefix(text: str) -> str | None:
    """The lookup prefix named by a whole token, by ``fdp_<prefix>``, or by a bare prefix."""
    return tokens.parse_prefix(text, PERSONAL_TOKEN_MARKER)


def verify(plain: str) -> PersonalToken | None:
    """The live personal token matching ``plain``, with its user loaded, or None."""
    live = PersonalToken.objects.live().select_related("user")
    return tokens.find(live, plain, marker=PERSONAL_TOKEN_MARKER)


def personal_token_create(*, user: User, name: str = "") -> tuple[PersonalToken, str]:
    """Create a personal token; returns the row and the plain token, which is never stored."""
    for attempt in range(1, _PREFIX_ATTEMPTS + 1):
        new = tokens.generate(PERSONAL_TOKEN_MARKER)
        try:
            # A savepoint, so a prefix clash does not spoil a surrounding transaction.
            with transaction.atomic():
                token = PersonalToken.objects.create(
                    user=user, name=name, prefix=new.prefix, digest=new.digest
                )
        except IntegrityError:
            if attempt == _PREFIX_ATTEMPTS:
                raise
        else:
            return token, new.plain
    raise AssertionError("the last attempt returns or raises")


def personal_token_revoke(*, prefix: str) -> PersonalToken:
    """Revoke the personal token named by its prefix (bare, ``fdp_…``, or the whole token).

    Idempotent: revoking a revoked token keeps the first revocation time.
    Raises PersonalToken.DoesNotExist when no personal token has that prefix.
    """
    lookup = parse_prefix(prefix)
    if lookup is None:
        raise PersonalToken.DoesNotExist(f"{prefix!r} does not name a personal token.")
    PersonalToken.objects.filter(prefix=lookup, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    return PersonalToken.objects.select_related("user").get(prefix=lookup)
