"""A repository's page: trends, ledger, history, patches, and its policy form."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import localtime
from django.views.decorators.http import require_GET, require_http_methods

from dashboards import charts, exports, selectors
from dashboards.actions import repository_actions
from dashboards.forms import InlineWidgetRenderer
from dashboards.selectors import weekly_from_series
from dashboards.views.common import Filters, chart_panel, minute_text, text_html
from evidence import visibility
from freezedebt_ci.ledger import EXPIRING_WITHIN_DAYS
from freezedebt_ci.policy import DEFAULT_SEVERITIES, SEVERITIES
from ledger.models import FreezeAction
from ledger.services import policy_update

SEVERITY_DEFAULT = ""


class PolicyForm(forms.Form):
    """A repository's policy as a lead edits it; saved only through ``policy_update``."""

    default_renderer = InlineWidgetRenderer()

    max_freeze_days = forms.IntegerField(
        label="Longest freeze (days)",
        min_value=1,
        max_value=365,
        help_text="A freeze whose expiry lies further after its opening is an invalid-freeze.",
    )
    fixture_paths = forms.CharField(
        label="Fixture paths",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 50}),
        required=False,
        help_text="One pattern a line: an exact path, dir/** or **/name.",
    )
    ledger_path = forms.CharField(
        label="Ledger file",
        max_length=500,
        help_text="A patch that changes it gets a ledger-in-patch problem.",
    )
    require_analysis = forms.BooleanField(
        label="Require an analysis",
        required=False,
        help_text="A patch declared without a complete analysis gets an analysis-missing problem.",
    )

    @classmethod
    def initial_from(cls, policy: dict[str, Any], overrides: dict[str, str]) -> dict[str, Any]:
        initial: dict[str, Any] = {
            "max_freeze_days": policy["max_freeze_days"],
            "fixture_paths": "\n".join(policy["fixture_paths"]),
            "ledger_path": policy["ledger_path"],
            "require_analysis": policy.get("require_analysis", False),
        }
        for code in DEFAULT_SEVERITIES:
            initial[f"severity_{code}"] = overrides.get(code, SEVERITY_DEFAULT)
        return initial

    def plain_fields(self) -> list[forms.BoundField]:
        """The fields other than the severities, in order."""
        return [self[name] for name in self.fields if not name.startswith("severity_")]

    def severity_rows(self) -> SafeString:
        """The severity selects as table rows, every text escaped: written here because
        Django's widget templates, and then a template loop over their options, took a sixth of
        the repository page's time for sixteen of them."""
        lines = []
        for name, field in self.fields.items():
            if not name.startswith("severity_"):
                continue
            bound = self[name]
            value = bound.value() or SEVERITY_DEFAULT
            options = "".join(
                f"{start}{' selected' if option == value else ''}{end}"
                for option, start, end in _severity_options(name)
            )
            errors = "".join(
                f'<div class="error">{text_html(error)}</div>' for error in bound.errors
            )
            html_id, html_name = text_html(bound.auto_id), text_html(bound.html_name)
            lines.append(
                f'<tr><th scope="row"><label for="{html_id}"><code>{text_html(field.label)}'
                f'</code></label></th><td><select name="{html_name}" id="{html_id}">{options}'
                f"</select>{errors}</td></tr>"
            )
        return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped

    def changes(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "severities": {
                code: data[f"severity_{code}"]
                for code in sorted(DEFAULT_SEVERITIES)
                if data.get(f"severity_{code}")
            },
            "max_freeze_days": data["max_freeze_days"],
            "fixture_paths": [
                line.strip() for line in data["fixture_paths"].splitlines() if line.strip()
            ],
            "ledger_path": data["ledger_path"].strip(),
            "require_analysis": data["require_analysis"],
        }


@functools.cache
def _severity_options(name: str) -> tuple[tuple[str, str, str], ...]:
    """A severity select's options as (value, '<option value="…"', '>text</option>'), escaped
    once: the same for every form."""
    return tuple(
        (option, f'<option value="{text_html(option)}"', f">{text_html(text)}</option>")
        for option, text in PolicyForm.base_fields[name].choices
    )


# A select per problem code, declared once on the class (each form copies its declared fields,
# which costs half of making them anew).
PolicyForm.base_fields.update(
    {
        f"severity_{code}": forms.ChoiceField(
            label=code,
            required=False,
            choices=[(SEVERITY_DEFAULT, f"default ({DEFAULT_SEVERITIES[code]})")]
            + [(severity, severity) for severity in SEVERITIES],
        )
        for code in sorted(DEFAULT_SEVERITIES)
    }
)


