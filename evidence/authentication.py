"""DRF authentication: ``Authorization: Bearer fdk_…`` upload tokens for CI, and
``Authorization: Bearer fdp_…`` personal tokens (or a session) for people.

Each kind of token is recognised by its marker; an authenticator that does not recognise the
token leaves it to the next one. Which principal may do what is the permissions' business
(``evidence.permissions``), except that a personal token never writes (see below).
"""

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from rest_framework.authentication import (
    BaseAuthentication,
    SessionAuthentication,
    get_authorization_header,
)
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied, Throttled
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from evidence import personal_tokens, tokens
from evidence.models import (
    PERSONAL_TOKEN_MARKER,
    TOKEN_MARKER,
    PersonalToken,
    Repository,
    UploadToken,
)
from evidence.rate_limits import refused_token_wait

# Both kinds of token answer a missing or refused credential with this challenge. It is also
# what makes DRF answer 401 (not 403): DRF asks the first authenticator of a view for it, so an
# API view never lists SessionAuthentication (which has none) first.
BEARER_CHALLENGE = 'Bearer realm="api"'


@dataclass(frozen=True)
class TokenPrincipal:
    """``request.user`` for a request made with an upload token: one repository, one scope.

    It is never a Django user: it has no permissions, is not staff, belongs to no team, and
    sees its own repository only (``evidence.visibility``).
    """

    token_id: int
    prefix: str
    scope: str
    repository: Repository

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False

    @classmethod
    def from_token(cls, token: UploadToken) -> "TokenPrincipal":
        return cls(
            token_id=token.pk,
            prefix=token.prefix,
            scope=token.scope,
            repository=token.repository,
        )

    def __str__(self) -> str:
        return f"token {TOKEN_MARKER}_{self.prefix}"


def token_repository(request: Request) -> Repository:
    """The repository of the upload token a request was made with, on an endpoint that a
    ``HasScope`` permission already limited to upload tokens."""
    principal = request.user
    if not isinstance(principal, TokenPrincipal):
        raise PermissionDenied("This endpoint needs an upload token of the repository.")
    return principal.repository


def _refused(request: Request) -> Exception:
    """The answer to an unknown or revoked token: 401, or 429 once its address has sent too
    many of them this minute (guessing tokens costs a lookup each)."""
    wait = refused_token_wait(request)
    if wait is not None:
        return Throttled(
            wait=wait, detail="Too many refused tokens from this address; retry later."
        )
    return AuthenticationFailed("Unknown or revoked token.")


def _bearer_token(request: Request) -> str | None:
    """The token text of an ``Authorization: Bearer …`` header; None for no or another scheme."""
    parts = get_authorization_header(request).split()
    if not parts or parts[0].lower() != b"bearer":
        return None
    if len(parts) != 2:
        raise AuthenticationFailed("Malformed Authorization header: use 'Bearer <token>'.")
    try:
        plain = parts[1].decode("ascii")
    except UnicodeDecodeError:
        raise AuthenticationFailed("Malformed token: it holds characters no token has.") from None
    if not (tokens.looks_like_token(plain) or personal_tokens.looks_like_personal_token(plain)):
        # No authenticator would claim it, and "no credentials" would mislead: one was sent.
        raise AuthenticationFailed(
            "Malformed token: Freeze Debt tokens start with fdk_ (upload tokens) or fdp_ "
            "(personal tokens)."
        )
    return plain


def _malformed(kind: str, marker: str) -> AuthenticationFailed:
    return AuthenticationFailed(
        f"Malformed token: {kind} reads {marker}_<8 letters or digits>_<secret>, and this one "
        "is cut short or altered; copy the whole token as it was printed."
    )


class UploadTokenAuthentication(BaseAuthentication):
    """An upload token (``fdk_…``): a ``TokenPrincipal`` of one repository, never a user."""

    def authenticate(self, request: Request) -> tuple[TokenPrincipal, UploadToken] | None:
        plain = _bearer_token(request)
        if plain is None or not tokens.looks_like_token(plain):
            # Not ours: leave it to another authenticator (if none accepts, the answer is 401).
            return None
        if not tokens.is_well_formed(plain):
            raise _malformed("an upload token", TOKEN_MARKER)
        token = tokens.verify(plain)
        if token is None:
            raise _refused(request)
        tokens.record_use(token)
        return TokenPrincipal.from_token(token), token

    def authenticate_header(self, request: Request) -> str:
        return BEARER_CHALLENGE


class PersonalTokenAuthentication(BaseAuthentication):
    """A personal token (``fdp_…``): the request is made as the token's user, who sees what
    ``evidence.visibility.repositories(user)`` allows.

    A personal token only reads: on any other method it is refused here with 403, whatever the
    view, so no endpoint that writes (uploads, ledger sync, or any later form) can be reached
    with one. Unlike a session it needs no CSRF token, which is safe only because it is sent
    explicitly by a script, never attached by a browser.
    """

    def authenticate(self, request: Request) -> tuple[AbstractBaseUser, PersonalToken] | None:
        plain = _bearer_token(request)
        if plain is None or not personal_tokens.looks_like_personal_token(plain):
            return None
        if not tokens.is_well_formed(plain, PERSONAL_TOKEN_MARKER):
            raise _malformed("a personal token", PERSONAL_TOKEN_MARKER)
        token = personal_tokens.verify(plain)
        if token is None or not token.user.is_active:
            raise _refused(request)
        if request.method not in SAFE_METHODS:
            raise PermissionDenied(
                "A personal token only reads; uploads and ledger syncs need an upload token "
                "of the repository."
            )
        tokens.record_use(token)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return BEARER_CHALLENGE


# What each kind of API view accepts (see BEARER_CHALLENGE for why the order matters).
# Endpoints CI calls with an upload token. A personal token is recognised there only so that it
# is refused with 403 (a real credential of the wrong kind) rather than 401 (no credential).
UPLOAD_AUTHENTICATION = [UploadTokenAuthentication, PersonalTokenAuthentication]
# Endpoints people read, by personal token or session. Upload tokens are recognised so the
# permission can refuse them with 403, or, where an ``evidence`` token may read, let them in.
READ_AUTHENTICATION = [
    PersonalTokenAuthentication,
    UploadTokenAuthentication,
    SessionAuthentication,
]
