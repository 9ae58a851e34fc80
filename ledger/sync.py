"""Syncing a repository's freeze ledger (SPEC 5.4): each pushed version is kept, the events
between it and the previous version are derived by the shared rules
(:func:`freezedebt_ci.ledger.diff_ledgers`), and the repository's freeze rows follow them."""

from dataclasses import dataclass
from typing import cast

from django.db import IntegrityError, transaction
from django.db.models import CharField

from config.jsontext import unstorable
from dashboards.live import refresh_later
from evidence.models import Repository
from evidence.results import results_backfill, tracked_nodeids
from freezedebt_ci.errors import InputError, Problem
from freezedebt_ci.ledger import OPENED, RENEWED, RETIRED, LedgerEvent, diff_ledgers, parse_ledger
from freezedebt_ci.ledger import Freeze as LedgerFreeze
from ledger.models import Freeze, FreezeEvent, LedgerVersion


class LedgerConflict(Exception):
    """The commit already has a stored ledger with other content."""

    def __init__(self, version: LedgerVersion) -> None:
        self.version = version
        super().__init__(
            f"The ledger of commit {version.sha} is already stored (version {version.pk}) "
            "with other content; a commit has one ledger."
        )


@dataclass(frozen=True)
class LedgerSync:
    version: LedgerVersion
    events: list[LedgerEvent]
    created: bool


def _field_limits() -> dict[str, tuple[str, int]]:
    """Ledger field -> (model field, max length) for the freeze columns of bounded length."""
    names = {"id": "freeze_id", "owner": "owner", "class": "freeze_class", "signature": "signature"}
    fields = {key: cast(CharField, Freeze._meta.get_field(name)) for key, name in names.items()}
    return {key: (field.name, field.max_length or 0) for key, field in fields.items()}


def check_storable(freezes: list[LedgerFreeze], *, source: str) -> None:
    """Refuse, as an input error, what the reader accepts but the database cannot hold."""
    problems: list[Problem] = []
    limits = _field_limits()
    for freeze in freezes:
        data = freeze.as_dict()
        where = f"freeze {freeze.id[:80]!r}"
        for key, (_, limit) in limits.items():
            value = data.get(key)
            if isinstance(value, str) and len(value) > limit:
                problems.append(Problem(f"{where}.{key}", f"longer than {limit} characters"))
        problem = unstorable(data, where)
        if problem is not None:
            problems.append(Problem(*problem))
    if problems:
        raise InputError(source, problems)


def _fill(row: Freeze, freeze: LedgerFreeze) -> None:
    row.nodeid = freeze.test or ""
    row.covers = list(freeze.covers)
    row.owner = freeze.owner or ""
    row.opened = freeze.opened
    row.expires = freeze.expires
    row.reason = freeze.reason or ""
    row.compensating_check = freeze.compensating_check or ""
    row.freeze_class = freeze.freeze_class or ""
    row.signature = freeze.signature or ""
    row.blocks_symbols = list(freeze.blocks_symbols)
    row.allowed_in_merge = freeze.allowed_in_merge


def _apply(
    event: LedgerEvent, row: Freeze | None, *, repository: Repository, version: LedgerVersion
) -> Freeze:
    """Bring the freeze row in line with one event; returns the saved row."""
    if row is None:
        # First sight of this id (or rows older than the history): a new row starts here.
        row = Freeze(repository=repository, freeze_id=event.freeze_id, first_version=version)
        row.version = 1
    else:
        # Any change ends the signed links of the previous version.
        row.version += 1
    if event.kind == RETIRED:
        row.current = False
        if row.pk is None:
            assert event.before is not None  # noqa: S101 - a retirement always has a before
            _fill(row, event.before)
            row.last_version = version
    else:
        assert event.after is not None  # noqa: S101 - only a retirement lacks an after
        _fill(row, event.after)
        row.last_version = version
        if event.kind == OPENED:
            # Opened again after a retirement: a new life, with its own renewal chain.
            row.current = True
            row.first_version = version
            row.renewals = 0
        elif event.kind == RENEWED:
            row.renewals = event.chain
    row.save()
    return row


def _stored_already(existing: LedgerVersion, raw: str) -> LedgerSync:
    if existing.raw != raw:
        raise LedgerConflict(existing)
    return LedgerSync(existing, [], created=False)


def ledger_sync(*, repository: Repository, sha: str, raw: str, path: str) -> LedgerSync:
    """Store the ledger file of commit ``sha`` as a new version and derive its events.

    Raises InputError (nothing stored) when the file cannot be read, and LedgerConflict when the
    commit already has a different ledger. The same file for the same commit again returns the
    stored version with ``created`` false and no events.
    """
    freezes = parse_ledger(raw, source=path)
    check_storable(freezes, source=path)
    with transaction.atomic():
        # One sync per repository at a time: each version must be diffed against its true
        # predecessor, and two versions diffed against the same one would both claim its events.
        Repository.objects.select_for_update().filter(pk=repository.pk).first()
        existing = LedgerVersion.objects.filter(repository=repository, sha=sha).first()
        if existing is not None:
            return _stored_already(existing, raw)

        previous = LedgerVersion.objects.latest_for(repository)
        before = [LedgerFreeze.from_dict(item) for item in previous.freezes] if previous else []
        rows = {row.freeze_id: row for row in Freeze.objects.filter(repository=repository)}
        tracked_before = {row.nodeid for row in rows.values()}  # the rows change below
        chains = {key: row.renewals for key, row in rows.items() if row.current}
        events = diff_ledgers(before, freezes, chains=chains)

        try:
            with transaction.atomic():
                version = LedgerVersion.objects.create(
                    repository=repository,
                    sha=sha,
                    path=path,
                    raw=raw,
                    freezes=[freeze.as_dict() for freeze in freezes],
                )
        except IntegrityError:
            # Only where the row lock above is a no-op (SQLite): a concurrent push won.
            return _stored_already(LedgerVersion.objects.get(repository=repository, sha=sha), raw)
        records = []
        for event in events:
            row = _apply(event, rows.get(event.freeze_id), repository=repository, version=version)
            records.append(
                FreezeEvent(
                    repository=repository,
                    freeze=row,
                    ledger_version=version,
                    kind=event.kind,
                    silent=event.silent,
                    chain=event.chain,
                    before=event.before.as_dict() if event.before else None,
                    after=event.after.as_dict() if event.after else None,
                )
            )
        FreezeEvent.objects.bulk_create(records)
        # Freezes this version holds unchanged are now "as of" it too.
        Freeze.objects.filter(repository=repository, current=True).update(last_version=version)
        # A test frozen for the first time has its results in the recent runs filled in: from
        # now on every run stores them (the row lock above waits for the runs being stored).
        newly_tracked = tracked_nodeids(repository.pk) - tracked_before
        if newly_tracked:
            results_backfill(repository.pk, newly_tracked)
        refresh_later(repository.pk)  # today's active, expiring and expired freezes
    return LedgerSync(version, events, created=True)
