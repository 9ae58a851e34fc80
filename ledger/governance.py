"""The governance files besides the ledger (the fixture lock and the oracle map), synced from the
default branch like the ledger, and the versions a patch's analysis must have used (SPEC 5.7,
``analysis-mismatch``): a patch cannot re-bless its own oracle by analyzing with another one."""

import hashlib
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from evidence.models import Repository
from freezedebt_ci.analysis.config import DEFAULT_LOCK, DEFAULT_ORACLE_MAP
from freezedebt_ci.analysis.governance import parse_lock, parse_oracle_map
from freezedebt_ci.errors import InputError
from ledger.models import GovernanceFile, LedgerVersion

DEFAULT_PATHS = {
    GovernanceFile.Kind.FIXTURE_LOCK: DEFAULT_LOCK,
    GovernanceFile.Kind.ORACLE_MAP: DEFAULT_ORACLE_MAP,
}


class GovernanceConflict(Exception):
    """The commit already has a stored file of that kind with other content."""

    def __init__(self, stored: GovernanceFile) -> None:
        self.stored = stored
        super().__init__(
            f"The {stored.get_kind_display()} of commit {stored.sha} is already stored "
            f"(version {stored.pk}) with other content; a commit has one."
        )


@dataclass(frozen=True)
class GovernanceSync:
    version: GovernanceFile
    created: bool


def governance_sync(
    *, repository: Repository, kind: str, sha: str, data: bytes, path: str = ""
) -> GovernanceSync:
    """Store the fixture lock or oracle map of default-branch commit ``sha`` as a new version.

    Raises InputError (nothing stored) when the file does not parse as the analysis reads it,
    and GovernanceConflict when the commit already has another one.
    """
    path = path or DEFAULT_PATHS[GovernanceFile.Kind(kind)]
    if kind == GovernanceFile.Kind.FIXTURE_LOCK:
        parse_lock(data, source=path)
    else:
        parse_oracle_map(data, source=path, path=path)
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:  # pragma: no cover - both parsers read UTF-8 first
        raise InputError.single(path, "", "is not UTF-8 text") from None
    if "\x00" in raw:
        raise InputError.single(path, "", "contains the NUL character")
    digest = hashlib.sha256(data).hexdigest()
    key = {"repository": repository, "kind": kind, "sha": sha}
    with transaction.atomic():
        stored = GovernanceFile.objects.filter(**key).first()
        if stored is None:
            try:
                with transaction.atomic():
                    stored = GovernanceFile.objects.create(**key, path=path, raw=raw, sha256=digest)
            except IntegrityError:
                stored = GovernanceFile.objects.get(**key)  # a concurrent push won
            else:
                return GovernanceSync(stored, created=True)
    if stored.sha256 != digest:
        raise GovernanceConflict(stored)
    return GovernanceSync(stored, created=False)


def ledger_sha256(version: LedgerVersion) -> str:
    return hashlib.sha256(version.raw.encode("utf-8")).hexdigest()


def governance_versions_for(repository: Repository, base_sha: str) -> dict[str, str | None]:
    """The sha256 of each governance file the server holds for a base commit (the version
    synced at that commit, else the latest). Kinds never synced are left out: unchecked."""
    digests: dict[str, str | None] = {}
    ledgers = LedgerVersion.objects.filter(repository=repository)
    ledger = ledgers.filter(sha=base_sha).first() or LedgerVersion.objects.latest_for(repository)
    if ledger is not None:
        digests["ledger"] = ledger_sha256(ledger)
    for kind in GovernanceFile.Kind:
        version = GovernanceFile.objects.for_base(repository, kind, base_sha)
        if version is not None:
            digests[str(kind)] = version.sha256
    return digests
