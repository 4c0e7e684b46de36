"""Failed logins lock out, through django-axes (settings: AXES_*, from the ARENA_LOGIN_* ones).

Failures are counted per address and per account name: ARENA_LOGIN_FAILURE_LIMIT of them within
ARENA_LOGIN_COOLOFF_S, from one address (on any accounts) or on one account (from anywhere),
refuse every login from that address and to that account until that long has passed with no
further try; a try meanwhile, right password or not, starts the wait again. Every login that
goes through Django's authenticate() is counted: the site's page (allauth's form, by user name or
e-mail address) and the admin's. API tokens are never passwords and are not counted.

The counts are rows of the database (axes' AccessAttempt), so every web process and host sees
the same ones on SQLite and PostgreSQL alike, and a test's rows go with its transaction.
"""

from __future__ import annotations

from datetime import timedelta

from allauth.account.utils import filter_users_by_email
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from web.throttles import too_many_requests


class LoginAttempts(AxesDatabaseHandler):
    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        """A login forgets its account's failures from its address, and nothing else. Axes would
        forget every failure from the address and on the account: anyone with an account could
        clear their address's count by logging in between guesses at other accounts."""
        username = get_client_username(request, credentials)
        address = getattr(request, "axes_ip_address", None)
        if not (username and address):
            return 0
        return self.reset_attempts(ip_address=address, username=username)


def failure_limit(request: HttpRequest, credentials: dict | None) -> int:
    return settings.ARENA_LOGIN_FAILURE_LIMIT


def cool_off(request: HttpRequest | None = None) -> timedelta:
    return timedelta(seconds=settings.ARENA_LOGIN_COOLOFF_S)


def account_name(request: HttpRequest, credentials: dict | None = None) -> str | None:
    """The account a login names, in lower case, so that "Alice" and "alice" (one account to
    allauth's login) share one count. The admin's form sends `username`; allauth's sends `login`
    and authenticates with `username` or `email`: an account's e-mail address counts as its user
    name, or a guesser would get the limit twice, once by name and once by address."""
    source = credentials if credentials is not None else request.POST
    for field in ("username", "email", "login"):
        value = source.get(field)
        if value:
            return _by_address(str(value).strip().lower())
    return None


def _by_address(name: str) -> str:
    if "@" not in name:
        return name
    owners = filter_users_by_email(name)
    return owners[0].get_username().lower() if len(owners) == 1 else name


def client_address(request: HttpRequest) -> str | None:
    """The address a login came from. Behind ARENA_PROXY_COUNT proxies, each appending the address
    it saw to X-Forwarded-For, that is the entry so many from the right; the entries before it are
    the client's own to forge. Without proxies, the connection's."""
    hops = settings.ARENA_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
    forwarded = [address.strip() for address in forwarded if address.strip()]
    if hops and len(forwarded) >= hops:
        return forwarded[-hops]
    return request.META.get("REMOTE_ADDR") or None


def lockout_page(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    limit = settings.ARENA_LOGIN_FAILURE_LIMIT
    message = (
        f"Too many failed logins: after {limit} failures on one account or from one address, "
        "logins to that account and from that address are refused for a while. Each try "
        "meanwhile starts the wait again. Nothing about your account has changed."
    )
    return too_many_requests(
        request, title="Logins paused", message=message, wait_s=settings.ARENA_LOGIN_COOLOFF_S
    )