def _repository_page(
    request: HttpRequest, slug: str, *, form: PolicyForm | None = None, status: int = 200
) -> HttpResponse:
    filters = Filters(request.GET, today=timezone.localdate())
    detail = selectors.repository_detail(
        user=request.user, slug=slug, start=filters.start, end=filters.end
    )
    if form is None:
        policy = detail["policy"]
        form = PolicyForm(initial=PolicyForm.initial_from(policy, policy["overrides"]))
    series, weekly = detail["series"], charts.blocked_share_table(detail["weekly"])
    query = filters.query(repositories=False)

    def csv(name: str) -> str:
        return f"{reverse('dashboards:repository-export', args=[slug, name])}?{query}"

    # One repository's series has a row a day: its charts' tables are those rows; its weeks
    # are summed into the blocked share's table.
    chart_list = [
        chart_panel(
            "trend",
            charts.repository_trend_figure(series),
            series,
            columns=charts.REPOSITORY_TREND_FIELDS,
            csv=csv("trend"),
        ),
        chart_panel(
            "patch-outcomes",
            charts.patch_outcomes_figure(series),
            series,
            columns=("patches", "passed", "blocked", "earned", "borrowed"),
            csv=csv("patch-outcomes"),
        ),
        chart_panel(
            "blocked-share",
            charts.blocked_share_figure(weekly),
            weekly,
            columns=("patches", "blocked", "share"),
            csv=csv("blocked-share"),
            by_week=True,
        ),
    ]
    answers = repository_actions(detail["freezes"], detail["renewal_requests"])
    link = _freeze_links(slug)
    context = {
        **detail,
        **answers,
        "ledger_rows": _ledger_rows(answers["freezes"], link),
        "expiring_within": EXPIRING_WITHIN_DAYS,
        "history_rows": _history_rows(detail["history"], link),
        "chain_links": _chain_links(detail["chains"], link),
        "patch_rows": _patch_rows(detail["patches"], slug),
        "filters": filters,
        "charts": chart_list,
        "form": form,
        "verdict_counts": _verdict_counts(detail["patches"]),
        "policy_changes": [_policy_change(change) for change in detail["policy"]["changes"]],
    }
    return render(request, "dashboards/repository.html", context, status=status)


# The patches and history tables, rows as HTML: built here rather than with template loops,
# which took more time than reading them (50 patches and up to 60 events per page).


_NONE = '<span class="empty">none</span>'


def _patch_rows(patches: list[dict[str, Any]], slug: str) -> SafeString:
    link = text_html(reverse("dashboards:patch", args=[slug, 0])[: -len("0/")])
    lines = []
    for row in patches:
        codes = " ".join(f"<code>{text_html(code)}</code>" for code in row["codes"]) or _NONE
        verdict = text_html(row["verdict"])
        lines.append(
            f'<tr><th scope="row"><a href="{link}{row["id"]}/">{text_html(row["ref"])}</a></th>'
            f"<td>{text_html(row['title'])}</td><td>{text_html(row['author'])}</td>"
            f"<td>{minute_text(row['created_at'])}</td>"
            f'<td><span class="badge {verdict}">{verdict}</span></td><td>{codes}</td></tr>'
        )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped


_SILENT = ' <span class="badge silent" title="renewed without a new reason">silent renewal</span>'


def _freeze_links(slug: str) -> Callable[[str], str]:
    """Each freeze page's address, escaped for HTML, worked out once per freeze."""
    links: dict[str, str] = {}

    def link(freeze_id: str) -> str:
        if freeze_id not in links:
            links[freeze_id] = text_html(reverse("dashboards:freeze", args=[slug, freeze_id]))
        return links[freeze_id]

    return link


_UNOWNED = (
    '<span class="badge unowned" title="{why}: nobody gets its reminders">unowned freeze</span>'
)


def _owner_cell(row: dict[str, Any]) -> str:
    owner = text_html(row["owner"])
    if row["unowned"]:
        if row["owner"]:
            return f"{owner} " + _UNOWNED.format(
                why="the handle names nobody in the owner directory"
            )
        return _UNOWNED.format(why="no owner in the ledger")
    # The handle under the name, unless it says the same (an address is its own owner).
    if row["owner_name"] and row["owner_name"].casefold() != (row["owner"] or "").casefold():
        return f"{text_html(row['owner_name'])} <small>{owner}</small>"
    return owner


def _answer_cell(answer: dict[str, Any] | None) -> str:
    if not answer:
        return '<span class="badge no">not acknowledged</span>'
    at = localtime(answer["at"])
    owner = text_html(answer["owner"])
    label = text_html(FreezeAction.Action(answer["kind"]).label)
    when = text_html(minute_text(at, zone=True))
    cell = (
        f'<span class="badge {text_html(answer["kind"])}" title="{owner} {label}">'
        f"{text_html(answer['verb'])}</span> "
        f'<time datetime="{at.isoformat()}" title="{when}, {owner}">{text_html(answer["ago"])}'
        "</time>"
    )
    if answer["reason"]:
        cell += f": <q>{text_html(answer['reason'])}</q>"
    return cell


