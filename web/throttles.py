"""Rate limits on writes, counted per account: API writes and the site's forms that write share
one budget, one rate and one cache key (WriteRateThrottle), so using both does not double it.

The rate is read from settings on every request (not frozen at import like DRF's
THROTTLE_RATES), so a deployment sets ARENA_WRITE_RATE and tests can change it. Counts live in
Django's cache: the default folder is shared by one host's processes, Redis by every host's;
with "locmem" each process counts on its own, so N processes allow up to N times the rate.
"""

import functools
import math

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.throttling import SimpleRateThrottle


class WriteRateThrottle(SimpleRateThrottle):
    """Throttles POST/PUT/PATCH/DELETE per authenticated user; reads are never counted."""

    scope = "write"

    def get_rate(self) -> str | None:
        return settings.ARENA_WRITE_RATE or None

    def allow_request(self, request, view) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        # Re-read the rate: the instance is built per request, the setting may have changed.
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view) -> str | None:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            ident = f"user-{user.pk}"
        else:
            ident = f"anon-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


def write_wait_s(request: HttpRequest) -> int | None:
    """Counts this write against its account's budget, the API's very one; None while within
    it, else the whole seconds until the next write is allowed."""
    throttle = WriteRateThrottle()
    if throttle.allow_request(request, None):
        return None
    return max(1, math.ceil(throttle.wait() or 1))


def write_throttled(view):
    """A page's POSTs spend the per-account write budget that the API's writes spend; over it,
    a 429 page says how long to wait. Put it under login_required, so that accounts are
    counted, not visitors who would be sent to the login."""

    @functools.wraps(view)
    def throttled_view(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        wait_s = write_wait_s(request)
        if wait_s is None:
            return view(request, *args, **kwargs)
        message = (
            f"Your account has used its write budget ({settings.ARENA_WRITE_RATE}): uploads "
            "here and writes through the API count together. Nothing was stored."
        )
        return too_many_requests(request, title="Too many writes", message=message, wait_s=wait_s)

    return throttled_view


def too_many_requests(
    request: HttpRequest, *, title: str, message: str, wait_s: int
) -> HttpResponse:
    """The page for a refusal that passes with time: 429, the wait in words and Retry-After."""
    context = {
        "title": title,
        "message": message,
        "wait_s": wait_s,
        "wait_minutes": math.ceil(wait_s / 60),
    }
    response = render(request, "too_many_requests.html", context, status=429)
    response["Retry-After"] = str(wait_s)
    return response
