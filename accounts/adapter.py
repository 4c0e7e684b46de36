"""django-allauth's hooks: whether sign-up is open, and who a request comes from."""

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialApp
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.shortcuts import render

from web.login_lockout import client_address


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        """ARENA_SIGNUP_OPEN. Closed, the page says so and a form posted anyway is refused with
        403 (allauth would answer it 200), so that a script hears it was refused."""
        if settings.ARENA_SIGNUP_OPEN:
            return True
        if request.method == "POST":
            closed = render(request, "account/signup_closed.html", status=403)
            raise ImmediateHttpResponse(closed)
        return False

    def get_client_ip(self, request: HttpRequest) -> str:
        """The address that sign-up and login rate limits count: the one the lockout counts
        (web/login_lockout.py, from ARENA_PROXY_COUNT), so the two never disagree."""
        address = client_address(request)
        if not address:
            raise PermissionDenied("Unable to determine the client's address")
        return address


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def get_provider(self, request: HttpRequest, provider, client_id=None):
        """A provider the operator has not configured (GitHub without ARENA_GITHUB_CLIENT_ID)
        does not exist, for its pages as for its buttons: 404, not a server error."""
        try:
            return super().get_provider(request, provider, client_id=client_id)
        except SocialApp.DoesNotExist:
            raise Http404(f"{provider} sign-in is not configured here") from None
