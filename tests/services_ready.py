"""`python -m tests.services_ready DATABASE_URL BROKER_URL`: fail loudly if either is down."""

import socket
import sys
from urllib.parse import urlparse


def reachable(url: str, default_port: int) -> str | None:
    parsed = urlparse(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or default_port
    try:
        with socket.create_connection((host, port), timeout=3):
            return None
    except OSError as exc:
        return f"{parsed.scheme} at {host}:{port} is not reachable ({exc})"


def main() -> int:
    problems = [p for p in (reachable(sys.argv[1], 5432), reachable(sys.argv[2], 6379)) if p]
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        print(
            "The second test pass needs them; `make test-embedded` runs the first pass alone.",
            file=sys.stderr,
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
