"""A patch's report: the verdict first, then every problem and figure."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboards import exports, selectors
from dashboards.views.common import change_text

PER_FILE_SORTS = (
    "file",
    "base_passed",
    "head_passed",
    "delta",
    "new_skips",
    "retired_skips",
    "lost",
)
PER_FILE_HEADERS = {
    "file": "File",
    "base_passed": "Passed on base",
    "head_passed": "Passed on head",
    "delta": "Delta",
    "new_skips": "New skips",
    "retired_skips": "Retired skips",
    "lost": "Lost",
}


def _changed(row: dict[str, Any]) -> bool:
    return any(row.get(key) for key in ("delta", "new_skips", "retired_skips", "lost"))


def _sorted_per_file(rows: list[dict[str, Any]], sort: str) -> tuple[list[dict[str, Any]], str]:
    """The per-file rows in the order ``?sort=`` asks (``-key`` descending); the default puts
    swaps and losses first, so "ten cheap tests for one expensive one" is on top, then the
    other files the patch changed the figures of, then the unchanged ones."""
    key = sort.removeprefix("-")
    if key not in PER_FILE_SORTS:
        ordered = sorted(
            rows, key=lambda r: (not r.get("swap"), not _changed(r), -r.get("lost", 0), r["file"])
        )
        return ordered, ""
    ordered = sorted(rows, key=lambda r: (r.get(key) is None, r.get(key), r["file"]))
    if sort.startswith("-"):
        ordered.reverse()
    return ordered, sort


def _changed_paths(changed: Any) -> list[dict[str, str]]:
    """The patch's changed paths as stored (name-status lines or objects), for display."""
    rows = []
    for entry in changed or []:
        if isinstance(entry, dict):
            path = entry.get("path") or entry.get("new") or ""
            old = entry.get("old") or entry.get("old_path") or ""
            rows.append({"status": str(entry.get("status", "")), "path": path, "old": old})
        elif isinstance(entry, str):
            parts = entry.split("\t")
            rows.append(
                {
                    "status": parts[0] if len(parts) > 1 else "",
                    "path": parts[-1],
                    "old": parts[1] if len(parts) > 2 else "",
                }
            )
    return rows


@require_GET
@login_required
def patch(request: HttpRequest, slug: str, patch_id: int) -> HttpResponse:
    detail = selectors.patch_detail(user=request.user, repository_slug=slug, patch_id=patch_id)
    per_file, sort = _sorted_per_file(detail["per_file"], request.GET.get("sort", ""))
    headers = []
    for key in PER_FILE_SORTS:
        next_sort = f"-{key}" if sort == key else key
        headers.append(
            {
                "key": key,
                "label": PER_FILE_HEADERS[key],
                "href": "?" + urlencode({"sort": next_sort}) + "#per-file",
                "active": sort.removeprefix("-") == key,
                "descending": sort == f"-{key}",
                "numeric": key != "file",
            }
        )
    if request.GET.get("format") == "csv":
        return exports.csv_response(
            per_file, list(PER_FILE_SORTS), f"{slug}-{detail['patch'].ref}-per-file.csv"
        )
    problem_items: dict[str, set[str]] = {}
    for problem in detail["problems"]:
        problem_items.setdefault(problem.get("code", ""), set()).update(problem.get("items", []))
    unaccounted = problem_items.get("unaccounted-skip", set())
    figures = detail["figures"]
    counts: list[dict[str, Any]] = [
        {
            "bucket": bucket,
            "base": (figures.get("base") or {}).get(bucket),
            "head": (figures.get("head") or {}).get(bucket),
        }
        for bucket in ("passed", "failed", "skipped", "xfail")
    ]
    for row in counts:
        if row["base"] is not None and row["head"] is not None:
            row["change"] = change_text(row["head"] - row["base"])
    earned, borrowed = detail["earned"] or 0, detail["borrowed"] or 0
    context = {
        **detail,
        "counts": counts,
        "blocking": sum(1 for p in detail["problems"] if p.get("severity") == "block"),
        "warnings": sum(1 for p in detail["problems"] if p.get("severity") == "warn"),
        "new_skip_rows": [
            {"test": test, "accounted": test not in unaccounted} for test in detail["new_skips"]
        ],
        "net_delta": change_text(figures.get("net_executed_delta")),
        "earned_share": round(100 * earned / (earned + borrowed), 1) if earned + borrowed else None,
        "changed_paths": _changed_paths(detail["patch"].changed),
        "per_file": per_file,
        "per_file_headers": headers,
        "swaps": sum(1 for row in per_file if row.get("swap")),
        "csv_per_file": "?" + urlencode({"sort": sort, "format": "csv"}),
    }
    return render(request, "dashboards/patch.html", context)
