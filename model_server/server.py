"""The HTTP side: one ThreadingHTTPServer, routes by path to the three wire formats.

A request may come through a forward proxy (the sandbox's egress proxy), so its path can be
absolute (`http://host:port/v1/messages`); only the path is read. Every reply is recorded in
`served` (and answered at GET /_arena/served), so a test or an operator sees what was said.
"""

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from model_server import anthropic, gemini, openai
from model_server.script import Script
from model_server.wire import Reply, json_reply

MAX_REQUEST_BYTES = 32 * 1024 * 1024
_GEMINI = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$")


def route(method: str, target: str, request: dict[str, Any], scripts: "Scripts") -> Reply:
    path = urlsplit(target).path
    script = scripts.pick(str(request.get("model") or ""))
    if method == "POST" and path.endswith("/messages/count_tokens"):
        return json_reply({"input_tokens": 1000}, {"api": "anthropic", "kind": "count"})
    if method == "POST" and path.endswith("/messages"):
        return anthropic.answer(request, script)
    if method == "POST" and path.endswith("/responses"):
        return openai.answer(request, script)
    found = _GEMINI.search(path)
    if method == "POST" and found:
        if found.group(2) == "countTokens":
            return gemini.count_tokens(request)
        stream = found.group(2) == "streamGenerateContent"
        script = scripts.pick(found.group(1))
        return gemini.answer(request, script, model=found.group(1), stream=stream)
    if method == "GET" and path.endswith("/models"):
        return json_reply({"object": "list", "data": [], "models": []}, {"kind": "models"})
    return json_reply(
        {"error": {"message": f"no such route: {method} {path}"}},
        {"kind": "unknown", "path": path},
        status=404,
    )


class Scripts:
    """The scripts a server plays: the one named like the model a request asks for (an agent
    whose model is "endless" gets scripts/endless.json), else the first."""

    def __init__(self, scripts: list[Script]) -> None:
        self.scripts = {script.name: script for script in scripts}
        self.default = scripts[0]

    def pick(self, model: str) -> Script:
        return self.scripts.get(model.removeprefix("models/"), self.default)


class ScriptedModelServer:
    """The server on `host`:`port` (0: any free port) playing `script` (or, for a model named
    like one of `others`, that one), in a thread of its own; a context manager."""

    def __init__(
        self,
        script: Script,
        *,
        others: list[Script] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.script = script
        self.scripts = Scripts([script, *(others or [])])
        self.served: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def address(self) -> str:
        """host:port, as the egress proxy's allow list names it."""
        host, port = self.httpd.server_address[:2]
        return f"{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return f"http://{self.address}"

    def record(self, entry: dict[str, Any]) -> None:
        """One call served; `served_at` is when (time.time()), so that a test can tell the
        agent's start-up from the time its calls took."""
        with self._lock:
            self.served.append({**entry, "served_at": time.time()})

    def main_calls(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(e) for e in self.served if e.get("kind") == "main"]

    def start(self) -> "ScriptedModelServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "ScriptedModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(server: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if urlsplit(self.path).path == "/_arena/served":
                with server._lock:
                    self._send(json_reply(list(server.served), {}))
                return
            self._answer("GET", {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_REQUEST_BYTES:
                self._send(json_reply({"error": {"message": "request too large"}}, {}, status=413))
                return
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                request = {}
            self._answer("POST", request if isinstance(request, dict) else {})

        def _answer(self, method: str, request: dict[str, Any]) -> None:
            reply = route(method, self.path, request, server.scripts)
            server.record({**reply.record, "method": method, "path": urlsplit(self.path).path})
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
