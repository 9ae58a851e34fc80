from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from evidence.models import UploadToken
from evidence.services import repository_create, token_create


class Command(BaseCommand):
    help = "Create a repository and print a new evidence token for its CI (shown only once)."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="lowercase letters, digits, hyphens and underscores")
        parser.add_argument("--default-branch", default="main")
        parser.add_argument("--name", default=None, help="display name (default: the slug)")

    def handle(self, *args, slug, default_branch, name, **options):
        try:
            with transaction.atomic():
                repository = repository_create(slug=slug, name=name, default_branch=default_branch)
                token, plain = token_create(
                    repository=repository, scope=UploadToken.Scope.EVIDENCE, name="initial"
                )
        except ValidationError as error:
            raise CommandError(_describe(error)) from error
        self.stdout.write(f"Created repository {repository.slug} ({repository.default_branch}).")
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
