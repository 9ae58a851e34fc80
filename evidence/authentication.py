"""DRF authentication for CI: ``Authorization: Bearer fdk_…`` upload tokens."""

from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from evidence import tokens
from evidence.models import TOKEN_MARKER, Repository, UploadToken


@dataclass(frozen=True)
class TokenPrincipal:
    """``request.user`` for a request made with an upload token: one repository, one scope.

    It is never a Django user: it has no permissions, is not staff, and sees no repository
    through ``Repository.objects.visible_to``.
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


class UploadTokenAuthentication(BaseAuthentication):
    keyword = b"bearer"

    def authenticate(self, request: Request) -> tuple[TokenPrincipal, UploadToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword:
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("Malformed Authorization header: use 'Bearer <token>'.")
        try:
            plain = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed("Malformed token.") from None
        if not tokens.looks_like_token(plain):
            # Not ours: leave it to another authenticator (if none accepts, the answer is 401).
            return None
        token = tokens.verify(plain)
        if token is None:
            raise AuthenticationFailed("Unknown or revoked token.")
        tokens.record_use(token)
        return TokenPrincipal.from_token(token), token

    def authenticate_header(self, request: Request) -> str:
        # Also what makes DRF answer 401 (not 403) when credentials are missing or wrong.
        return 'Bearer realm="api"'
