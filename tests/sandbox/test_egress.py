"""Allow-listed egress: a listed host:port is reachable through the proxy, nothing else is."""

import socket
import threading

import pytest

from sandboxes.egress import EgressError, EgressProxy, parse_allowed
from tests.sandbox.conftest import NAMESPACE_BACKENDS

GREETING = b"hello from the model api\n"

# Inside the sandbox: CONNECT through $HTTPS_PROXY to each port, and a direct connection.
CLIENT = """
import json, os, socket, sys
from urllib.parse import urlsplit
proxy = urlsplit(os.environ["HTTPS_PROXY"])
def through_proxy(port):
    with socket.create_connection((proxy.hostname, proxy.port), timeout=10) as s:
        s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n".encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head:
            chunk = s.recv(1024)
            if not chunk:
                break
            head += chunk
        status = head.split(b" ", 2)[1].decode() if head else "closed"
        body = head.partition(b"\\r\\n\\r\\n")[2]
        while status == "200" and (chunk := s.recv(1024)):
            body += chunk
        return {"status": status, "body": body.decode()}
def direct(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        return "connected"
    except OSError as exc:
        return type(exc).__name__
report = {"allowed": through_proxy(ALLOWED), "other": through_proxy(OTHER),
          "direct": direct(ALLOWED)}
json.dump(report, open("report.json", "w"))
"""


class Api:
    """A loopback TCP server standing in for a model API: it greets whoever connects."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.port = self.server.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            client.sendall(GREETING)
            client.close()

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def apis():
    allowed, other = Api(), Api()
    yield allowed, other
    allowed.close()
    other.close()


def client_code(allowed: int, other: int) -> str:
    return CLIENT.replace("ALLOWED", str(allowed)).replace("OTHER", str(other))


@pytest.mark.parametrize("backend", NAMESPACE_BACKENDS)
def test_only_the_listed_host_is_reachable_and_only_through_the_proxy(backend, run_code, apis):
    allowed, other = apis
    ran = run_code(
        backend,
        client_code(allowed.port, other.port),
        allow_hosts=[f"127.0.0.1:{allowed.port}"],
    )
    assert ran.report["allowed"] == {"status": "200", "body": GREETING.decode()}
    assert ran.report["other"] == {"status": "403", "body": ""}
    assert ran.report["direct"] != "connected"
    assert other.connections == 0


@pytest.mark.parametrize("backend", NAMESPACE_BACKENDS)
def test_without_allowed_hosts_there_is_no_proxy(backend, run_code):
    ran = run_code(
        backend,
        """
import json, os
json.dump({"proxy": os.environ.get("HTTPS_PROXY")}, open("report.json", "w"))
""",
    )
    assert ran.report == {"proxy": None}


def test_the_process_backend_offers_the_proxy_without_enforcing_it(run_code, apis):
    allowed, other = apis
    ran = run_code(
        "process", client_code(allowed.port, other.port), allow_hosts=[f"127.0.0.1:{allowed.port}"]
    )
    assert ran.report["allowed"]["status"] == "200"
    assert ran.report["other"]["status"] == "403"
    # No namespace: the direct route stays open (docs/sandboxes.md says so).
    assert ran.report["direct"] == "connected"


def test_the_proxy_refuses_requests_that_are_neither_connect_nor_absolute_http(apis):
    allowed, _ = apis
    with EgressProxy([f"127.0.0.1:{allowed.port}"]) as proxy:
        for head in (
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            f"GET https://127.0.0.1:{allowed.port}/ HTTP/1.1\r\n\r\n".encode(),
            f"GET http://user:pw@127.0.0.1:{allowed.port}/ HTTP/1.1\r\n\r\n".encode(),
            b"CONNECT " + b"a" * 10000 + b"\r\n",
        ):
            with socket.create_connection(("127.0.0.1", proxy.tcp_port), timeout=5) as client:
                client.sendall(head)
                assert client.recv(1024).startswith(b"HTTP/1.1 400"), head
    assert allowed.connections == 0


def test_a_plain_http_request_is_forwarded_to_a_listed_host_only_in_origin_form():
    seen: list[bytes] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def serve() -> None:
        client, _ = server.accept()
        seen.append(client.recv(4096))
        client.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        client.close()

    threading.Thread(target=serve, daemon=True).start()
    with EgressProxy([f"127.0.0.1:{port}"]) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.tcp_port), timeout=5) as client:
            client.sendall(
                f"POST http://127.0.0.1:{port}/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Connection: keep-alive\r\nContent-Length: 2\r\n\r\n{{}}".encode()
            )
            assert client.recv(1024).endswith(b"\r\n\r\nok")
        with socket.create_connection(("127.0.0.1", proxy.tcp_port), timeout=5) as client:
            client.sendall(b"GET http://127.0.0.1:9/ HTTP/1.1\r\n\r\n")
            assert client.recv(1024).startswith(b"HTTP/1.1 403")
    server.close()
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/messages HTTP/1.1"
    assert b"Connection: close" in lines and b"Connection: keep-alive" not in lines
    assert body == b"{}"


@pytest.mark.parametrize("entry", ["api.example.com", "api.example.com:https", ":443", "h:0"])
def test_allowed_hosts_must_name_a_port(entry):
    with pytest.raises(EgressError, match="host:port"):
        parse_allowed([entry])


def test_allowed_hosts_match_without_regard_to_case():
    assert parse_allowed(["API.Anthropic.com:443"]) == {("api.anthropic.com", 443)}


@pytest.mark.parametrize("backend", ["process", *NAMESPACE_BACKENDS])
def test_a_malformed_allowed_host_is_a_sandbox_error_before_anything_runs(
    backend, make_sandbox, tmp_path
):
    from sandboxes.backends import Limits, SandboxError

    with pytest.raises(SandboxError, match="is not host:port"):
        make_sandbox(backend).run(
            ["touch", "ran"], workdir=tmp_path, env={}, limits=Limits(), allow_hosts=["api"]
        )
    assert not (tmp_path / "ran").exists()


def test_the_proxy_caps_open_tunnels(apis, monkeypatch):
    from sandboxes import egress

    allowed, _ = apis
    monkeypatch.setattr(egress, "MAX_TUNNELS", 2)
    with EgressProxy([f"127.0.0.1:{allowed.port}"]) as proxy:
        idle = [socket.create_connection(("127.0.0.1", proxy.tcp_port)) for _ in range(2)]
        with socket.create_connection(("127.0.0.1", proxy.tcp_port), timeout=5) as third:
            assert third.recv(1024).startswith(b"HTTP/1.1 503")
        for connection in idle:
            connection.close()
