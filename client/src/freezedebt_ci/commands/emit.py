"""A report as the commands print it: the text summary or the JSON on standard output, the
Markdown summary in a file, and the verdict as the exit status."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..exits import UsageError, verdict_exit
from ..report import report_json
from ..summary import markdown_summary, text_summary


def emit_report(
    report: dict[str, Any], *, as_json: bool, summary: Path | None, page_url: str | None = None
) -> int:
    """Print a report (summary or JSON), write the Markdown summary, return the exit code.
    ``page_url``: the server's page of the report, linked from both summaries."""
    sys.stdout.write(report_json(report) if as_json else text_summary(report, page_url=page_url))
    if summary is not None:
        try:
            summary.write_text(markdown_summary(report, page_url=page_url), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write summary {summary}: {exc.strerror}") from None
    return verdict_exit(report)
