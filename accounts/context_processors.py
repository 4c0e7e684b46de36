from django.conf import settings
from django.http import HttpRequest


def nav_account(request: HttpRequest) -> dict:
    """Who the site's nav names: `nav_user`, the logged-in account or None; `signup_open`.

    A request without a session cookie is anonymous for certain, and is answered without reading
    the session: reading it makes the response vary on the cookie, and the public pages that
    every such visitor shares could no longer be kept by web/page_cache.py."""
    user = None
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        # None where a DRF view put its anonymous user (UNAUTHENTICATED_USER) on the request.
        user = getattr(request, "user", None)
    if user is not None and not user.is_authenticated:
        user = None
    return {"nav_user": user, "signup_open": settings.ARENA_SIGNUP_OPEN}
