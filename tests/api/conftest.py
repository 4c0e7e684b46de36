import pytest
from django.core.cache import cache

from tests.api.factories import client_with_token, token_create


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    # Throttle counts live in the cache; each test starts with none spent.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def token(db):
    return token_create()


@pytest.fixture
def client(token):
    return client_with_token(token)


@pytest.fixture
def anonymous():
    return client_with_token(None)
