"""Human summaries of a report: a few lines for a terminal, Markdown for a pull request."""

from __future__ import annotations

from typing import Any

_LIST_LIMIT = 20


def _signed(value: int | None) -> str:
    return "n/a" if value is None else f"{value:+d}"


def text_summary(report: dict[str, Any]) -> str:
    figures = report["figures"]
    lines = [
        f"verdict: {report['verdict'].upper()}  (status {report['status']}, "
        f"today {report['today']})"
    ]
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
    for problem in report["problems"]:
        lines.append(f"{problem['severity'].upper():5} {problem['code']}: {problem['message']}")
    return "\n".join(lines) + "\n"


def _bullets(items: list[str]) -> list[str]:
    shown = [f"- `{item}`" for item in items[:_LIST_LIMIT]]
    if len(items) > _LIST_LIMIT:
        shown.append(f"- … and {len(items) - _LIST_LIMIT} more")
    return shown


def markdown_summary(report: dict[str, Any], *, title: str = "Freeze Debt report") -> str:
    """Markdown fit for a pull-request comment or a CI job summary."""
    verdict = report["verdict"]
    icon = {"pass": "✅", "block": "⛔", "pending": "⏳"}.get(verdict, "")
    out = [f"## {icon} {title}: **{verdict}**", ""]
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
        out += ["The report is pending: a run is missing.", ""]
    if report["problems"]:
        out += ["### Problems", ""]
        for problem in report["problems"]:
            out.append(f"- **{problem['severity']}** `{problem['code']}`: {problem['message']}")
        out.append("")
    for key, heading in (
        ("new_skips", "New skips"),
        ("lost", "Lost tests"),
        ("retired_skips", "Retired skips"),
        ("new_xfails", "New xfails"),
    ):
        if report[key]:
            out += [f"### {heading} ({len(report[key])})", "", *_bullets(report[key]), ""]
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
