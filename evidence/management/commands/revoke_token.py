from django.core.management.base import BaseCommand, CommandError

from evidence.models import UploadToken
from evidence.services import token_revoke


class Command(BaseCommand):
    help = "Revoke an upload token, named by its prefix (fdk_xxxxxxxx) or by the whole token."

    def add_arguments(self, parser):
        parser.add_argument("token", metavar="PREFIX_OR_TOKEN")

    def handle(self, *args, token, **options):
        try:
            revoked = token_revoke(prefix=token)
        except UploadToken.DoesNotExist:
            raise CommandError("No token has that prefix.") from None
        self.stdout.write(
            f"Token {revoked.display_prefix} of {revoked.repository.slug} is revoked "
            f"(since {revoked.revoked_at:%Y-%m-%d %H:%M:%S %Z})."
        )
