"""Writes for the ledger app: repository policies (audited)."""

import re
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from evidence.models import Repository
from freezedebt_ci.errors import InputError
from freezedebt_ci.policy import Policy as RulesPolicy
from ledger.models import Policy, PolicyChange

POLICY_FIELDS = frozenset({"severities", "max_freeze_days", "fixture_paths", "ledger_path"})


def policy_create_default(*, repository: Repository) -> Policy:
    policy, _ = Policy.objects.get_or_create(repository=repository)
    return policy


def _check_rules_accept(snapshot: dict[str, Any]) -> None:
    """Refuse what the shared rules could not load (an unknown problem code, a path pattern
    they do not support): every report of the repository would fail on it."""
    try:
        RulesPolicy.from_mapping(snapshot)
    except InputError as exc:
        errors: dict[str, list[str]] = {}
        for problem in exc.problems:
            field = re.split(r"[.\[]", problem.where, maxsplit=1)[0]
            errors.setdefault(field, []).append(str(problem))
        raise ValidationError(errors, code="invalid") from None


@transaction.atomic
def policy_update(
    *, repository: Repository, user: AbstractBaseUser | None, **changes: Any
) -> Policy:
    """Change a repository's policy and record who changed what, in one transaction.

    ``changes`` may name severities, max_freeze_days, fixture_paths and ledger_path.
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
    policy.full_clean()
    after = policy.snapshot()
    _check_rules_accept(after)
    if after == before:
        return policy
    policy.save()
    PolicyChange.objects.create(repository=repository, changed_by=user, before=before, after=after)
    return policy
