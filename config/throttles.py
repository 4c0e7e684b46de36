"""Rate limits on writes, counted per API token's user.

The rate is read from settings on every request (not frozen at import like DRF's
THROTTLE_RATES), so a deployment sets ARENA_WRITE_RATE and tests can change it. Counts live in
Django's cache: with the default per-process memory cache each server process counts on its own,
so N processes allow up to N times the rate; a shared cache makes the limit exact.
"""

from django.conf import settings
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
