"""Rows and clients for the API tests."""

from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

SILU_OK = b"class ModelNew: pass\n"


def token_create(username: str = "uploader") -> Token:
    user = get_user_model().objects.create_user(username=username, password="not-used-here")
    return Token.objects.create(user=user)


def client_with_token(token: Token | None = None) -> APIClient:
    client = APIClient()
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def upload(code: bytes = SILU_OK, name: str = "solution.py") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, code, content_type="text/x-python")


def error_of(response) -> dict:
    """The body's error object, after checking that the body has exactly the one shape."""
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert error["status"] == response.status_code, body
    assert set(error) <= {"status", "code", "message", "fields"}, body
    return error
