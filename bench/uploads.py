"""Uploads under load: concurrent uploaders and browsers against the app and a grading worker.

    python bench/uploads.py [--stack deployed|embedded] [--uploaders 50] [--browsers 10]
                            [--seconds 60] [--write-rate 60/min] [--out bench/results/...json]

Each uploader is an account of its own, with its own token and agent name, in a closed loop: a
solution through POST /api/v1/submissions, then every fourth time a Codex log through
POST /api/v1/trajectories for a new run. Browsers read the leaderboard, the task list, the read
API and the pages of what was uploaded (run pages, transcript pages, run and submission JSON).
Every answer outside 2xx/3xx and every connection error counts as an error, and so does a
grading that ends as the grader's own error; the bench exits 1 on any.

The app runs as deployed (gunicorn, gthread, DEBUG off, config.wsgi with its page cache), on
loopback, with one real Celery worker serving `default` and `gpu` and grading on the CPU in the
bwrap sandbox, so the gradings' claims and stores write to the database beside the uploads.
Two stacks: `deployed` is PostgreSQL (its own database, `bench_uploads`) and Redis (db 12 as
the broker, db 13 as the cache, both emptied before and after); `embedded` is what `make run`
uses, SQLite in WAL mode and the file broker, under var/bench-uploads.

The write throttle stays on. ARENA_WRITE_RATE (per account) is the app's default unless
--write-rate sets it, and each uploader keeps to it as a client that reads the documentation
would: it never starts a write within the rate's window of the ends of its last N writes. The
rate in force is written in the results.
"""

import argparse
import collections
import contextlib
import http.client
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.transcript_logs import write_codex_rollout  # noqa: E402
from bench.web import database_prepare, free_port, percentile, server_start  # noqa: E402

SOLUTION = (REPO / "tests" / "evaluator" / "solutions" / "silu_triton.py").read_bytes()
DATA_DIR = REPO / "var" / "bench-uploads"
BROKER_URL = "redis://127.0.0.1:6379/12"
CACHE_URL = "redis://127.0.0.1:6379/13"
PAGES = ["/", "/api/v1/leaderboard", "/api/v1/runs", "/tasks/", "/api/v1/evaluations"]
PERIOD_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
WARM_AFTER_S = 5.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", choices=["deployed", "embedded"], default="deployed")
    parser.add_argument("--uploaders", type=int, default=50)
    parser.add_argument("--browsers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--write-rate", help="ARENA_WRITE_RATE for the server (default: the app's)")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.out is None:
        name = "uploads.json" if args.stack == "deployed" else "uploads-embedded.json"
        args.out = REPO / "bench" / "results" / name
    return args


# ---- the app ------------------------------------------------------------------------------


