from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    """A named API token of one account. Only the SHA-256 of its secret is kept (token_secrets);
    the secret itself is shown once, when the token is made. Revoking deletes the row."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=80)
    prefix = models.CharField(max_length=16, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(default=timezone.now)
    last_used = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            # One name per account: a list of tokens reads by name, and a form posted twice
            # (a reload) cannot make a second token the person never saw.
            models.UniqueConstraint(fields=["user", "name"], name="api_token_name_per_user"),
        ]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
