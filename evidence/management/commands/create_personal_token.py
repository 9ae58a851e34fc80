from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from evidence.personal_tokens import personal_token_create


class Command(BaseCommand):
    help = (
        "Create a personal API token for a user and print it (shown only once). It reads the "
        "API as that user: the repositories they may see, nothing else, and never uploads."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="what the token is for, e.g. 'laptop'")

    def handle(self, *args, username, name, **options):
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: username})
        except User.DoesNotExist:
            raise CommandError(f"No user {username!r}.") from None
        if not user.is_active:
            raise CommandError(f"User {username!r} is inactive; a token of theirs would not work.")
        token, plain = personal_token_create(user=user, name=name)
        self.stdout.write(
            f"Personal token {token.display_prefix} for {username}, shown only this once:"
        )
        self.stdout.write(plain)
