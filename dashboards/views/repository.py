"""A repository's page: trends, ledger, history, patches, and its policy form."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from dashboards import charts, exports, selectors
from dashboards.actions import repository_actions
from dashboards.forms import InlineWidgetRenderer
from dashboards.selectors import weekly_from_series
from dashboards.views import tables
from dashboards.views.common import Filters, chart_panel
from evidence import visibility
from freezedebt_ci.ledger import EXPIRING_WITHIN_DAYS
from freezedebt_ci.policy import DEFAULT_SEVERITIES, SEVERITIES
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
    def initial_from(cls, policy: Mapping[str, Any], overrides: dict[str, str]) -> dict[str, Any]:
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

    def severity_fields(self) -> list[forms.BoundField]:
        """The severity selects, one a problem code (their rows: tables.severity_rows)."""
        return [self[name] for name in self.fields if name.startswith("severity_")]

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
    urls = {
        row["freeze_id"]: reverse("dashboards:freeze", args=[slug, row["freeze_id"]])
        for row in answers["freezes"]
    }
    for row in answers["freezes"]:
        row["url"] = urls[row["freeze_id"]]
    context = {
        **detail,
        **answers,
        "expiring_within": EXPIRING_WITHIN_DAYS,
        "patch_rows": tables.patch_rows(detail["patches"], slug),
        "history_rows": tables.history_rows(detail["history"], slug),
        "chains": [
            {"freeze_id": freeze_id, "count": count, "url": _freeze_url(urls, slug, freeze_id)}
            for freeze_id, count in detail["chains"].items()
        ],
        "severity_rows": tables.severity_rows(form.severity_fields()),
        "filters": filters,
        "charts": chart_list,
        "form": form,
        "verdict_counts": _verdict_counts(detail["patches"]),
        "policy_changes": [_policy_change(change) for change in detail["policy"]["changes"]],
    }
    return render(request, "dashboards/repository.html", context, status=status)


def _freeze_url(urls: dict[str, str], slug: str, freeze_id: str) -> str:
    return urls.get(freeze_id) or reverse("dashboards:freeze", args=[slug, freeze_id])


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


def _verdict_counts(patches: Sequence[Mapping[str, Any]]) -> dict[str, int]:
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
            user = cast(User, request.user)  # signed in: login_required
            policy_update(repository=repository, user=user, **form.changes())
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
