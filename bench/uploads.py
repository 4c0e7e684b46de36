"""Uploads under load: concurrent uploaders and browsers against the deployed app, on loopback.

    python bench/uploads.py [--uploaders 50] [--browsers 10] [--seconds 60]
                            [--out bench/results/uploads.json]

Each uploader is an account of its own with its own token and agent, in a closed loop: a
solution through POST /api/v1/submissions, then every fourth time a Codex log through
POST /api/v1/trajectories for a new run. Browsers read the leaderboard, the read API and the run
pages of what was uploaded. Every answer outside 2xx/3xx and every connection error counts as an
error; the bench exits 1 on any. The app runs as bench/web.py runs it (gunicorn, gthread, DEBUG
off, the page cache) on a PostgreSQL database of its own (`bench_uploads`) with Redis as the
broker (db 9, purged after; no worker grades here: the bench measures the web side). The write
throttle is raised for the run (ARENA_WRITE_RATE), since each client sends far more than a
person would; the throttle itself is tested elsewhere.
"""

import argparse
import http.client
import json
import os
import platform
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.transcript_logs import write_codex_rollout  # noqa: E402
from bench.web import (  # noqa: E402
    database_prepare,
    django_setup,
    free_port,
    percentile,
    schema_and_catalogue,
    server_start,
)

SOLUTION = (REPO / "tests" / "evaluator" / "solutions" / "silu_triton.py").read_bytes()
BROKER_URL = "redis://127.0.0.1:6379/9"
PAGES = ["/", "/api/v1/leaderboard", "/api/v1/runs", "/tasks/"]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploaders", type=int, default=50)
    parser.add_argument("--browsers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "uploads.json"))
    return parser.parse_args()


def tokens_create(count: int) -> list[str]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    users = get_user_model().objects
    tag = uuid.uuid4().hex[:6]
    return [
        Token.objects.create(user=users.create_user(f"bench-uploader-{tag}-{i}")).key
        for i in range(count)
    ]


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        )
    body = "".join(parts).encode()
    for name, (filename, data) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        )
        body += head.encode() + data + b"\r\n"
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


class Tally:
    """Latencies and errors per kind of request, shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies_ms: dict[str, list[float]] = {}
        self.errors: dict[str, list[str]] = {}
        self.run_ids: list[int] = []

    def record(self, kind: str, started: float, error: str | None) -> None:
        with self.lock:
            self.latencies_ms.setdefault(kind, []).append((time.monotonic() - started) * 1000)
            if error:
                self.errors.setdefault(kind, []).append(error)


def request(conn, tally: Tally, kind: str, method: str, path: str, **kwargs) -> bytes | None:
    started = time.monotonic()
    try:
        conn.request(method, path, **kwargs)
        response = conn.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException) as exc:
        tally.record(kind, started, f"{type(exc).__name__}: {exc}")
        conn.close()
        return None
    error = None if response.status < 400 else f"{response.status}: {body[:200]!r}"
    tally.record(kind, started, error)
    return body if error is None else None


def uploader(port: int, token: str, log: bytes, deadline: float, tally: Tally) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    auth = {"Authorization": f"Token {token}"}
    agent = f"bench-agent-{token[:8]}"
    count = 0
    while time.monotonic() < deadline:
        count += 1
        body, kind = multipart({"task": "silu", "agent": agent}, {"solution": ("s.py", SOLUTION)})
        made = request(
            conn, tally, "submission", "POST", "/api/v1/submissions",
            body=body, headers={**auth, "Content-Type": kind},
        )  # fmt: skip
        if made:
            with tally.lock:
                tally.run_ids.append(json.loads(made)["run"])
        if count % 4 == 0:
            fields = {"agent": agent, "task": "silu"}
            body, kind = multipart(fields, {"file": ("rollout-bench.jsonl", log)})
            request(
                conn, tally, "trajectory", "POST", "/api/v1/trajectories",
                body=body, headers={**auth, "Content-Type": kind},
            )  # fmt: skip


def browser(port: int, deadline: float, tally: Tally, seed: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    turn = seed
    while time.monotonic() < deadline:
        turn += 1
        with tally.lock:
            runs = tally.run_ids[-50:]
        if turn % 3 == 0 and runs:
            request(conn, tally, "run page", "GET", f"/runs/{runs[turn % len(runs)]}/")
        else:
            path = PAGES[turn % len(PAGES)]
            request(conn, tally, f"GET {path}", "GET", path)


def summary(tally: Tally, seconds: float) -> dict:
    kinds = {}
    for kind, values in sorted(tally.latencies_ms.items()):
        ordered = sorted(values)
        kinds[kind] = {
            "requests": len(values),
            "per_s": round(len(values) / seconds, 1),
            "median_ms": round(statistics.median(ordered), 1),
            "p99_ms": round(percentile(ordered, 0.99), 1),
            "errors": len(tally.errors.get(kind, [])),
            "first_errors": tally.errors.get(kind, [])[:5],
        }
    return kinds


def broker_purge() -> None:
    import redis

    redis.Redis.from_url(BROKER_URL).flushdb()


def main() -> int:
    args = parse_args()
    database = database_prepare(server_url=args.postgres, name="bench_uploads", reset=True)
    env = django_setup(database)
    schema_and_catalogue()
    tokens = tokens_create(args.uploaders)
    log_path = REPO / "var" / "bench-web" / "rollout-bench.jsonl"
    write_codex_rollout(log_path, target_bytes=20_000)
    log = log_path.read_bytes()
    port = free_port()
    server_env = {**env, "ARENA_BROKER_URL": BROKER_URL, "ARENA_WRITE_RATE": "1000000/min"}
    server, command = server_start(
        env=server_env, port=port, workers=args.workers, threads=args.threads
    )
    tally = Tally()
    try:
        deadline = time.monotonic() + args.seconds
        threads = [
            threading.Thread(target=uploader, args=(port, token, log, deadline, tally))
            for token in tokens
        ] + [
            threading.Thread(target=browser, args=(port, deadline, tally, i))
            for i in range(args.browsers)
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
        broker_purge()
    kinds = summary(tally, elapsed)
    errors = sum(k["errors"] for k in kinds.values())
    report = {
        "uploaders": args.uploaders,
        "browsers": args.browsers,
        "seconds": round(elapsed, 1),
        "server": " ".join(command[2:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "requests": sum(k["requests"] for k in kinds.values()),
        "errors": errors,
        "kinds": kinds,
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
