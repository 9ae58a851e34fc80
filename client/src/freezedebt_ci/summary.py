"""Human summaries of a report: a few lines for a terminal, Markdown for a pull request."""

from __future__ import annotations

from typing import Any

_LIST_LIMIT = 20


def _signed(value: int | None) -> str:
    return "n/a" if value is None else f"{value:+d}"


def text_summary(report: dict[str, Any], *, page_url: str | None = None) -> str:
    figures = report["figures"]
    lines = [
        f"verdict: {report['verdict'].upper()}  (status {report['status']}, "
        f"today {report['today']})"
    ]
    if page_url:
        lines.append(f"report page        : {page_url}")
    if report["status"] == "ready":
        lines += [
            f"net executed delta : {_signed(figures['net_executed_delta'])}",
            f"earned / borrowed  : {figures['earned']} / {figures['borrowed']}",
            f"new skips          : {len(report['new_skips'])}",
            f"retired skips      : {len(report['retired_skips'])}",
            f"lost               : {len(report['lost'])}",
            f"new xfails         : {len(report['new_xfails'])}",
        ]
    hits = report["frozen_surface_hits"]
    lines.append(
        "frozen surface hit : "
        + (
            ", ".join(
                f"{h['freeze']} ({'compensated' if h['compensated'] else 'open'})" for h in hits
            )
            or "none"
        )
    )
    section = report.get("analysis")
    if section:
        if section.get("status") == "missing":
            lines.append("analysis           : none sent")
        else:
            counts = section.get("counts", {})
            lines.append(
                f"analysis           : {section.get('class')} ({section.get('status')}), "
                f"{counts.get('symbols', 0)} changed symbols, "
                f"{counts.get('untested_callers', 0)} untested callers"
            )
    if report["status"] != "ready" and report.get("pending_reason"):
        lines.append(f"pending            : {report['pending_reason']}")
    own, inherited = split_problems(report["problems"])
    for problem in own:
        lines.append(f"{problem['severity'].upper():5} {problem['code']}: {problem['message']}")
        if problem.get("action"):
            lines.append(f"      what to do: {problem['action']}")
    if inherited:
        lines.append("inherited from the ledger (not this patch's doing; its owners act):")
        for problem in inherited:
            lines.append(f"{problem['severity'].upper():5} {problem['code']}: {problem['message']}")
            if problem.get("action"):
                lines.append(f"      what to do: {problem['action']}{_owners(problem)}")
    return "\n".join(lines) + "\n"


