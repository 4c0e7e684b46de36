"""Rows and clients for the API tests."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from accounts.services import api_token_create

SILU_OK = b"class ModelNew: pass\n"


@dataclass(frozen=True)
class Token:
    """An account and the secret of one of its API tokens, as a client holds them."""

    user: AbstractBaseUser
    key: str


def token_for(user: AbstractBaseUser, name: str = "tests") -> Token:
    return Token(user=user, key=api_token_create(user=user, name=name).secret)


def token_create(username: str = "uploader") -> Token:
    user = get_user_model().objects.create_user(username=username, password="not-used-here")
    return token_for(user)


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
