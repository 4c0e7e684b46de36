"""Every HTML response carries a Content-Security-Policy: each route of the URL conf, fetched by
a visitor and by a superuser, and the error pages (400, 403, 404, 500). The transcript page and
its export keep their own policy; the API docs' one inline script runs by this request's nonce.
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, path

from arena.run_logs import trajectory_upload
from config.urls import handler400, handler403, handler404  # noqa: F401 - this test's URL conf
from config.urls import urlpatterns as site_urlpatterns
from tests.leaderboard.factories import make_agent, make_run, make_task


def _explode(request):
    raise RuntimeError("a bug")


def _forbid(request):
    raise PermissionDenied


# The site's routes and two that fail, for the 403 and 500 pages (pytest.mark.urls below).
urlpatterns = [
    path("test-only/explode/", _explode),
    path("test-only/forbidden/", _forbid),
    *site_urlpatterns,
]
pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

SITE_DIRECTIVES = (
    "default-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)


def assert_site_policy(response, where: str) -> str:
    policy = response.get("Content-Security-Policy", "")
    for directive in SITE_DIRECTIVES:
        assert directive in policy, f"{where}: {directive!r} missing from {policy!r}"
    script_src = re.search(r"script-src ([^;]*)", policy).group(1)
    assert "unsafe-inline" not in script_src and "unsafe-eval" not in script_src, where
    return policy


def is_transcript(route: str) -> bool:
    return route.startswith("runs/<int:run_id>/transcript")


@pytest.fixture
def site(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    task = make_task("csp-task")
    agent = make_agent("csp-agent")
    run = make_run(agent, task, speedup=1.5)
    log = [{"role": "user", "content": "Write it."}, {"role": "assistant", "content": "Ok"}]
    trajectory_upload(data=json.dumps(log).encode(), filename="chat.json", run_id=run.pk)
    superuser = get_user_model().objects.create_superuser("root", "root@example.org", "x" * 20)
    return {"run": run, "task": task, "agent": agent, "user": superuser}


def routes(patterns, prefix: str = ""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def admin_object_id(route: str) -> str:
    """The first row's id of the model whose admin `route` belongs to, or an id of none."""
    for model in admin.site._registry:
        if route.startswith(f"admin/{model._meta.app_label}/{model._meta.model_name}/"):
            first = model._default_manager.order_by("pk").first()
            return str(first.pk) if first else "0"
    return "0"


def concrete(route: str, site: dict) -> str:
    """A path that `route` matches, with the site's own rows for its parameters."""
    values = {
        "slug": site["task"].slug if "tasks/" in route else site["agent"].slug,
        "object_id": admin_object_id(route),
        "content_type_id": "0",
        "id": str(site["user"].pk),
        "app_label": "arena",
        "url": "no-such-admin-page/",
        # allauth's links sent by mail: an e-mail confirmation's, a password reset's
        "key": "no-such-key",
        "uidb36": "0",
    }
    query = f"?a={site['run'].pk}&b={site['run'].pk}" if route == "compare/" else ""
    route = route.replace("^", "").replace("$", "")
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: values[m[1]], route)
    route = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values.get(m[1], str(site["run"].pk)), route)
    return f"/{route}{query}"


def test_every_html_response_of_every_route_carries_the_policy(site):
    visitor, staff = Client(), Client()
    staff.force_login(site["user"])
    seen_ok: set[str] = set()
    checked = 0
    for route in routes(get_resolver().url_patterns):
        if route.startswith("test-only/"):
            continue
        url = concrete(route, site)
        for who, client in (("visitor", visitor), ("staff", staff)):
            response = client.get(url)
            if not response.get("Content-Type", "").startswith("text/html"):
                continue
            checked += 1
            where = f"{who} GET {url} ({response.status_code})"
            if is_transcript(route) and response.status_code == 200:
                assert "default-src 'none'" in response["Content-Security-Policy"], where
            else:
                assert_site_policy(response, where)
            if response.status_code == 200:
                seen_ok.add(route)
    pages = {
        "",
        "runs/<int:run_id>/",
        "runs/<int:run_id>/transcript",
        "runs/<int:run_id>/transcript/export",
        "tasks/",
        "tasks/<str:slug>/",
        "compare/",
        "trajectories/upload/",
        "accounts/login/",
        "api/docs/",
        "admin/",
        "admin/login/",
        "admin/arena/run/",
        "admin/arena/run/<path:object_id>/change/",
    }
    assert pages <= seen_ok, pages - seen_ok
    assert checked > 100


def test_error_pages_carry_the_policy(site):
    client = Client(raise_request_exception=False)
    cases = {
        400: client.get("/", HTTP_HOST="not-our-host.example"),
        403: client.get("/test-only/forbidden/"),
        404: client.get("/no-such-page/"),
        500: client.get("/test-only/explode/"),
    }
    for status, response in cases.items():
        assert response.status_code == status
        assert_site_policy(response, f"the {status} page")


def test_a_refused_form_token_gets_the_sites_own_page_under_the_policy(site):
    response = Client(enforce_csrf_checks=True).post("/accounts/login/", {"username": "x"})
    assert response.status_code == 403
    assert b"security token" in response.content and b"<style" not in response.content
    assert_site_policy(response, "the CSRF failure page")


def test_the_api_docs_script_runs_by_a_nonce_of_its_own_request(site):
    nonces = []
    for _ in range(2):
        response = Client().get("/api/docs/")
        policy = assert_site_policy(response, "/api/docs/")
        nonce = re.search(r"script-src [^;]*'nonce-([^']+)'", policy).group(1)
        html = response.content.decode()
        assert html.count(f'nonce="{nonce}"') == 1
        assert len(re.findall(r"<script(?![^>]*\bsrc=)", html)) == 1  # the nonced one only
        assert "<style" not in html
        nonces.append(nonce)
    assert nonces[0] != nonces[1]


def test_pages_without_inline_script_get_no_nonce(site):
    policy = Client().get("/").get("Content-Security-Policy")
    assert "'nonce-" not in policy and "'unsafe-inline'" not in policy