def split_problems(
    problems: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The patch's own problems, and those it inherited from the ledger (``origin`` ledger)."""
    own = [p for p in problems if p.get("origin") != "ledger"]
    return own, [p for p in problems if p.get("origin") == "ledger"]


def _owners(problem: dict[str, Any]) -> str:
    owners = problem.get("owners") or []
    return f" (owners: {', '.join(map(str, owners))})" if owners else ""


def _bullets(items: list[str]) -> list[str]:
    shown = [f"- `{item}`" for item in items[:_LIST_LIMIT]]
    if len(items) > _LIST_LIMIT:
        shown.append(f"- … and {len(items) - _LIST_LIMIT} more")
    return shown


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (and inside HTML ``<details>``)."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _names(items: list[str], total: int, *, marked: set[str] | None = None) -> str:
    if not items:
        return "none"
    shown = ", ".join(
        f"`{_cell(item)}`" + (" ⚠" if marked and item in marked else "") for item in items
    )
    return shown + (f" … ({total} in all)" if total > len(items) else "")


def analysis_markdown(section: dict[str, Any] | None) -> list[str]:
    """The report's ``analysis`` section as a short block, its caller map folded away."""
    if not section:
        return []
    if section.get("status") == "missing":
        return ["### Analysis", "", "No analysis was sent with this patch.", ""]
    if section.get("status") == "pending":
        return ["### Analysis", "", "The server is still analyzing this patch itself.", ""]
    counts = section.get("counts", {})
    status = "" if section.get("status") == "complete" else " (**incomplete**)"
    out = [
        "### Analysis",
        "",
        f"Class **{section.get('class')}**{status}: {counts.get('files', 0)} files, "
        f"{counts.get('symbols', 0)} changed symbols, {counts.get('callers', 0)} callers "
        f"({counts.get('untested_callers', 0)} untested), {counts.get('tests', 0)} tests, "
        f"impact cone {counts.get('cone', 0)}."
        + (" Analyzed by the server itself." if section.get("source") == "server" else ""),
    ]
    if section.get("message"):
        out.append(f"{section['message']}")
    out.append("")
    symbols = section.get("symbols", [])
    if symbols:
        total = section.get("symbols_total", len(symbols))
        out += [
            f"<details><summary>Caller map ({total} changed symbols)</summary>",
            "",
            "| symbol | class | callers (⚠ untested) | tests (⚠ added or edited by this patch) "
            "| frozen by |",
            "|---|---|---|---|---|",
        ]
        for entry in symbols:
            untested = set(entry.get("untested_callers", []))
            candidates = set(entry.get("candidate_tests", []))
            callers = _names(
                entry.get("callers", []), entry.get("callers_count", 0), marked=untested
            )
            tests = _names(entry.get("tests", []), entry.get("tests_count", 0), marked=candidates)
            out.append(
                f"| `{_cell(entry['symbol'])}` ({entry.get('change')}) | {entry.get('class')} | "
                f"{callers} | {tests} | {', '.join(entry.get('frozen_by', [])) or '—'} |"
            )
        if total > len(symbols):
            out.append(f"\n… and {total - len(symbols)} more changed symbols.")
        out += ["", "</details>", ""]
    return out


def markdown_summary(
    report: dict[str, Any], *, title: str = "Freeze Debt report", page_url: str | None = None
) -> str:
    """Markdown fit for a pull-request comment or a CI job summary; ``page_url`` links the
    report's page on the server."""
    verdict = report["verdict"]
    icon = {"pass": "✅", "block": "⛔", "pending": "⏳"}.get(verdict, "")
    out = [f"## {icon} {title}: **{verdict}**", ""]
    if page_url:
        out += [f"[The report on Freeze Debt]({page_url})", ""]
    figures = report["figures"]
    if report["status"] == "ready":
        base, head = figures["base"], figures["head"]
        out += [
            "| | base | head |",
            "|---|---:|---:|",
            *(
                f"| {name} | {base[name]} | {head[name]} |"
                for name in ("passed", "failed", "skipped", "xfail")
            ),
            "",
            f"Net executed delta **{_signed(figures['net_executed_delta'])}**; "
            f"earned {figures['earned']}, borrowed {figures['borrowed']}.",
            "",
        ]
    else:
        why = report.get("pending_reason") or "a run is missing"
        out += [f"The report is pending: {why}.", ""]
    own, inherited = split_problems(report["problems"])
    for heading, group in (
        ("### Problems of this patch", own),
        ("### Inherited from the ledger (not this patch's doing; its owners act)", inherited),
    ):
        if not group:
            continue
        out += [heading, ""]
        for problem in group:
            out.append(f"- **{problem['severity']}** `{problem['code']}`: {problem['message']}")
            if problem.get("action"):
                who = _owners(problem) if problem in inherited else ""
                out.append(f"  - what to do: {problem['action']}{who}")
        out.append("")
    for key, heading in (
        ("new_skips", "New skips"),
        ("lost", "Lost tests"),
        ("retired_skips", "Retired skips"),
        ("new_xfails", "New xfails"),
    ):
        if report[key]:
            out += [f"### {heading} ({len(report[key])})", "", *_bullets(report[key]), ""]
    out += analysis_markdown(report.get("analysis"))
    if report["frozen_surface_hits"]:
        out += [
            "### Frozen surface",
            "",
            "| freeze | test | paths | compensated |",
            "|---|---|---|---|",
        ]
        for hit in report["frozen_surface_hits"]:
            out.append(
                f"| {hit['freeze']} | `{hit['test']}` | {', '.join(hit['paths'])} | "
                f"{'yes' if hit['compensated'] else 'no'} |"
            )
        out.append("")
    changed_files = [
        row
        for row in report["per_file"]
        if row["delta"] or row["new_skips"] or row["lost"] or row["retired_skips"]
    ]
    if changed_files:
        out += [
            "### Per-file delta",
            "",
            "| file | base | head | delta | new skips | lost |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for row in changed_files[:_LIST_LIMIT]:
            out.append(
                f"| `{row['file']}` | {row['base_passed']} | {row['head_passed']} | "
                f"{row['delta']:+d} | {row['new_skips']} | {row['lost']} |"
            )
        out.append("")
    return "\n".join(out)
