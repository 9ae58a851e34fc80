from django.core.management.base import BaseCommand, CommandError

from evidence import personal_tokens, tokens
from evidence.models import PERSONAL_TOKEN_MARKER, TOKEN_MARKER, PersonalToken, UploadToken
from evidence.personal_tokens import personal_token_revoke
from evidence.services import token_revoke


class Command(BaseCommand):
    help = (
        f"Revoke an upload token ({TOKEN_MARKER}_…) or a personal token "
        f"({PERSONAL_TOKEN_MARKER}_…), named by its prefix or by the whole token."
    )

    def add_arguments(self, parser):
        parser.add_argument("token", metavar="PREFIX_OR_TOKEN")

    def handle(self, *args, token, **options):
        text = token.strip()
        if personal_tokens.looks_like_personal_token(text):
            self._revoke_personal(text)
        elif tokens.looks_like_token(text):
            self._revoke_upload(text)
        else:
            # A bare prefix: the two kinds draw prefixes apart, so it may name one of each.
            lookup = tokens.parse_prefix(text)
            upload = lookup is not None and UploadToken.objects.filter(prefix=lookup).exists()
            personal = lookup is not None and PersonalToken.objects.filter(prefix=lookup).exists()
            if upload and personal:
                raise CommandError(
                    f"Both an upload token and a personal token have that prefix: name it as "
                    f"{TOKEN_MARKER}_{lookup} or {PERSONAL_TOKEN_MARKER}_{lookup}."
                )
            if personal:
                self._revoke_personal(text)
            else:
                self._revoke_upload(text)

    def _revoke_upload(self, text: str) -> None:
        try:
            revoked = token_revoke(prefix=text)
        except UploadToken.DoesNotExist:
            raise CommandError("No token has that prefix.") from None
        self.stdout.write(
            f"Token {revoked.display_prefix} of {revoked.repository.slug} is revoked "
            f"(since {revoked.revoked_at:%Y-%m-%d %H:%M:%S %Z})."
        )

    def _revoke_personal(self, text: str) -> None:
        try:
            revoked = personal_token_revoke(prefix=text)
        except PersonalToken.DoesNotExist:
            raise CommandError("No personal token has that prefix.") from None
        self.stdout.write(
            f"Personal token {revoked.display_prefix} of {revoked.user} is revoked "
            f"(since {revoked.revoked_at:%Y-%m-%d %H:%M:%S %Z})."
        )
