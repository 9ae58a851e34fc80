"""Permission classes: which principal (upload token, or a person by session or personal token)
may use which endpoint. Which objects a person sees is the selectors' business."""

from typing import ClassVar

from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from evidence.authentication import TokenPrincipal
from evidence.models import UploadToken


class HasScope(BasePermission):
    """Allows requests made with a live upload token of one of ``scopes`` (set by each
    subclass below)."""

    scopes: ClassVar[frozenset[str]] = frozenset()

    PEOPLE_REFUSED = (
        "This endpoint needs an upload token of the repository; personal tokens and "
        "sign-ins only read."
    )

    def has_permission(self, request: Request, view: APIView) -> bool:
        principal = request.user
        if not isinstance(principal, TokenPrincipal):
            if principal and principal.is_authenticated:
                # A person (personal token or session) is never an upload token.
                raise PermissionDenied(self.PEOPLE_REFUSED)
            return False
        if principal.scope in self.scopes:
            return True
        # Raised rather than stored on self.message: this instance is shared between threads.
        wanted = " or ".join(repr(scope) for scope in sorted(self.scopes))
        command = (
            f"python manage.py create_token {principal.repository.slug} "
            f"--scope {sorted(self.scopes)[0]}"
        )
        raise PermissionDenied(
            f"This token has the {principal.scope!r} scope; this endpoint needs {wanted}. "
            f"A server admin makes one with: {command}"
        )


class HasEvidenceScope(HasScope):
    scopes = frozenset({UploadToken.Scope.EVIDENCE.value})


class HasLedgerScope(HasScope):
    scopes = frozenset({UploadToken.Scope.LEDGER.value})


class HasAnyScope(HasScope):
    scopes = frozenset(UploadToken.Scope.values)


class IsSignedInUser(BasePermission):
    """Allows people (session or personal token); refuses upload tokens, which read nothing
    here."""

    message = "This endpoint is for people (sign-in or personal token), not upload tokens."

    def has_permission(self, request: Request, view: APIView) -> bool:
        user = request.user
        if isinstance(user, TokenPrincipal):
            raise PermissionDenied(self.message)
        return bool(user and user.is_authenticated)


class EvidenceTokenOrSignedInUser(BasePermission):
    """An ``evidence`` upload token or a person (session or personal token); which objects each
    may read is the selector's business (a token sees its own repository only)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if isinstance(request.user, TokenPrincipal):
            return HasEvidenceScope().has_permission(request, view)
        return bool(request.user and request.user.is_authenticated)
