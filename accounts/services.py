"""Writes of the accounts app: API tokens made, used and revoked."""

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import ApiToken
from accounts.token_secrets import (
    MAX_SECRET_LENGTH,
    digest_matches,
    secret_digest,
    secret_new,
    secret_prefix,
)

# An account's tokens at most: enough for every machine and agent one person runs, few enough
# that a script stuck in a loop does not fill the table.
MAX_TOKENS_PER_ACCOUNT = 50
# `last_used` is a day-to-day hint for its owner ("is this one still in use?"), not an audit log:
# it is written at most once a minute per token, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)
DEFAULT_NAME = "token"


class TokenRefused(ValueError):
    """The token cannot be made; the message says why, for the person who asked."""


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str  # the only copy: shown once, never stored


def api_token_create(*, user: AbstractBaseUser, name: str = "") -> IssuedToken:
    """A new token of `user`, named `name` (or the first free "token", "token 2", ...)."""
    name = name.strip() or _free_name(user)
    if len(name) > ApiToken._meta.get_field("name").max_length:
        raise TokenRefused("A token's name is at most 80 characters.")
    if ApiToken.objects.filter(user=user).count() >= MAX_TOKENS_PER_ACCOUNT:
        raise TokenRefused(
            f"An account has at most {MAX_TOKENS_PER_ACCOUNT} tokens: revoke one you no longer use."
        )
    secret = secret_new()
    try:
        with transaction.atomic():
            token = ApiToken.objects.create(
                user=user, name=name, prefix=secret_prefix(secret), digest=secret_digest(secret)
            )
    except IntegrityError:
        raise TokenRefused(f"You already have a token named {name!r}.") from None
    return IssuedToken(token=token, secret=secret)


def _free_name(user: AbstractBaseUser) -> str:
    taken = set(ApiToken.objects.filter(user=user).values_list("name", flat=True))
    candidates = (DEFAULT_NAME if n == 1 else f"{DEFAULT_NAME} {n}" for n in range(1, 10_000))
    return next(name for name in candidates if name not in taken)


def api_token_revoke(*, user: AbstractBaseUser, token_id: int) -> bool:
    """Deletes `user`'s token `token_id`; False where `user` has no such token."""
    deleted, _ = ApiToken.objects.filter(pk=token_id, user=user).delete()
    return deleted > 0


def api_token_authenticate(*, secret: str) -> ApiToken | None:
    """The token whose secret this is, its user loaded, or None. Marks it used."""
    if not secret or len(secret) > MAX_SECRET_LENGTH:
        return None
    candidates = ApiToken.objects.filter(prefix=secret_prefix(secret)).select_related("user")
    for token in candidates:
        if digest_matches(secret, token.digest):
            _mark_used(token)
            return token
    return None


def _mark_used(token: ApiToken) -> None:
    now = timezone.now()
    stale = Q(last_used__isnull=True) | Q(last_used__lt=now - LAST_USED_RESOLUTION)
    if ApiToken.objects.filter(stale, pk=token.pk).update(last_used=now):
        token.last_used = now
