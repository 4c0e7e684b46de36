from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """People's own side of the site: API tokens, and the rules of sign-up (django-allauth)."""

    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the token's description with drf-spectacular's schema, which reads DRF's
        # settings: once the apps are loaded, not while they load.
        from accounts import api_schema  # noqa: F401
