"""Failed logins lock out: per address and per account, on the site's login (allauth's form, by
user name or e-mail address) and the admin's, until the cool-off; a login forgets only its own
account's failures from its address."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.core.cache import cache
from django.db.models import F
from django.test import RequestFactory

from accounts.services import api_token_create
from web.login_lockout import client_address

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"
PASSWORD = "the-right-password-1"
HOME = "10.0.0.1"
ELSEWHERE = "10.0.0.2"


@pytest.fixture(autouse=True)
def _fast_password_hashes(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_login_rate_spent():
    # allauth counts every login post per address in the cache (ARENA_LOGIN_RATE); these tests
    # post many from one address, and are about the lockout.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user(
        "alice", "alice@example.org", PASSWORD, is_staff=True
    )


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password=PASSWORD)


def log_in(client, username, password, *, address=HOME, url=LOGIN):
    # allauth's form names its field `login` (a user name or an e-mail address); the admin's,
    # Django's `username`.
    field = "login" if url == LOGIN else "username"
    return client.post(url, {field: username, "password": password}, REMOTE_ADDR=address)


def fail(client, username, times, *, address=HOME, url=LOGIN) -> list[int]:
    return [
        log_in(client, username, "wrong", address=address, url=url).status_code
        for _ in range(times)
    ]


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def let_the_cool_off_pass(settings) -> None:
    """Every failure so far, as if it had happened a cool-off ago."""
    past = timedelta(seconds=settings.ARENA_LOGIN_COOLOFF_S + 1)
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - past)


def test_five_failures_lock_the_account_until_the_cool_off(client, alice, settings):
    statuses = [log_in(client, "alice", "wrong").status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 200, 429]

    refused = log_in(client, "alice", PASSWORD)
    assert refused.status_code == 429 and not logged_in(client)
    assert refused["Retry-After"] == "900"
    page = refused.content.decode()
    assert "Logins paused" in page and "Too many failed logins: after 5 failures" in page
    assert "Try again in 900 s (about 15 minutes)" in page

    let_the_cool_off_pass(settings)
    response = log_in(client, "alice", PASSWORD)
    assert response.status_code == 302 and logged_in(client)


def test_the_limit_and_the_cool_off_come_from_settings(client, alice, settings):
    settings.ARENA_LOGIN_FAILURE_LIMIT = 2
    settings.ARENA_LOGIN_COOLOFF_S = 60
    assert [log_in(client, "alice", "wrong").status_code for _ in range(2)] == [200, 429]
    refused = log_in(client, "alice", PASSWORD)
    assert refused.status_code == 429 and refused["Retry-After"] == "60"


def test_a_login_forgets_its_accounts_failures(client, alice):
    fail(client, "alice", 4)
    assert log_in(client, "alice", PASSWORD).status_code == 302
    client.logout()
    assert [log_in(client, "alice", "wrong").status_code for _ in range(4)] == [200] * 4
    assert log_in(client, "alice", PASSWORD).status_code == 302


def test_a_login_keeps_the_failures_its_address_made_on_other_accounts(client, alice, bob):
    # Guesses at alice's password, a login to one's own account between them: still counted.
    fail(client, "alice", 4)
    assert log_in(client, "bob", PASSWORD).status_code == 302
    client.logout()
    assert log_in(client, "alice", "wrong").status_code == 429


def test_a_locked_address_refuses_every_account_and_other_addresses_go_on(client, alice, bob):
    fail(client, "alice", 5)
    assert log_in(client, "bob", PASSWORD).status_code == 429
    assert not logged_in(client)
    assert log_in(client, "bob", PASSWORD, address=ELSEWHERE).status_code == 302


def test_an_account_is_locked_whatever_the_address_and_the_case(client, alice):
    for index, name in enumerate(["alice", "Alice", "ALICE", "alice ", "aLiCe"]):
        log_in(client, name, "wrong", address=f"10.1.0.{index}")
    response = log_in(client, "alice", PASSWORD, address="10.2.0.1")
    assert response.status_code == 429 and not logged_in(client)


def test_the_admin_login_is_locked_out_too(client, alice, settings):
    statuses = [log_in(client, "alice", "wrong", url=ADMIN_LOGIN).status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 200, 429]
    assert log_in(client, "alice", PASSWORD, url=ADMIN_LOGIN).status_code == 429
    # One count for both pages: the site's login is refused as well.
    assert log_in(client, "alice", PASSWORD).status_code == 429
    let_the_cool_off_pass(settings)
    assert log_in(client, "alice", PASSWORD, url=ADMIN_LOGIN).status_code == 302


def test_failures_by_user_name_and_by_e_mail_address_share_one_count(client, alice):
    fail(client, "alice", 2, address="10.1.0.1")
    fail(client, "Alice@Example.org", 2, address="10.1.0.2")
    assert log_in(client, "alice@example.org", "wrong", address="10.1.0.3").status_code == 429
    refused = log_in(client, "alice", PASSWORD, address="10.1.0.4")
    assert refused.status_code == 429 and not logged_in(client)


def test_an_e_mail_address_logs_in_and_forgets_the_failures(client, alice):
    fail(client, "alice", 4)
    assert log_in(client, "alice@example.org", PASSWORD).status_code == 302
    assert logged_in(client)
    client.logout()
    assert fail(client, "alice", 4) == [200] * 4


def test_api_tokens_are_not_logins(client, alice):
    for _ in range(6):
        wrong = client.post("/api/v1/trajectories", {}, HTTP_AUTHORIZATION="Token " + "0" * 40)
        assert wrong.status_code == 401
    assert not AccessAttempt.objects.exists()

    fail(client, "alice", 5)
    key = api_token_create(user=alice, name="laptop").secret
    # A locked account's token still works: the request is past authentication, to validation.
    response = client.post("/api/v1/trajectories", {}, HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 400, response.content


def test_behind_proxies_the_address_is_the_one_the_nearest_saw(settings):
    request = RequestFactory().get(
        "/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9, 10.9.9.9"
    )
    settings.ARENA_PROXY_COUNT = 0
    assert client_address(request) == "127.0.0.1"
    settings.ARENA_PROXY_COUNT = 1
    assert client_address(request) == "10.9.9.9"
    settings.ARENA_PROXY_COUNT = 2
    assert client_address(request) == "203.0.113.9"
    settings.ARENA_PROXY_COUNT = 4  # fewer entries than proxies: the header is not to be trusted
    assert client_address(request) == "127.0.0.1"
