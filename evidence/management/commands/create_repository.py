from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from evidence.models import UploadToken
from evidence.services import repository_create, token_create
from evidence.teams import team_add_repository


class Command(BaseCommand):
    help = "Create a repository and print a new evidence token for its CI (shown only once)."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="lowercase letters, digits, hyphens and underscores")
        parser.add_argument("--default-branch", default="main")
        parser.add_argument("--name", default=None, help="display name (default: the slug)")
        parser.add_argument(
            "--team",
            action="append",
            default=[],
            metavar="SLUG",
            help="the team whose members lead the repository (repeatable); a team that does "
            "not exist yet is created",
        )

    def handle(self, *args, slug, default_branch, name, team, **options):
        try:
            with transaction.atomic():
                repository = repository_create(slug=slug, name=name, default_branch=default_branch)
                token, plain = token_create(
                    repository=repository, scope=UploadToken.Scope.EVIDENCE, name="initial"
                )
                teams = [
                    team_add_repository(slug=team_slug, repository=repository) for team_slug in team
                ]
        except ValidationError as error:
            raise CommandError(_describe(error)) from error
        self.stdout.write(f"Created repository {repository.slug} ({repository.default_branch}).")
        for found, created in teams:
            if created:
                self.stdout.write(
                    f"Created team {found.slug}; add its leads in the admin "
                    f"(/admin/dashboards/team/{found.pk}/change/)."
                )
            self.stdout.write(f"Team {found.slug} leads {repository.slug}.")
        self.stdout.write(
            f"Evidence token {token.display_prefix}, shown only this once; store it as a CI "
            "secret (FREEZEDEBT_TOKEN):"
        )
        self.stdout.write(plain)


def _describe(error: ValidationError) -> str:
    if hasattr(error, "message_dict"):
        return "; ".join(
            f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items()
        )
    return " ".join(error.messages)
