"""Writes for the ledger app: repository policies (audited)."""

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from evidence.models import Repository
from ledger.models import Policy, PolicyChange

POLICY_FIELDS = frozenset(
    {"severities", "max_freeze_days", "fixture_paths", "ledger_path", "require_analysis"}
)


def policy_create_default(*, repository: Repository) -> Policy:
    policy, _ = Policy.objects.get_or_create(repository=repository)
    return policy


@transaction.atomic
def policy_update(*, repository: Repository, user: User | None, **changes: Any) -> Policy:
    """Change a repository's policy and record who changed what, in one transaction.

    ``changes`` may name severities, max_freeze_days, fixture_paths, ledger_path and
    require_analysis.
    ``severities`` replaces the stored overrides as a whole. Raises ValidationError on bad
    values; stores no audit row when nothing actually changed.
    """
    unknown = set(changes) - POLICY_FIELDS
    if unknown:
        raise ValidationError(
            {name: "Not a policy setting." for name in sorted(unknown)}, code="unknown"
        )
    Policy.objects.get_or_create(repository=repository)
    # Lock the row: two leads saving at once must each audit against what they replaced.
    policy = Policy.objects.select_for_update().get(repository=repository)
    before = policy.snapshot()
    for name, value in changes.items():
        setattr(policy, name, value)
    policy.full_clean()  # the field validators and the shared rules (Policy.clean)
    after = policy.snapshot()
    if after == before:
        return policy
    policy.save()
    PolicyChange.objects.create(repository=repository, changed_by=user, before=before, after=after)
    return policy
