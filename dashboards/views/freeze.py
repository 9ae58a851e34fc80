"""A freeze's page (its template lives with the ledger's: templates/ledger/)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from dashboards import selectors
from dashboards.actions import describe
from dashboards.views.common import minute_text, text_html
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


_NO_BRANCH = "\N{EN DASH}"


def _outcome_rows(outcomes: list[dict[str, Any]]) -> SafeString:
    """The frozen test's recent outcomes as table rows, every text escaped: written here rather
    than with a template loop, which took a third of the page's time for 20 runs."""
    sentinel = 987654321
    run_link = reverse("api:run-detail", args=[sentinel])
    lines = []
    for outcome in outcomes:
        href = text_html(run_link.replace(str(sentinel), str(outcome["run"])))
        label = f" <small>{text_html(outcome['label'])}</small>" if outcome["label"] else ""
        kind = text_html(outcome["outcome"])
        branch = text_html(outcome["branch"]) if outcome["branch"] else _NO_BRANCH
        lines.append(
            f'<tr><td><a href="{href}">{outcome["run"]}</a></td>'
            f"<td><code>{text_html(outcome['sha'][:12])}</code>{label}</td>"
            f"<td>{branch}</td>"
            f"<td>{minute_text(outcome['created_at'])}</td>"
            f'<td><span class="outcome {text_html(slugify(outcome["outcome"]))}">{kind}</span></td>'
            "</tr>"
        )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped


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
        "outcome_rows": _outcome_rows(detail["outcomes"]),
        "answers": answers,
        "renewal_requests": requests[::-1],
        "answer": describe(latest, now) if latest is not None else None,
    }
    return render(request, "ledger/freeze_detail.html", context)
