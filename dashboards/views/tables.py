"""The table bodies written in Python rather than with template loops, each for a reason
measured with bench/bench_pages.py (the figures are in the commit that kept it). Every piece
of text is escaped with ``text_html``; everything else on the pages is templates.

A template pays for every variable, more for a number (it is localized) and most for a
``date`` filter or a ``{% url %}``: one row of such cells costs what the whole table costs here.
"""

from __future__ import annotations

import datetime
import html
from collections.abc import Mapping, Sequence
from typing import Any

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify
from django.utils.timezone import localtime

from dashboards.views.common import Filters


def text_html(value: object) -> str:
    """Text for HTML, as Django's escape makes it, without its lazy-string wrapper. Numbers
    have nothing to escape."""
    kind = type(value)
    if kind is int or kind is float:
        return repr(value)
    return html.escape(str(value))


def minute_text(moment: datetime.datetime) -> str:
    """A moment in the current time zone as the templates' ``date:"Y-m-d H:i"`` writes it."""
    return localtime(moment).strftime("%Y-%m-%d %H:%M")


_PLACEHOLDER = "987654321"


def url_format(name: str, *args: str) -> str:
    """URL ``name`` for ``args`` and a last, integer argument left as ``{}`` (for
    ``str.format``): one ``reverse`` for a table instead of one a row."""
    return reverse(name, args=[*args, int(_PLACEHOLDER)]).replace(_PLACEHOLDER, "{}")


def overview_rows(rows: Sequence[Mapping[str, Any]], filters: Filters) -> SafeString:
    """The overview table's rows: 50 repositories of 8 cells as a template loop cost more
    than the rest of an uncached overview."""
    # A repository slug is letters, digits, ".", "_" and "-": nothing to quote in a URL.
    link = reverse("dashboards:repository", args=["-slug-"])
    dates = f"?start={filters.start.isoformat()}&amp;end={filters.end.isoformat()}"
    lines = []
    for row in rows:
        slug = text_html(row["slug"])
        head = f'<a href="{link.replace("-slug-", slug)}{dates}">{text_html(row["name"])}</a>'
        head += f" <code>{slug}</code>"
        if not row["as_of"]:
            head += "<br><small>no snapshot yet</small>"
        cells = [f'<th scope="row">{head}</th>']
        answer = row.get("answer")
        for cell in row["cells"]:
            title = f' title="{text_html(cell["title"])}"' if cell["title"] else ""
            text = text_html(cell["value"])
            change = cell["change"]
            if change:  # from change_text: a sign, digits and a word of our own
                text += (
                    f' <small class="{change["class"]}" title="change over 30 days">'
                    f"{change['text']}</small>"
                )
            if cell["key"] == "unacknowledged" and answer:
                at = localtime(answer["at"])
                about = (
                    f"latest owner answer: {answer['freeze_id']}, {answer['owner']}, "
                    f"{at.strftime('%Y-%m-%d %H:%M')} {at.tzname() or ''}"
                )
                text += (
                    f'<br><small class="answer" title="{text_html(about)}">'
                    f"{text_html(answer['text'])}</small>"
                )
            cells.append(f'<td class="num"{title}>{text}</td>')
        lines.append(f"<tr>{''.join(cells)}</tr>")
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped


_NONE = '<span class="empty">none</span>'


def patch_rows(patches: Sequence[Mapping[str, Any]], slug: str) -> SafeString:
    """The repository page's latest 50 patches: a link and a date a row made the template
    loop half of the page's time."""
    link = text_html(url_format("dashboards:patch", slug))
    lines = []
    for row in patches:
        codes = " ".join(f"<code>{text_html(code)}</code>" for code in row["codes"]) or _NONE
        verdict = text_html(row["verdict"])
        lines.append(
            f'<tr><th scope="row"><a href="{link.format(row["id"])}">{text_html(row["ref"])}'
            f"</a></th><td>{text_html(row['title'])}</td><td>{text_html(row['author'])}</td>"
            f"<td>{minute_text(row['created_at'])}</td>"
            f'<td><span class="badge {verdict}">{verdict}</span></td><td>{codes}</td></tr>'
        )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped


