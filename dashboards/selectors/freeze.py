"""The freeze page's read: the freeze, its versions, its owner's answers, its test's runs."""

from __future__ import annotations

import datetime
from typing import Any, TypedDict

from django.http import Http404
from django.utils import timezone

from dashboards.selectors.repository import FreezeRow, freeze_row
from evidence import visibility
from evidence.models import Repository, Run, TestName, TestResult
from evidence.results import RECENT_RUNS
from ledger.models import Freeze, FreezeAction, FreezeEvent, LedgerVersion
from ledger.owners import owners_resolve
from sqlreads import Read, fields

BUCKET_LABELS = {bucket.value: bucket.label for bucket in TestResult.Bucket}


class OutcomeRow(TypedDict):
    """The frozen test in one run: ``outcome`` passed, failed, skipped, xfail or "not run"."""

    run: int
    sha: str
    branch: str
    label: str
    created_at: datetime.datetime
    outcome: str


class FreezePageRow(FreezeRow):
    current: bool


class FreezeDetail(TypedDict):
    """The freeze page. ``row`` as the repository page's ledger rows, with ``current``;
    ``covers`` the blast radius; ``events`` oldest first; ``actions`` newest first, of every
    version; ``outcomes`` the repository's latest runs, newest first."""

    repository: Repository
    freeze: Freeze
    row: FreezePageRow
    covers: list[str]
    events: list[dict[str, Any]]
    actions: list[FreezeAction]
    outcomes: list[OutcomeRow]


# Reads of a visible repository's rows (sqlreads).
_FREEZE = Read.of(Freeze, "WHERE repository_id = %s AND freeze_id = %s ORDER BY id LIMIT 1")
_FREEZE_ACTIONS = Read.of(FreezeAction, "WHERE freeze_id = %s ORDER BY created_at DESC, id DESC")
# Of each event's ledger version only the sha: a version holds the ledger's whole text.
_FREEZE_EVENTS = Read(
    """
    SELECT e.kind, e.silent, e.chain, v.sha, e.created_at, e.before, e.after
      FROM {FreezeEvent} e
      JOIN {LedgerVersion} v ON v.id = e.ledger_version_id
     WHERE e.freeze_id = %s
     ORDER BY e.created_at, e.id
    """,
    [
        *fields(FreezeEvent, "kind", "silent", "chain"),
        ("sha", None),
        *fields(FreezeEvent, "created_at", "before", "after"),
    ],
    tables={"FreezeEvent": FreezeEvent, "LedgerVersion": LedgerVersion},
)
_READY_RUNS = Read(
    """
    SELECT id, sha, branch, label, created_at
      FROM {Run}
     WHERE repository_id = %s AND status = %s
     ORDER BY created_at DESC, id DESC
     LIMIT %s
    """,
    [("pk", None), *fields(Run, "sha", "branch", "label", "created_at")],
    tables={"Run": Run},
)
_FREEZE_RESULTS = Read(
    """
    SELECT r.run_id, r.bucket
      FROM {TestResult} r
      JOIN {TestName} t ON t.id = r.test_id
     WHERE t.repository_id = %s AND t.nodeid_sha256 = %s AND r.run_id = ANY(%s)
    """,
    [("run_id", None), ("bucket", None)],
    tables={"TestResult": TestResult, "TestName": TestName},
)


def freeze_detail(*, user, repository_slug: str, freeze_id: str) -> FreezeDetail:
    """The freeze page; Http404 when not visible or not found. ``freeze_id`` is the ledger id."""
    repository = visibility.repository(user, repository_slug)
    found = _FREEZE.instances(Freeze, [repository.pk, freeze_id])
    if not found:
        raise Http404("No such freeze.")
    freeze = found[0]
    today = timezone.localdate()
    owners = owners_resolve([freeze.owner])
    actions = _FREEZE_ACTIONS.instances(FreezeAction, [freeze.pk])
    current_action = next((a for a in actions if a.freeze_version == freeze.version), None)
    events = _FREEZE_EVENTS.rows([freeze.pk])
    runs = _READY_RUNS.rows([repository.pk, Run.Status.READY, RECENT_RUNS])
    # The frozen test's result in each of them, through its name's digest (one query).
    buckets: dict[int, int] = {}
    if runs:
        params = [repository.pk, TestName.digest(freeze.nodeid), [run["pk"] for run in runs]]
        buckets = dict(_FREEZE_RESULTS.values(params))
    outcomes: list[OutcomeRow] = [
        {
            "run": run["pk"],
            "sha": run["sha"],
            "branch": run["branch"],
            "label": run["label"],
            "created_at": run["created_at"],
            "outcome": BUCKET_LABELS.get(buckets.get(run["pk"], 0), "not run"),
        }
        for run in runs
    ]
    row = freeze_row(freeze, today=today, owners=owners, action=current_action)
    return {
        "repository": repository,
        "freeze": freeze,
        "row": {**row, "current": freeze.current},
        "covers": list(freeze.covers),
        "events": events,
        "actions": actions,
        "outcomes": outcomes,
    }
