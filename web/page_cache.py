"""Whole public responses kept for a second or two in front of Django (config.wsgi).

The leaderboard's pages and read API are the same for every visitor and change only when a run
is scored; under load, rendering them per request is what costs. A view opts in by marking its
response `Cache-Control: public, max-age=N` (`public_page`); this WSGI wrapper then keeps the
bytes for min(N, ARENA_PAGE_CACHE_S) seconds per worker process and serves repeats without
entering Django. What is never kept: anything but GET, a request with an Authorization header,
a status other than 200, a response that sets a cookie or varies on the cookie or the
authorization. Other Vary headers (DRF's Accept) are part of the match. A request with a session
cookie or waiting messages is never answered from here: its page names who is logged in
(templates/base.html), and the copies kept are those of visitors with neither.

When an entry expires, one thread renders it again while the others keep serving the old copy,
so a page is at most one render late and a burst of clients never renders it many times over.
"""

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.http.cookie import parse_cookie
from django.utils.cache import patch_cache_control

MAX_ENTRIES = 512
_UNCACHEABLE_VARY = {"cookie", "authorization", "*"}
_MESSAGES_COOKIE = "messages"  # django.contrib.messages' CookieStorage

Environ = dict[str, Any]
StartResponse = Callable[..., Any]
Key = tuple[str, ...]


def public_page(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a view's 200 responses as the same for every visitor, for ARENA_PAGE_CACHE_S; all but
    one rendered for a logged-in visitor, whose nav names them (it read the session)."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        response = view(*args, **kwargs)
        seconds = settings.ARENA_PAGE_CACHE_S
        if seconds > 0 and response.status_code == 200 and not _read_the_session(args):
            patch_cache_control(response, public=True, max_age=seconds)
        return response

    return wrapped


def _read_the_session(view_args: tuple[Any, ...]) -> bool:
    # The request is the first argument of a view function, the second of a view's method.
    for arg in view_args[:2]:
        session = getattr(arg, "session", None)
        if session is not None:
            return bool(session.accessed)
    return False


@dataclass(frozen=True)
class Entry:
    expires: float
    status: str
    headers: list[tuple[str, str]]
    body: bytes
    vary: tuple[tuple[str, str], ...]  # (environ key, value) the response varied on
    stored: float


def _has_visitor_cookie(environ: Environ) -> bool:
    if "HTTP_COOKIE" not in environ:
        return False
    cookies = parse_cookie(environ["HTTP_COOKIE"])
    return settings.SESSION_COOKIE_NAME in cookies or _MESSAGES_COOKIE in cookies


def _header(headers: list[tuple[str, str]], name: str) -> str:
    return ", ".join(v for k, v in headers if k.lower() == name)


def _max_age(headers: list[tuple[str, str]]) -> float:
    directives = [d.strip().lower() for d in _header(headers, "cache-control").split(",")]
    if "public" not in directives or "no-store" in directives or "private" in directives:
        return 0.0
    for directive in directives:
        name, _, value = directive.partition("=")
        if name.strip() == "max-age" and value.strip().isdigit():
            return float(value)
    return 0.0


def _vary_keys(headers: list[tuple[str, str]]) -> list[str] | None:
    """The environ keys the response varies on, or None when it may not be kept at all."""
    names = [n.strip().lower() for n in _header(headers, "vary").split(",") if n.strip()]
    if _UNCACHEABLE_VARY & set(names):
        return None
    return ["HTTP_" + n.upper().replace("-", "_") for n in names]


class PageCache:
    def __init__(
        self,
        app: Callable[[Environ, StartResponse], Iterable[bytes]],
        *,
        seconds: Callable[[], float] = lambda: float(settings.ARENA_PAGE_CACHE_S),
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self.app = app
        self.seconds = seconds
        self.clock = clock
        self.max_entries = max_entries
        self._entries: dict[Key, Entry] = {}
        self._locks: dict[Key, threading.Lock] = {}

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        if (
            environ.get("REQUEST_METHOD") != "GET"
            or "HTTP_AUTHORIZATION" in environ
            or self.seconds() <= 0
            or _has_visitor_cookie(environ)
        ):
            return self.app(environ, start_response)
        # Everything Django may build an absolute URL from (the API's next/previous links),
        # the forwarded headers included for a deployment behind a proxy that trusts them.
        key = (
            environ.get("wsgi.url_scheme", "http"),
            environ.get("HTTP_HOST", ""),
            environ.get("HTTP_X_FORWARDED_HOST", ""),
            environ.get("HTTP_X_FORWARDED_PROTO", ""),
            environ.get("PATH_INFO", ""),
            environ.get("QUERY_STRING", ""),
        )
        entry = self._matching(key, environ)
        if entry is not None and self.clock() < entry.expires:
            return self._serve(entry, start_response)
        lock = self._locks.setdefault(key, threading.Lock())
        if entry is not None:
            if not lock.acquire(blocking=False):
                return self._serve(entry, start_response)  # another thread is refreshing it
        else:
            lock.acquire()
            entry = self._matching(key, environ)
            if entry is not None and self.clock() < entry.expires:
                lock.release()
                return self._serve(entry, start_response)
        try:
            return self._fetch(key, environ, start_response)
        finally:
            lock.release()

    def _matching(self, key: Key, environ: Environ) -> Entry | None:
        entry = self._entries.get(key)
        if entry is None or any(environ.get(k, "") != v for k, v in entry.vary):
            return None
        return entry

    def _serve(self, entry: Entry, start_response: StartResponse) -> list[bytes]:
        age = str(int(self.clock() - entry.stored))
        start_response(entry.status, [*entry.headers, ("Age", age)])
        return [entry.body]

    def _fetch(self, key: Key, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            captured.update(status=status, headers=headers)
            return start_response(status, headers, exc_info)

        result = self.app(environ, capture)
        status, headers = captured.get("status", ""), captured.get("headers", [])
        ttl = min(_max_age(headers), self.seconds())
        vary = _vary_keys(headers)
        sets_cookie = bool(_header(headers, "set-cookie"))
        if not status.startswith("200 ") or ttl <= 0 or vary is None or sets_cookie:
            return result  # passed through untouched, streaming or not
        try:
            body = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        now = self.clock()
        self._store(
            key,
            Entry(
                expires=now + ttl,
                status=status,
                headers=list(headers),
                body=body,
                vary=tuple((k, environ.get(k, "")) for k in vary),
                stored=now,
            ),
        )
        return [body]

    def _store(self, key: Key, entry: Entry) -> None:
        if key not in self._entries and len(self._entries) >= self.max_entries:
            now = self.clock()
            for old in [k for k, e in self._entries.items() if e.expires <= now]:
                self._entries.pop(old, None)
                self._locks.pop(old, None)
            if len(self._entries) >= self.max_entries:
                return  # full of live entries: served uncached until some expire
        self._entries[key] = entry
