"""Permission classes for endpoints that CI calls with an upload token."""

from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from evidence.authentication import TokenPrincipal


class HasScope(BasePermission):
    """Allows requests made with a live upload token of one of the given scopes.

    Used as ``permission_classes = [HasScope("evidence")]``: DRF instantiates each entry by
    calling it, so an instance answers that call with itself.
    """

    def __init__(self, *scopes: str) -> None:
        if not scopes:
            raise ValueError("HasScope needs at least one scope.")
        self.scopes = frozenset(scopes)

    def __call__(self) -> "HasScope":
        return self

    def has_permission(self, request: Request, view: APIView) -> bool:
        principal = request.user
        if not isinstance(principal, TokenPrincipal):
            return False
        if principal.scope in self.scopes:
            return True
        # Raised rather than stored on self.message: this instance is shared between threads.
        wanted = " or ".join(repr(scope) for scope in sorted(self.scopes))
        raise PermissionDenied(
            f"This token has the {principal.scope!r} scope; this endpoint needs {wanted}."
        )


class IsSignedInUser(BasePermission):
    """Allows logged-in people (session); refuses upload tokens, which read nothing here."""

    message = "This endpoint is for signed-in users, not upload tokens."

    def has_permission(self, request: Request, view: APIView) -> bool:
        user = request.user
        if isinstance(user, TokenPrincipal):
            raise PermissionDenied(self.message)
        return bool(user and user.is_authenticated)


class EvidenceTokenOrSignedInUser(BasePermission):
    """An ``evidence`` upload token or a logged-in user; which objects each may read is the
    selector's business (a token sees its own repository only)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if isinstance(request.user, TokenPrincipal):
            return HasScope("evidence").has_permission(request, view)
        return bool(request.user and request.user.is_authenticated)
