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
