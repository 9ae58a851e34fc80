"""Reads of repositories and patches, already limited to what the caller may see.

A caller is a logged-in user (who sees ``Repository.objects.visible_to(user)``) or an upload
token (which sees its own repository only). Anything else is "not found", never "forbidden":
an answer must not reveal that another repository's object exists.
"""

from typing import TypeVar

from django.db.models import Model, QuerySet
from django.http import Http404

from evidence.authentication import TokenPrincipal
from evidence.models import Patch, Repository, sees_every_repository

M = TypeVar("M", bound=Model)


def repositories_visible_to(principal) -> QuerySet[Repository]:
    if isinstance(principal, TokenPrincipal):
        return Repository.objects.filter(pk=principal.repository.pk)
    return Repository.objects.visible_to(principal)


def visible_rows(rows: QuerySet[M], principal) -> QuerySet[M]:
    """``rows`` (of a model with a ``repository``) limited to the repositories the caller sees.

    For a caller who sees every repository (active staff) no condition at all: a semi-join of
    every row against the whole repository table cost PostgreSQL as much as the overview's sums
    of a year of 50 repositories' snapshots.
    """
    if sees_every_repository(principal):
        return rows
    return rows.filter(repository__in=repositories_visible_to(principal))


def repository_get(principal, *, slug: str) -> Repository:
    """The repository named by ``slug`` if the caller may see it; Http404 otherwise."""
    repository = repositories_visible_to(principal).filter(slug=slug).first()
    if repository is None:
        raise Http404("No such repository.")
    return repository


def patches_visible_to(principal, *, repository: Repository | None = None) -> QuerySet[Patch]:
    """Patches, newest first, with repository and report state loaded for listing (not the
    report's body, nor the patch's paths and analysis: megabytes for a page of them)."""
    patches = visible_rows(Patch.objects.all(), principal)
    if repository is not None:
        patches = patches.filter(repository=repository)
    return (
        patches.select_related("repository", "report")
        .defer("report__body", "changed", "analysis")
        .order_by("-created_at", "-pk")
    )


def patch_get(principal, *, patch_id: int) -> Patch:
    patch = (
        visible_rows(Patch.objects.filter(pk=patch_id), principal)
        .select_related("repository")
        .first()
    )
    if patch is None:
        raise Http404("No such patch.")
    return patch
