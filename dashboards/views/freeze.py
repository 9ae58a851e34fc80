"""A freeze's page (its template lives with the ledger's: templates/ledger/)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from dashboards import selectors
from dashboards.actions import describe
from dashboards.views import tables
from ledger.models import FreezeAction


def _event_changes(event: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """The fields a renewal or edit changed, as (field, before, after)."""
    before, after = event.get("before"), event.get("after")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    return [
        (key, before.get(key), after.get(key))
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


@require_GET
@login_required
def freeze(request: HttpRequest, slug: str, freeze_id: str) -> HttpResponse:
    detail = selectors.freeze_detail(user=request.user, repository_slug=slug, freeze_id=freeze_id)
    outcome_counts: dict[str, int] = {}
    for outcome in detail["outcomes"]:
        outcome_counts[outcome["outcome"]] = outcome_counts.get(outcome["outcome"], 0) + 1
    events = [{**event, "changes": _event_changes(event)} for event in detail["events"]]
    # Every owner answer, newest first; the open renewal requests are those on the current
    # version of a freeze still in the ledger (a renewal or retirement closes them).
    now = timezone.now()
    answers = [describe(action, now) for action in detail["actions"]]
    freeze_ = detail["freeze"]
    requests = [
        answer
        for answer in answers
        if freeze_.current
        and answer["kind"] == FreezeAction.Action.RENEWAL
        and answer["version"] == freeze_.version
    ]
    latest = detail["row"]["latest_action"]
    context = {
        **detail,
        "events": events,
        "outcome_counts": sorted(outcome_counts.items()),
        "outcome_rows": tables.outcome_rows(detail["outcomes"]),
        "answers": answers,
        "renewal_requests": requests[::-1],
        "answer": describe(latest, now) if latest is not None else None,
    }
    return render(request, "ledger/freeze_detail.html", context)
