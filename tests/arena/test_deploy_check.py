"""Production mode (ARENA_HTTPS=1): `manage.py check --deploy` passes with no warning, and the
mode does what the check asks for: plain HTTP is redirected, cookies are Secure, browsers are
told to keep to HTTPS. The check runs in a fresh interpreter, as a deployment would run it."""

import ast
import re
import secrets
import subprocess
import sys
from wsgiref.util import setup_testing_defaults

import pytest
from django.core.wsgi import get_wsgi_application
from django.test import Client, override_settings

from tests.arena.test_settings import REPO, load_settings
from web.page_cache import PageCache

# Django's check wants 50 characters or more, 5 of them distinct, not its own insecure prefix.
STRONG_KEY = secrets.token_urlsafe(50)
PROTECTIONS = (
    "SECURE_PROXY_SSL_HEADER",
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
)


def deploy_check(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """`check --deploy` in a production-like environment: no ARENA_DEBUG, a real host name."""
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "ARENA_DATA_DIR": str(tmp_path),
            "ARENA_ALLOWED_HOSTS": "arena.example",
            **env,
        },
        check=False,
    )


def issue_ids(check: subprocess.CompletedProcess) -> set[str]:
    """The ids of what the check reported: security.W004, drf_spectacular.W001, ..."""
    return set(re.findall(r"\(([\w.]+\.[WE]\d+)\)", check.stdout + check.stderr))


def test_production_mode_passes_the_deploy_check_with_no_warning(tmp_path):
    check = deploy_check(tmp_path, ARENA_HTTPS="1", ARENA_SECRET_KEY=STRONG_KEY)
    assert check.returncode == 0, check.stdout + check.stderr
    assert issue_ids(check) == set()
    assert "System check identified no issues (0 silenced)." in check.stdout


def test_without_production_mode_the_deploy_check_names_each_missing_protection(tmp_path):
    check = deploy_check(tmp_path, ARENA_SECRET_KEY=STRONG_KEY)
    assert check.returncode != 0
    # HSTS, the redirect to HTTPS, the Secure session and CSRF cookies; nothing else.
    assert issue_ids(check) == {"security.W004", "security.W008", "security.W012", "security.W016"}


def test_a_weak_secret_key_fails_the_deploy_check_in_production_mode(tmp_path):
    check = deploy_check(tmp_path, ARENA_HTTPS="1", ARENA_SECRET_KEY="short-key")
    assert check.returncode != 0
    assert issue_ids(check) == {"security.W009"}


@pytest.fixture
def production(tmp_path):
    """This process's settings as ARENA_HTTPS=1 makes them, read from a fresh interpreter."""
    env = {"ARENA_SECRET_KEY": "k", "ARENA_HTTPS": "1", "ARENA_DATA_DIR": str(tmp_path)}
    loaded = load_settings(env, f"{{name: getattr(s, name) for name in {PROTECTIONS!r}}}")
    assert loaded.returncode == 0, loaded.stderr
    values = ast.literal_eval(loaded.stdout.strip())
    with override_settings(**values):
        yield values


def wsgi_get(app, path: str, **environ: str) -> tuple[str, dict[str, str]]:
    request: dict = {"PATH_INFO": path, "HTTP_HOST": "testserver", **environ}
    setup_testing_defaults(request)
    answer: dict = {}

    def start_response(status, headers, exc_info=None):
        answer.update(status=status, headers=dict(headers))

    b"".join(app(request, start_response))
    return answer["status"], answer["headers"]


# Through the WSGI handler, which closes the database connection after each request.
@pytest.mark.django_db(transaction=True)
def test_production_mode_redirects_plain_http_even_when_the_https_page_is_cached(production):
    # Served as config.wsgi serves it: the page cache answers repeats before Django's redirect.
    app = PageCache(get_wsgi_application())
    for _ in range(2):
        status, headers = wsgi_get(app, "/", HTTP_X_FORWARDED_PROTO="https")
        assert status.startswith("200 "), status
    assert "Age" in headers  # the second answer came from the cache
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    for proto in ({}, {"HTTP_X_FORWARDED_PROTO": "http"}):
        status, headers = wsgi_get(app, "/", **proto)
        assert status.startswith("301 "), status
        assert headers["Location"] == "https://testserver/"


def test_production_mode_sends_cookies_for_https_only(production, django_user_model):
    django_user_model.objects.create_user("operator", password="pw-of-this-test", is_staff=True)
    browser = Client(headers={"X-Forwarded-Proto": "https"})
    login_page = browser.get("/admin/login/")
    assert login_page.status_code == 200
    assert login_page.cookies["csrftoken"]["secure"] is True
    logged_in = browser.post(
        "/admin/login/", {"username": "operator", "password": "pw-of-this-test", "next": "/admin/"}
    )
    assert logged_in.status_code == 302, logged_in.content[:500]
    assert logged_in.cookies["sessionid"]["secure"] is True