_SILENT = ' <span class="badge silent" title="renewed without a new reason">silent renewal</span>'


def history_rows(history: Sequence[Mapping[str, Any]], slug: str) -> SafeString:
    """The repository page's latest 60 ledger events: a link and a date a row made the
    template loop a fifth of the page's time."""
    links: dict[str, str] = {}  # a freeze id may be a path: reversed once a freeze
    lines = []
    for event in history:
        freeze_id = event["freeze_id"]
        if freeze_id not in links:
            links[freeze_id] = text_html(reverse("dashboards:freeze", args=[slug, freeze_id]))
        silent = _SILENT if event["silent"] else ""
        chain = event["chain"] if event["kind"] == "renewed" else "\N{EN DASH}"
        lines.append(
            f"<tr><td>{minute_text(event['created_at'])}</td>"
            f'<td><a href="{links[freeze_id]}">{text_html(freeze_id)}</a></td>'
            f'<td>{text_html(event["kind"])}{silent}</td><td class="num">{text_html(chain)}</td>'
            f"<td><code>{text_html(event['sha'][:12])}</code></td></tr>"
        )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped


def repository_options(repositories: list[tuple[str, str]], chosen: list[str]) -> SafeString:
    """The repository filter's options, (slug, name) each, on every overview, cached or not:
    a template loop over 50 cost as much as the rest of a cached overview."""
    selected = set(chosen)
    return mark_safe(  # noqa: S308 - every piece of text is escaped
        "".join(
            f'<option value="{text_html(slug)}"{" selected" if slug in selected else ""}>'
            f"{text_html(name)} ({text_html(slug)})</option>"
            for slug, name in repositories
        )
    )


def severity_rows(fields: list[Any]) -> SafeString:
    """The policy form's severity selects (bound fields), one a problem code, as table rows:
    sixteen selects of six options cost a template loop a sixth of the repository page."""
    lines = []
    for bound in fields:
        value = bound.value() or ""
        options = "".join(
            f'<option value="{text_html(option)}"{" selected" if option == value else ""}>'
            f"{text_html(text)}</option>"
            for option, text in bound.field.choices
        )
        errors = "".join(f'<div class="error">{text_html(error)}</div>' for error in bound.errors)
        html_id, html_name = text_html(bound.auto_id), text_html(bound.html_name)
        lines.append(
            f'<tr><th scope="row"><label for="{html_id}"><code>{text_html(bound.label)}'
            f'</code></label></th><td><select name="{html_name}" id="{html_id}">{options}'
            f"</select>{errors}</td></tr>"
        )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped


def outcome_rows(outcomes: Sequence[Mapping[str, Any]]) -> SafeString:
    """The frozen test's latest 20 outcomes on the freeze page: a template loop (a link, a
    date and a slug a row) took a third of the page."""
    link = text_html(url_format("api:run-detail"))
    lines = []
    for outcome in outcomes:
        label = f" <small>{text_html(outcome['label'])}</small>" if outcome["label"] else ""
        kind = text_html(outcome["outcome"])
        branch = text_html(outcome["branch"]) if outcome["branch"] else "\N{EN DASH}"
        lines.append(
            f'<tr><td><a href="{link.format(outcome["run"])}">{outcome["run"]}</a></td>'
            f"<td><code>{text_html(outcome['sha'][:12])}</code>{label}</td><td>{branch}</td>"
            f"<td>{minute_text(outcome['created_at'])}</td>"
            f'<td><span class="outcome {text_html(slugify(outcome["outcome"]))}">{kind}</span>'
            "</td></tr>"
        )
    return mark_safe("\n".join(lines))  # noqa: S308 - every piece of text above is escaped
