"""Accounts through django-allauth: sign-up (open, closed, throttled), login, password reset by
e-mail, GitHub only where configured, and a nav that names who is logged in."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from tests.accounts.conftest import PASSWORD, log_in, sign_up

pytestmark = pytest.mark.django_db

SIGNUP = "/accounts/signup/"
GITHUB = {"github": {"SCOPE": ["user:email"], "APPS": [{"client_id": "id", "secret": "s"}]}}


def accounts() -> list[str]:
    return list(get_user_model().objects.values_list("username", flat=True))


def test_sign_up_makes_an_account_logs_it_in_and_leads_to_its_tokens(client):
    response = sign_up(client, "carol")
    assert response.status_code == 302 and response["Location"] == "/accounts/tokens/"
    assert accounts() == ["carol"]
    page = client.get("/").content.decode()
    assert '<span class="who" id="nav-user" title="Logged in">carol</span>' in page


def test_sign_up_sends_a_link_that_verifies_the_address(client):
    sign_up(client, "carol")
    [message] = mail.outbox
    assert message.to == ["carol@example.org"]
    link = re.search(r"https?://testserver(/accounts/confirm-email/\S+/)", message.body).group(1)
    assert client.post(link).status_code == 302
    assert get_user_model().objects.get().emailaddress_set.get().verified


def test_a_closed_sign_up_says_so_and_refuses_posts(client, settings):
    settings.ARENA_SIGNUP_OPEN = False
    page = client.get(SIGNUP)
    assert page.status_code == 200 and "Sign-up is closed" in page.content.decode()
    assert sign_up(client, "carol").status_code == 403
    assert accounts() == []
    assert 'href="/accounts/signup/"' not in client.get("/accounts/login/").content.decode()


def test_sign_up_is_throttled_per_address(client, settings):
    settings.ACCOUNT_RATE_LIMITS = {**settings.ACCOUNT_RATE_LIMITS, "signup": "3/3600s/ip"}
    statuses = []
    for n in range(4):
        statuses.append(sign_up(client, f"user{n}").status_code)
        client.logout()
    assert statuses == [302, 302, 302, 429]
    assert "Too many tries" in sign_up(client, "user9").content.decode()
    assert sign_up(client, "user8", address="10.0.0.2").status_code == 302
    assert sorted(accounts()) == ["user0", "user1", "user2", "user8"]


def test_login_is_throttled_per_address(client, alice, settings):
    settings.ACCOUNT_RATE_LIMITS = {**settings.ACCOUNT_RATE_LIMITS, "login": "2/60s/ip"}
    for _ in range(2):
        assert log_in(client, "alice").status_code == 302
        client.logout()
    assert log_in(client, "alice").status_code == 429
    assert log_in(client, "alice", address="10.0.0.2").status_code == 302


def test_log_in_by_user_name_or_e_mail_in_any_case(client, alice):
    for login in ("alice", "ALICE@example.org"):
        assert log_in(client, login).status_code == 302
        assert client.session["_auth_user_id"] == str(alice.pk)
        client.logout()


def test_log_out_is_a_post(client, alice):
    client.force_login(alice)
    assert client.get("/accounts/logout/").status_code == 200  # a page asking to confirm
    assert "_auth_user_id" in client.session
    assert client.post("/accounts/logout/").status_code == 302
    assert "_auth_user_id" not in client.session


def test_password_reset_mails_a_link_that_sets_a_new_password(client, alice):
    response = client.post("/accounts/password/reset/", {"email": "alice@example.org"})
    assert response.status_code == 302
    [message] = mail.outbox
    assert message.to == ["alice@example.org"] and message.subject.startswith("[Kernel Arena]")
    link = re.search(r"https?://testserver(/accounts/password/reset/key/\S+/)", message.body)
    form = client.get(link.group(1), follow=True)
    assert form.status_code == 200
    new = "another-long-password-7"
    done = client.post(form.redirect_chain[-1][0], {"password1": new, "password2": new})
    assert done.status_code == 302
    alice.refresh_from_db()
    assert alice.check_password(new)


def test_github_is_offered_only_where_configured(client, settings):
    for page in (SIGNUP, "/accounts/login/"):
        assert "GitHub" not in client.get(page).content.decode()
    assert client.get("/accounts/github/login/").status_code == 404

    settings.SOCIALACCOUNT_PROVIDERS = GITHUB
    for page in (SIGNUP, "/accounts/login/"):
        assert 'href="/accounts/github/login/?process=login">Continue with GitHub' in (
            client.get(page).content.decode()
        )
    assert client.get("/accounts/github/login/").status_code == 200  # the confirmation


def test_the_nav_offers_log_in_and_sign_up_to_visitors(client, settings):
    page = client.get("/scoring/")
    assert 'href="/accounts/login/?next=/scoring/">Log in</a>' in page.content.decode()
    assert 'href="/accounts/signup/">Sign up</a>' in page.content.decode()
    assert "Cookie" not in page.get("Vary", "")  # the same page for every visitor
    settings.ARENA_SIGNUP_OPEN = False
    assert ">Sign up</a>" not in client.get("/scoring/").content.decode()


def test_the_nav_names_the_account_with_its_tokens_and_a_log_out_form(client, alice):
    assert log_in(client, "alice").status_code == 302
    page = client.get("/scoring/").content.decode()
    assert 'id="nav-user" title="Logged in">alice</span>' in page
    assert '<a href="/accounts/tokens/">Tokens</a>' in page
    assert re.search(r'<form class="logout" method="post" action="/accounts/logout/">', page)
    assert PASSWORD not in page


def test_sign_up_and_login_rates_and_github_come_from_the_environment():
    from tests.arena.test_settings import load_settings

    env = {"ARENA_SECRET_KEY": "k", "ARENA_SIGNUP_RATE": "5/day", "ARENA_LOGIN_RATE": ""}
    expression = "[s.ACCOUNT_RATE_LIMITS[k] for k in ('signup', 'login', 'login_failed')]"
    read = load_settings(env, expression)
    assert read.stdout.strip() == "['5/86400s/ip', None, None]", read.stderr
    alone = load_settings({"ARENA_SECRET_KEY": "k", "ARENA_GITHUB_CLIENT_ID": "id"}, "1")
    assert alone.returncode != 0
    assert "ARENA_GITHUB_CLIENT_ID and ARENA_GITHUB_SECRET go together" in alone.stderr


def test_github_sign_in_may_post_on_to_github_only_where_github_is_configured():
    from tests.arena.test_settings import load_settings

    expression = "s.CONTENT_SECURITY_POLICY['DIRECTIVES']['form-action']"
    plain = load_settings({"ARENA_SECRET_KEY": "k"}, expression)
    assert plain.stdout.strip() == "[\"'self'\"]", plain.stderr
    github = {"ARENA_SECRET_KEY": "k", "ARENA_GITHUB_CLIENT_ID": "id", "ARENA_GITHUB_SECRET": "s"}
    configured = load_settings(github, expression)
    assert configured.stdout.strip() == "[\"'self'\", 'https://github.com']", configured.stderr
