import pytest
from django.core.cache import cache

PASSWORD = "a-long-enough-password-42"


@pytest.fixture(autouse=True)
def _fast_password_hashes(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    # allauth's sign-up and login counts and the API's write counts live in the cache.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", "alice@example.org", PASSWORD)


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", "bob@example.org", PASSWORD)


def sign_up(client, username: str, *, email: str = "", address: str = "10.0.0.1"):
    return client.post(
        "/accounts/signup/",
        {"username": username, "email": email or f"{username}@example.org", "password1": PASSWORD},
        REMOTE_ADDR=address,
    )


def log_in(client, login: str, password: str = PASSWORD, *, address: str = "10.0.0.1"):
    return client.post(
        "/accounts/login/", {"login": login, "password": password}, REMOTE_ADDR=address
    )