def stack_environment(args: argparse.Namespace) -> dict[str, str]:
    """The environment of this process, the server and the worker: the same for all three."""
    shutil.rmtree(DATA_DIR, ignore_errors=True)
    DATA_DIR.mkdir(parents=True)
    for name in ("DATABASE_URL", "ARENA_BROKER_URL", "ARENA_CACHE_URL", "ARENA_SQLITE_PATH"):
        os.environ.pop(name, None)
    env = {
        "ARENA_DEBUG": "0",
        "ARENA_SECRET_KEY": os.environ.get("ARENA_SECRET_KEY") or "bench-uploads-only-secret-key",
        "ARENA_DATA_DIR": str(DATA_DIR),
        "ARENA_LOG_LEVEL": "WARNING",
        "ARENA_GRADER_DEVICE": "cpu",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    if args.stack == "deployed":
        redis_empty()
        env["DATABASE_URL"] = database_prepare(
            server_url=args.postgres, name="bench_uploads", reset=True
        )
        env.update(ARENA_BROKER_URL=BROKER_URL, ARENA_CACHE_URL=CACHE_URL)
    if args.write_rate:
        env["ARENA_WRITE_RATE"] = args.write_rate
    os.environ.update(env)
    return dict(os.environ)


def redis_empty() -> None:
    import redis

    for url in (BROKER_URL, CACHE_URL):
        redis.Redis.from_url(url).flushdb()


def django_ready() -> str:
    """Schema, catalogue; returns the write rate in force."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    import config.celery  # noqa: F401 - the Celery app that an upload's grading is sent through
    from tasks.services import task_sync

    call_command("migrate", verbosity=0)
    report = task_sync(catalog=settings.ARENA_CATALOG_DIR)
    if report.errors:
        raise SystemExit(f"catalogue errors: {report.errors}")
    return settings.ARENA_WRITE_RATE


def tokens_create(count: int) -> list[str]:
    from django.contrib.auth import get_user_model

    from accounts.services import api_token_create

    users = get_user_model().objects
    return [
        api_token_create(user=users.create_user(f"bench-uploader-{i}"), name="bench").secret
        for i in range(count)
    ]


def worker_start(env: dict[str, str]) -> subprocess.Popen:
    """One grading worker, as `manage.py serve` starts it, in a session of its own."""
    command = [
        *(sys.executable, "-m", "celery", "-A", "config", "worker"),
        *("--queues", "default,gpu", "--concurrency", "1", "--loglevel", "INFO"),
        *("--hostname", f"bench-{uuid.uuid4().hex[:6]}@%h"),
        *("--without-gossip", "--without-mingle", "--without-heartbeat"),
    ]
    log_path = DATA_DIR / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=log, stderr=log, start_new_session=True
        )
    deadline = time.monotonic() + 90
    while b" ready." not in log_path.read_bytes():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the worker did not start; see {log_path}")
        time.sleep(0.3)
    return worker


def worker_stop(worker: subprocess.Popen) -> None:
    """Warm shutdown (the grading in hand ends first), then the whole group."""
    group = os.getpgid(worker.pid)
    worker.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        worker.wait(timeout=120)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    worker.wait()


def gradings() -> dict[str, int]:
    from django.db.models import Count

    from evaluator.models import Evaluation

    rows = Evaluation.objects.values("status").annotate(n=Count("id"))
    return {row["status"]: row["n"] for row in rows}


# ---- the clients --------------------------------------------------------------------------


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
    """Latencies and errors per kind of request, and what was made, shared by the clients."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = time.monotonic()
        # Per kind: (seconds into the run when it started, latency) of every request.
        self.samples: dict[str, list[tuple[float, float]]] = {}
        self.errors: dict[str, list[str]] = {}
        self.made: dict[str, list[int]] = {"run": [], "submission": [], "transcript": []}
        # Writes that an uploader held back to keep to the write rate.
        self.paced_writes = 0

    def record(self, kind: str, started: float, error: str | None) -> None:
        sample = (started - self.started, (time.monotonic() - started) * 1000)
        with self.lock:
            self.samples.setdefault(kind, []).append(sample)
            if error:
                self.errors.setdefault(kind, []).append(error)

    def add(self, what: str, pk: int) -> None:
        with self.lock:
            self.made[what].append(pk)

    def recent(self, what: str) -> list[int]:
        with self.lock:
            return self.made[what][-50:]


class Allowance:
    """A client that keeps to the write rate: a write starts only once the oldest of its last
    N writes ended a whole window ago, so the server never sees N + 1 in one window."""

    def __init__(self, rate: str | None) -> None:
        self.count, self.window_s = parse_rate(rate) if rate else (0, 0.0)
        self.ends: collections.deque[float] = collections.deque(maxlen=self.count or 1)
        self.waits = 0

    def wait(self, deadline: float) -> None:
        if self.count and len(self.ends) == self.count:
            resume = self.ends[0] + self.window_s + 0.05
            if resume > time.monotonic():
                self.waits += 1
                time.sleep(max(0.0, min(resume, deadline) - time.monotonic()))

    def ended(self) -> None:
        self.ends.append(time.monotonic())


def parse_rate(rate: str) -> tuple[int, float]:
    count, period = rate.split("/")
    return int(count), float(PERIOD_S[period[0]])


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
    error = None if 200 <= response.status < 400 else f"{response.status}: {body[:300]!r}"
    tally.record(kind, started, error)
    return None if error else body


def uploader(port: int, token: str, log: bytes, rate: str, deadline: float, tally: Tally) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    auth = {"Authorization": f"Token {token}"}
    fields = {"task": "silu", "agent": f"bench-agent-{token[:8]}"}
    allowance = Allowance(rate)
    count = 0
    while time.monotonic() < deadline:
        count += 1
        kind = "POST /api/v1/submissions"
        files = {"solution": ("solution.py", SOLUTION)}
        path = "/api/v1/submissions"
        if count % 4 == 0:
            kind, path = "POST /api/v1/trajectories", "/api/v1/trajectories"
            files = {"file": ("rollout-bench.jsonl", log)}
        allowance.wait(deadline)
        if time.monotonic() >= deadline:
            break
        body, content_type = multipart(fields, files)
        made = request(
            conn, tally, kind, "POST", path,
            body=body, headers={**auth, "Content-Type": content_type},
        )  # fmt: skip
        allowance.ended()
        if made and "solution" in files:
            submission = json.loads(made)
            tally.add("run", submission["run"])
            tally.add("submission", submission["id"])
        elif made:
            tally.add("transcript", json.loads(made)["run"])
    with tally.lock:
        tally.paced_writes += allowance.waits


def browser(port: int, deadline: float, tally: Tally, seed: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    turn = seed
    reads = [
        ("GET /runs/<id>/", "run", "/runs/{}/"),
        ("GET /api/v1/runs/<id>", "run", "/api/v1/runs/{}"),
        ("GET /api/v1/submissions/<id>", "submission", "/api/v1/submissions/{}"),
        ("GET /runs/<id>/transcript", "transcript", "/runs/{}/transcript"),
    ]
    while time.monotonic() < deadline:
        turn += 1
        # Every other read is of something uploaded, each kind in turn, else a public page.
        kind, what, pattern = reads[(turn // 2) % len(reads)]
        made = tally.recent(what)
        if turn % 2 == 0 and made:
            request(conn, tally, kind, "GET", pattern.format(made[turn % len(made)]))
        else:
            path = PAGES[turn % len(PAGES)]
            request(conn, tally, f"GET {path}", "GET", path)


def clients_run(args, port: int, tokens: list[str], rate: str) -> tuple[Tally, float]:
    log_path = DATA_DIR / "rollout-bench.jsonl"
    write_codex_rollout(log_path, target_bytes=20_000)
    log = log_path.read_bytes()
    tally = Tally()
    deadline = tally.started + args.seconds
    threads = [
        threading.Thread(target=uploader, args=(port, token, log, rate, deadline, tally))
        for token in tokens
    ] + [
        threading.Thread(target=browser, args=(port, deadline, tally, i))
        for i in range(args.browsers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally, time.monotonic() - tally.started


# ---- the report ---------------------------------------------------------------------------


def summary(tally: Tally, seconds: float) -> dict:
    """Per kind; the tail is given twice, with and without the first seconds, when 60 clients
    meet server processes whose first requests are cold."""
    kinds = {}
    for kind, samples in sorted(tally.samples.items()):
        ordered = sorted(latency for _, latency in samples)
        warm = sorted(latency for at_s, latency in samples if at_s >= WARM_AFTER_S)
        slowest = max(samples, key=lambda sample: sample[1])
        kinds[kind] = {
            "requests": len(samples),
            "per_s": round(len(samples) / seconds, 1),
            "median_ms": round(statistics.median(ordered), 1),
            "p99_ms": round(percentile(ordered, 0.99), 1),
            f"p99_ms_after_{WARM_AFTER_S:g}_s": round(percentile(warm, 0.99), 1) if warm else None,
            "max_ms": round(slowest[1], 1),
            "max_started_at_s": round(slowest[0], 1),
            "errors": len(tally.errors.get(kind, [])),
            "first_errors": tally.errors.get(kind, [])[:5],
        }
    return kinds


def main() -> int:
    args = parse_args()
    env = stack_environment(args)
    rate = django_ready()
    tokens = tokens_create(args.uploaders)
    worker = worker_start(env)
    port = free_port()
    (REPO / "var" / "bench-web").mkdir(parents=True, exist_ok=True)
    server, command = server_start(env={}, port=port, workers=args.workers, threads=args.threads)
    try:
        tally, elapsed = clients_run(args, port, tokens, rate)
    finally:
        server.terminate()
        server.wait(timeout=30)
        worker_stop(worker)
        if args.stack == "deployed":
            redis_empty()
    graded = gradings()  # with the one in hand when the window closed
    kinds = summary(tally, elapsed)
    grader_errors = graded.get("error", 0)
    errors = sum(k["errors"] for k in kinds.values()) + grader_errors
    report = {
        "stack": args.stack,
        "database": "postgresql" if args.stack == "deployed" else "sqlite (WAL)",
        "broker": "redis" if args.stack == "deployed" else "files",
        "uploaders": args.uploaders,
        "browsers": args.browsers,
        "write_rate": rate,
        "writes_held_back_for_the_rate": tally.paced_writes,
        "seconds": round(elapsed, 1),
        "server": " ".join(command[2:]),
        "worker": "celery, queues default+gpu, concurrency 1, grading on cpu",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "requests": sum(k["requests"] for k in kinds.values()),
        "per_s": round(sum(k["requests"] for k in kinds.values()) / elapsed, 1),
        "errors": errors,
        "gradings": graded,
        "kinds": kinds,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
