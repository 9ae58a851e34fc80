"""Reads of runs, already limited to what the caller may see.

A caller is a logged-in user or an upload token (its own repository only); a run the caller may
not see is "not found", so an answer never reveals that another repository's run exists.
"""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from evidence import visibility
from evidence.models import Run


def runs_visible_to(principal) -> QuerySet[Run]:
    """Runs of the repositories the caller sees. The upload body is left out: no read needs
    it, and it may be tens of MiB."""
    return visibility.rows(
        Run.objects.defer("raw").select_related("repository"), principal, tokens=True
    )


def run_get(principal, *, run_id: int) -> Run:
    """A visible run by id; Http404 otherwise."""
    return get_object_or_404(runs_visible_to(principal), pk=run_id)
