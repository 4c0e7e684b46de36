"""Reads of the accounts app."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from accounts.models import ApiToken


def api_tokens_of(*, user: AbstractBaseUser) -> QuerySet[ApiToken]:
    """`user`'s tokens, newest first."""
    return ApiToken.objects.filter(user=user).order_by("-created", "-id")
