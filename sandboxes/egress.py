"""Allow-listed egress for a sandbox that otherwise has no network.

The parent runs `EgressProxy`, an HTTP proxy that tunnels (CONNECT) or forwards (a plain
http:// request) only to the listed host:port pairs and answers 403 to anything else. A
namespace sandbox (bwrap, docker) has no route out, so the proxy listens on a Unix socket bound
into it, and `relay` (run inside, in front of the sandboxed command) turns that socket back into
127.0.0.1:<port> for HTTPS_PROXY. The sandbox can reach the listed hosts through the proxy and
nothing else: it never had a network interface.
"""

import contextlib
import os
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

RELAY_PORT = 3128
# Each tunnel holds two threads in the parent; a sandbox may not open them without end.
MAX_TUNNELS = 64
_HEADER_CAP_BYTES = 8192
_CONNECT_TIMEOUT_S = 10.0


class EgressError(ValueError):
    pass


def parse_allowed(entries: Sequence[str]) -> frozenset[tuple[str, int]]:
    """ "host:port" strings, checked: a bare host would silently allow nothing."""
    allowed = set()
    for entry in entries:
        host, sep, port = entry.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise EgressError(f"allowed host {entry!r} is not host:port")
        allowed.add((host.strip("[]").lower(), int(port)))
    return frozenset(allowed)


def proxy_env(port: int = RELAY_PORT) -> dict[str, str]:
    url = f"http://127.0.0.1:{port}"
    # Both spellings: curl reads lower case, many SDKs read upper case.
    names = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")
    return {name: url for name in names} | {"NO_PROXY": "", "no_proxy": ""}


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _splice(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until both sides are done, then close both."""
    back = threading.Thread(target=_pump, args=(b, a), daemon=True)
    back.start()
    _pump(a, b)
    back.join()
    a.close()
    b.close()


def _read_request_head(client: socket.socket) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = client.recv(1024)
        if not chunk or len(head) > _HEADER_CAP_BYTES:
            raise EgressError("incomplete or oversized request head")
        head += chunk
    return head


def _connect_target(head: bytes) -> tuple[str, int]:
    first = head.split(b"\r\n", 1)[0].decode("latin-1").split()
    if len(first) != 3 or first[0].upper() != "CONNECT":
        raise EgressError("only CONNECT is proxied")
    (host, port), *_ = parse_allowed([first[1]])
    return host, port


def _forward_target(head: bytes) -> tuple[str, int, bytes]:
    """A plain-HTTP request in absolute form (`POST http://host:port/path HTTP/1.1`), as a
    client sends an http:// URL to its proxy (Codex does, for a model server without TLS): the
    target, and the head rewritten to origin form with the connection closed after the reply,
    so that every request on it is checked here."""
    first, _, rest = head.partition(b"\r\n")
    words = first.decode("latin-1").split()
    if len(words) != 3 or not words[1].lower().startswith("http://"):
        raise EgressError("only CONNECT and absolute http:// requests are proxied")
    authority, _, path = words[1][len("http://") :].partition("/")
    if "@" in authority:
        raise EgressError("credentials in a proxied URL are refused")
    if ":" not in authority.rpartition("]")[2]:
        authority += ":80"
    (host, port), *_ = parse_allowed([authority])
    lines = [
        line
        for line in rest.split(b"\r\n")
        if not line.lower().startswith((b"connection:", b"proxy-connection:", b"keep-alive:"))
    ]
    request_line = f"{words[0]} /{path} {words[2]}".encode("latin-1")
    return host, port, b"\r\n".join([request_line, b"Connection: close", *lines])


class EgressProxy:
    """A CONNECT proxy that tunnels to allow-listed host:port pairs only."""

    def __init__(self, allowed: Sequence[str], *, unix_path: Path | None = None) -> None:
        self.allowed = parse_allowed(allowed)
        self.refused: list[str] = []
        if unix_path is not None:
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(str(unix_path))
            # The sandbox may run as another user; the socket is its only way out.
            os.chmod(unix_path, 0o666)  # noqa: S103 - inside a 0755 folder of its own
        else:
            self.listener = socket.socket()
            self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self._slots = threading.BoundedSemaphore(MAX_TUNNELS)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def tcp_port(self) -> int:
        return int(self.listener.getsockname()[1])

    def __enter__(self) -> "EgressProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                self._answer(client, b"503 Service Unavailable", "too many tunnels")
                continue
            threading.Thread(target=self._handle_in_slot, args=(client,), daemon=True).start()

    def _handle_in_slot(self, client: socket.socket) -> None:
        try:
            self._handle(client)
        finally:
            self._slots.release()

    def _handle(self, client: socket.socket) -> None:
        client.settimeout(_CONNECT_TIMEOUT_S)
        forwarded = None
        try:
            head = _read_request_head(client)
            if head[:8].upper().startswith(b"CONNECT "):
                host, port = _connect_target(head)
            else:
                host, port, forwarded = _forward_target(head)
        except (EgressError, OSError) as exc:
            return self._answer(client, b"400 Bad Request", str(exc))
        if (host, port) not in self.allowed:
            return self._answer(client, b"403 Forbidden", f"{host}:{port}")
        try:
            upstream = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_S)
        except OSError as exc:
            return self._answer(client, b"502 Bad Gateway", f"{host}:{port}: {exc}")
        client.settimeout(None)
        upstream.settimeout(None)
        if forwarded is None:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream.sendall(forwarded)  # the head, with whatever of the body came with it
        _splice(client, upstream)

    def _answer(self, client: socket.socket, status: bytes, why: str) -> None:
        self.refused.append(why)
        with contextlib.suppress(OSError):
            client.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\n\r\n")
        client.close()


def _relay_forever(listener: socket.socket, unix_path: str) -> None:
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(unix_path)
        except OSError:
            client.close()
            continue
        threading.Thread(target=_splice, args=(client, upstream), daemon=True).start()


def relay_main(argv: Sequence[str]) -> None:
    """`relay <unix socket> <port> -- command...`: listen on 127.0.0.1:<port> inside the
    sandbox, forward every connection to the proxy's socket, and become the command."""
    unix_path, port, separator, *command = argv
    if separator != "--" or not command:
        raise SystemExit("usage: relay <unix socket> <port> -- command...")
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(64)
    # The command keeps this process (its pid, its inherited descriptors, its exit status);
    # the relay lives on in a forked child and dies with the sandbox.
    if os.fork() == 0:
        with contextlib.suppress(BaseException):
            _relay_forever(listener, unix_path)
        os._exit(0)
    listener.close()
    try:
        os.execvp(command[0], command)  # noqa: S606 - the sandboxed command, as given
    except OSError as exc:
        raise SystemExit(f"relay: could not start {command[0]}: {exc}") from exc


if __name__ == "__main__":
    if sys.argv[1:2] != ["relay"]:
        raise SystemExit("usage: python -m sandboxes.egress relay ...")
    relay_main(sys.argv[2:])
