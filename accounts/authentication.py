"""The API's authentication: `Authorization: Token <secret>` or `Authorization: Bearer <secret>`.

"Token" is what clients and docs have always sent (DRF's scheme); "Bearer" is what generic HTTP
clients and OAuth-minded tools send. Both carry the same secret. A header of either scheme that
names no live token is refused with 401, never treated as anonymous: a client whose token was
revoked must hear so, not be served as a visitor.
"""

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from accounts.services import api_token_authenticate

SCHEMES = (b"token", b"bearer")


class ApiTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        words = get_authorization_header(request).split()
        if not words or words[0].lower() not in SCHEMES:
            return None  # no header, or another scheme: someone else's to judge
        if len(words) != 2:
            raise exceptions.AuthenticationFailed(
                "Invalid token header: send `Token <secret>` or `Bearer <secret>`."
            )
        try:
            secret = words[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        token = api_token_authenticate(secret=secret)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return token.user, token

    def authenticate_header(self, request) -> str:
        # Makes a missing token a 401 (not a 403) and names the scheme clients should send.
        return "Token"
