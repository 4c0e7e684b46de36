"""The whole-response cache in front of Django: what it keeps, for how long, and what never."""

import threading
from wsgiref.util import setup_testing_defaults

import pytest
from django.core.wsgi import get_wsgi_application
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from web.page_cache import PageCache


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class FakeApp:
    """A WSGI app answering with the headers it is given and counting its calls."""

    def __init__(self, *, status="200 OK", headers=(("Cache-Control", "public, max-age=5"),)):
        self.status, self.headers, self.calls = status, list(headers), 0
        self.closed = 0
        self.gate: threading.Event | None = None

    def __call__(self, environ, start_response):
        self.calls += 1
        if self.gate is not None:
            self.gate.wait(10)
        start_response(self.status, [("Content-Type", "text/plain"), *self.headers])
        app = self

        class Body(list):
            def close(self):
                app.closed += 1

        return Body([f"render {self.calls} of {environ['PATH_INFO']}".encode()])


def get(app, path="/", method="GET", **headers):
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path}
    environ.update({"HTTP_" + k.upper(): v for k, v in headers.items()})
    setup_testing_defaults(environ)
    seen = {}

    def start_response(status, response_headers, exc_info=None):
        seen.update(status=status, headers=dict(response_headers))

    body = b"".join(app(environ, start_response))
    return seen["status"], seen["headers"], body.decode()


@pytest.fixture
def clock():
    return Clock()


def cached(app, clock, seconds=2, **options):
    return PageCache(app, seconds=lambda: seconds, clock=clock, **options)


def test_a_public_page_is_served_again_without_the_app_until_it_expires(clock):
    app = FakeApp()
    page = cached(app, clock)
    first = get(page)
    clock.now += 1.5
    again = get(page)
    assert app.calls == 1
    assert again[2] == first[2] == "render 1 of /"
    assert again[1]["Age"] == "1"
    assert "Age" not in first[1]
    assert app.closed == 1  # the app's iterable was closed after it was read
    clock.now += 1  # 2.5 s: past min(max-age 5, the cap of 2)
    assert get(page)[2] == "render 2 of /"


def test_query_string_and_host_are_part_of_the_key(clock):
    app = FakeApp()
    page = cached(app, clock)
    get(page, "/")
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "QUERY_STRING": "sort=fast_2"}
    setup_testing_defaults(environ)
    page(environ, lambda *a: None)
    get(page, "/", host="other.example")
    get(page, "/", x_forwarded_host="proxy.example")
    assert app.calls == 4


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        ("404 Not Found", [("Cache-Control", "public, max-age=5")]),
        ("200 OK", []),
        ("200 OK", [("Cache-Control", "private, max-age=5")]),
        ("200 OK", [("Cache-Control", "public, max-age=0")]),
        ("200 OK", [("Cache-Control", "public, max-age=5"), ("Set-Cookie", "sessionid=x")]),
        ("200 OK", [("Cache-Control", "public, max-age=5"), ("Vary", "Accept, Cookie")]),
        ("200 OK", [("Cache-Control", "public, max-age=5"), ("Vary", "*")]),
    ],
)
def test_responses_not_marked_public_or_personal_are_never_kept(clock, status, headers):
    app = FakeApp(status=status, headers=headers)
    page = cached(app, clock)
    get(page)
    assert get(page)[2] == "render 2 of /"


def test_writes_and_authorized_requests_pass_through(clock):
    app = FakeApp()
    page = cached(app, clock)
    get(page, method="POST")
    get(page, method="POST")
    get(page, authorization="Token abc")
    get(page, authorization="Token abc")
    get(page, method="HEAD")
    assert app.calls == 5


def test_a_logged_in_visitor_or_one_with_messages_is_never_served_a_kept_copy(clock):
    app = FakeApp()
    page = cached(app, clock)
    get(page)
    get(page, cookie="sessionid=abc; csrftoken=x")
    get(page, cookie="messages=one")
    assert app.calls == 3
    assert get(page, cookie="csrftoken=x")[2] == "render 1 of /"  # no session: the kept copy


