"""How the OpenAPI schema describes the API's token (accounts/authentication.py)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": (
                "An API token from /accounts/tokens/, sent as `Token <secret>` "
                "(or `Bearer <secret>`)."
            ),
        }
