"""Who sees which repository: decided here, and every read of the three apps goes through it.

A signed-in person sees every repository when active staff, else the repositories of their
teams. An upload token sees nothing, except through the API reads that take ``tokens=True``
(runs, patches, freezes), where it sees its own repository: pages and dashboards are for people.
Anyone else sees nothing. What a caller may not see is "not found", never "forbidden": an
answer must not reveal that it exists.
"""

from collections.abc import Iterable
from typing import Any, TypeVar

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404

from evidence.authentication import TokenPrincipal
from evidence.models import Repository

Rows = TypeVar("Rows", bound=QuerySet[Any])


def sees_every_repository(principal) -> bool:
    """Whether the caller sees every repository (active staff): a read may then leave out the
    repository condition altogether."""
    return bool(
        getattr(principal, "is_authenticated", False) and principal.is_active and principal.is_staff
    )


def repositories(
    principal, *, slugs: Iterable[str] | None = None, tokens: bool = False
) -> QuerySet[Repository]:
    """The repositories the caller may read (of those named by ``slugs``, when given)."""
    visible = _repositories(principal, tokens)
    if slugs:
        visible = visible.filter(slug__in=list(slugs))
    return visible


def _repositories(principal, tokens: bool) -> QuerySet[Repository]:
    if isinstance(principal, TokenPrincipal):
        if not tokens:
            return Repository.objects.none()
        return Repository.objects.filter(pk=principal.repository.pk)
    if not getattr(principal, "is_authenticated", False) or not principal.is_active:
        return Repository.objects.none()
    if sees_every_repository(principal):
        return Repository.objects.all()
    if not isinstance(principal, AbstractBaseUser):
        return Repository.objects.none()
    # A lead sees the repositories of their teams. A subquery rather than a join, so a repository
    # of two of the user's teams comes once without DISTINCT, which gets in the way of ordering.
    return Repository.objects.filter(
        pk__in=Repository.objects.filter(teams__members=principal.pk).values("pk")
    )


def rows(
    queryset: Rows, principal, *, slugs: Iterable[str] | None = None, tokens: bool = False
) -> Rows:
    """``queryset`` (of a model with a ``repository``) limited to the repositories the caller
    sees (of those named by ``slugs``, when given)."""
    if sees_all(principal, slugs):
        # No condition at all: a semi-join of every row against the whole repository table
        # costs as much as the read itself.
        return queryset
    return queryset.filter(repository__in=repositories(principal, slugs=slugs, tokens=tokens))


def sees_all(principal, slugs: Iterable[str] | None = None) -> bool:
    """Whether the repositories ``repositories(principal, slugs=slugs)`` names are every one,
    so that a read may leave out the repository condition."""
    return not slugs and sees_every_repository(principal)


def repository(principal, slug: str, *, tokens: bool = False) -> Repository:
    """The repository named ``slug`` if the caller may see it; Http404 otherwise."""
    found = repositories(principal, tokens=tokens).filter(slug=slug).first()
    if found is None:
        raise Http404("No such repository.")
    return found