def test_a_vary_header_is_matched_on_the_request(clock):
    app = FakeApp(headers=[("Cache-Control", "public, max-age=5"), ("Vary", "Accept")])
    page = cached(app, clock)
    get(page, accept="application/json")
    get(page, accept="application/json")
    assert app.calls == 1
    assert get(page, accept="text/html")[2] == "render 2 of /"


def test_zero_seconds_turns_the_cache_off(clock):
    app = FakeApp()
    page = cached(app, clock, seconds=0)
    get(page)
    get(page)
    assert app.calls == 2


def test_while_one_request_refreshes_an_expired_page_the_others_get_the_old_copy(clock):
    app = FakeApp()
    page = cached(app, clock)
    get(page)
    clock.now += 3
    app.gate = threading.Event()
    refreshing = threading.Thread(target=get, args=(page,))
    refreshing.start()
    for _ in range(200):
        if app.calls == 2:
            break
        threading.Event().wait(0.01)
    assert app.calls == 2  # the refresh is inside the app, held at the gate
    assert get(page)[2] == "render 1 of /"  # served at once, not rendered a third time
    app.gate.set()
    refreshing.join(10)
    assert get(page)[2] == "render 2 of /"
    assert app.calls == 2


def test_the_cache_holds_a_bounded_number_of_pages(clock):
    app = FakeApp()
    page = cached(app, clock, max_entries=3)
    for i in range(5):
        get(page, f"/p{i}")
    assert len(page._entries) == 3
    clock.now += 10  # all expired: room is made for a new one
    get(page, "/new")
    assert [key[-2] for key in page._entries] == ["/new"]


# --- through the real application --------------------------------------------------------------


@pytest.fixture
def django_app(clock, settings):
    settings.ARENA_PAGE_CACHE_S = 2
    settings.ALLOWED_HOSTS = ["*"]
    return PageCache(get_wsgi_application(), clock=clock)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/", "/matrix/", "/tasks/", "/api/v1/leaderboard"])
def test_leaderboard_pages_are_rendered_once_per_interval(django_app, clock, path, catalog_tasks):
    status, headers, body = get(django_app, path)
    assert status.startswith("200"), body[:500]
    assert "public" in headers["Cache-Control"]
    with CaptureQueriesContext(connection) as queries:
        again = get(django_app, path)
    assert again[2] == body
    assert len(queries) == 0
    clock.now += 3
    with CaptureQueriesContext(connection) as queries:
        get(django_app, path)
    assert len(queries) > 0


@pytest.mark.django_db(transaction=True)
def test_the_nav_names_a_logged_in_visitor_while_others_get_the_kept_page(
    django_app, catalog_tasks, django_user_model
):
    browser = Client()
    browser.force_login(django_user_model.objects.create_user("alice"))
    session = f"sessionid={browser.cookies['sessionid'].value}"
    anonymous = get(django_app, "/tasks/")[2]
    assert "Log in</a>" in anonymous and "alice" not in anonymous
    _, headers, mine = get(django_app, "/tasks/", cookie=session)
    assert 'id="nav-user" title="Logged in">alice</span>' in mine
    assert "public" not in headers.get("Cache-Control", "")
    with CaptureQueriesContext(connection) as queries:
        assert get(django_app, "/tasks/")[2] == anonymous
    assert len(queries) == 0


@pytest.mark.django_db(transaction=True)
def test_pages_with_live_state_are_not_marked_public(django_app):
    status, headers, _ = get(django_app, "/api/v1/runs")
    assert status.startswith("200")
    assert "public" not in headers.get("Cache-Control", "")
    status, headers, _ = get(django_app, "/agents/no-such-agent/")
    assert status.startswith("404")
    assert "public" not in headers.get("Cache-Control", "")
