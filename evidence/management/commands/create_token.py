from django.core.management.base import BaseCommand, CommandError

from evidence.models import Repository, UploadToken
from evidence.services import token_create


class Command(BaseCommand):
    help = "Create an upload token for a repository and print it (shown only once)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--scope", required=True, choices=UploadToken.Scope.values)
        parser.add_argument("--name", default="", help="what the token is for, e.g. 'gha-main'")

    def handle(self, *args, slug, scope, name, **options):
        try:
            repository = Repository.objects.get(slug=slug)
        except Repository.DoesNotExist:
            raise CommandError(f"No repository with slug {slug!r}.") from None
        token, plain = token_create(repository=repository, scope=scope, name=name)
        self.stdout.write(
            f"Token {token.display_prefix} ({scope}) for {repository.slug}, shown only this once:"
        )
        self.stdout.write(plain)