def _ledger_rows(freezes: list[dict[str, Any]], link: Callable[[str], str]) -> SafeString:
    lines = []
    for row in freezes:
        expires = row["expires"].isoformat() if row["expires"] else "\N{EM DASH}"
        days_left = row["days_left"]
        if days_left is None:
            days = "\N{EM DASH}"
        elif days_left < 0:
            days = f'<span class="up">{days_left}</span>'
        else:
            days = str(days_left)
        status = text_html(row["status"])
        lines.append(
            f'<tr><th scope="row"><a href="{link(row["freeze_id"])}">'
            f"{text_html(row['freeze_id'])}</a></th><td><code>{text_html(row['test'])}</code></td>"
            f"<td>{_owner_cell(row)}</td><td>{expires}</td>"
            f'<td class="num">{days}</td><td><span class="badge {status}">{status}</span></td>'
            f'<td class="num">{row["renewals"]}</td>'
            f'<td class="answer">{_answer_cell(row["answer"])}</td></tr>'
        )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped


def _chain_links(chains: dict[str, int], link: Callable[[str], str]) -> SafeString:
    """ "FRZ-1 renewed 2 times; FRZ-4 renewed 1 time", each freeze linked, every text escaped."""
    return mark_safe(  # noqa: S308 - every piece of text is escaped
        "; ".join(
            f'<a href="{link(freeze_id)}">{text_html(freeze_id)}</a> renewed {count} '
            f"time{'' if count == 1 else 's'}"
            for freeze_id, count in chains.items()
        )
    )


def _history_rows(history: list[dict[str, Any]], link: Callable[[str], str]) -> SafeString:
    lines = []
    for event in history:
        href = link(event["freeze_id"])
        silent = _SILENT if event["silent"] else ""
        chain = event["chain"] if event["kind"] == "renewed" else "\N{EN DASH}"
        lines.append(
            f"<tr><td>{minute_text(event['created_at'])}</td>"
            f'<td><a href="{href}">{text_html(event["freeze_id"])}</a></td>'
            f'<td>{text_html(event["kind"])}{silent}</td><td class="num">{text_html(chain)}</td>'
            f"<td><code>{text_html(event['sha'][:12])}</code></td></tr>"
        )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped


def _policy_change(change: dict[str, Any]) -> dict[str, Any]:
    """An audit row (``before``, ``after``, ``created_at``, ``by``: a username or None) as
    "who, when, what changed from what to what"."""
    before, after = change["before"] or {}, change["after"] or {}
    fields = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) == after.get(key):
            continue
        if key == "severities":
            old, new = before.get(key) or {}, after.get(key) or {}
            for code in sorted(set(old) | set(new)):
                if old.get(code) != new.get(code):
                    fields.append((code, old.get(code, "default"), new.get(code, "default")))
        else:
            fields.append((key, before.get(key), after.get(key)))
    return {"at": change["created_at"], "by": change["by"], "fields": fields}


def _verdict_counts(patches: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"pass": 0, "block": 0, "pending": 0}
    for patch in patches:
        counts[patch["verdict"]] = counts.get(patch["verdict"], 0) + 1
    return counts


@require_GET
@login_required
def repository(request: HttpRequest, slug: str) -> HttpResponse:
    return _repository_page(request, slug)


REPOSITORY_EXPORTS: dict[str, Callable[[dict[str, Any]], HttpResponse]] = {
    "trend": lambda d: exports.repository_trend_csv(d["series"], f"{d['slug']}-trend.csv"),
    "patch-outcomes": lambda d: exports.csv_response(
        charts.patch_outcomes_table(d["series"]),
        ["date", "patches", "passed", "blocked", "earned", "borrowed"],
        f"{d['slug']}-patch-outcomes.csv",
    ),
    "blocked-share": lambda d: exports.blocked_share_csv(
        d["weekly"], f"{d['slug']}-blocked-share.csv"
    ),
    "debt-series": lambda d: exports.series_csv(d["series"], f"{d['slug']}-debt-series.csv"),
}


@require_GET
@login_required
def repository_export(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    if name not in REPOSITORY_EXPORTS:
        raise Http404("No such export.")
    visibility.repository(request.user, slug)
    filters = Filters(request.GET, today=timezone.localdate())
    series = selectors.debt_series(
        user=request.user, start=filters.start, end=filters.end, repositories=[slug]
    )
    data = {"slug": slug, "series": series, "weekly": weekly_from_series(series)}
    return REPOSITORY_EXPORTS[name](data)


@require_http_methods(["POST"])
@login_required
def policy_edit(request: HttpRequest, slug: str) -> HttpResponse:
    """Leads of the repository (and staff) change its policy; every change is audited."""
    repository = visibility.repository(request.user, slug)
    form = PolicyForm(request.POST)
    if form.is_valid():
        try:
            policy_update(repository=repository, user=request.user, **form.changes())
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                target = (
                    field if field in ("max_freeze_days", "fixture_paths", "ledger_path") else None
                )
                for problem in problems:
                    form.add_error(target, problem)
        else:
            messages.success(request, "Policy saved. Reports computed from now on use it.")
            return redirect(reverse("dashboards:repository", args=[slug]) + "#policy")
    return _repository_page(request, slug, form=form, status=400)
