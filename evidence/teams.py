"""Teams: who leads which repositories. Writes named ``team_<verb>``, and the lookup of the
leads a repository's e-mails go to."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.db import transaction

from evidence.models import Repository, Team


@transaction.atomic
def team_create(
    *,
    name: str,
    slug: str,
    members: Iterable = (),
    repositories: Iterable[Repository] = (),
) -> Team:
    """A new team with its members (users) and the repositories it owns."""
    team = Team.objects.create(name=name, slug=slug)
    team.members.add(*members)
    team.repositories.add(*repositories)
    return team


@transaction.atomic
def team_add_repository(*, slug: str, repository: Repository) -> tuple[Team, bool]:
    """Make the team ``slug`` lead ``repository``, creating the team (named after its slug)
    when there is none yet; returns the team and whether it was created."""
    team = Team.objects.filter(slug=slug).first()
    created = team is None
    if team is None:
        team = Team(name=slug, slug=slug)
        team.full_clean()  # the slug's shape, with the same errors as the admin
        team.save()
    team.repositories.add(repository)
    return team, created


def _unique_addresses(addresses: Iterable[str]) -> list[str]:
    """Sorted, one per mailbox (addresses differing only in case are one)."""
    unique: dict[str, str] = {}
    for address in sorted(addresses):
        unique.setdefault(address.lower(), address)
    return list(unique.values())


def staff_addresses() -> list[str]:
    """Active staff with an address: they lead every repository."""
    users = get_user_model().objects.filter(is_active=True, is_staff=True).exclude(email="")
    return _unique_addresses(users.values_list("email", flat=True))


def team_lead_addresses(repository_ids: Iterable[int]) -> dict[int, list[str]]:
    """For each repository, the addresses of the active members of the teams that own it.

    One query. Repositories without a team (or without members with an address) are absent.
    """
    rows = Team.repositories.through.objects.filter(
        repository_id__in=list(repository_ids),
        team__members__is_active=True,
    ).values_list("repository_id", "team__members__email")
    found: dict[int, set[str]] = {}
    for repository_id, address in rows:
        # Filtered here: an exclude() across the membership would drop whole teams.
        if address:
            found.setdefault(repository_id, set()).add(address)
    return {key: _unique_addresses(addresses) for key, addresses in found.items()}


def is_lead(user) -> bool:
    """Leads are staff and the members of any team: they manage owners and policies."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    return user.is_staff or Team.objects.filter(members=user).exists()
