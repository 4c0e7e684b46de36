from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.services import TokenRefused, api_token_create


class Command(BaseCommand):
    help = (
        "Make an API token for an account and print its secret, alone on one line (it is not "
        "stored and cannot be shown again): TOKEN=$(manage.py token_create me)"
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--name", default="", help="the token's name (default: token, token 2, ...)"
        )

    def handle(self, *args, username: str, name: str, **options) -> None:
        try:
            user = get_user_model().objects.get_by_natural_key(username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"no account named {username!r}") from None
        try:
            issued = api_token_create(user=user, name=name)
        except TokenRefused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(issued.secret)
        self.stderr.write(f"Made token {issued.token.name!r} for {username}; keep the secret safe.")
