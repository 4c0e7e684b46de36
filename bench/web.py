"""Load test of the leaderboard page and the read API over a 100,000-run synthetic leaderboard.

    python bench/web.py [--runs 100000] [--clients 50] [--warmup-s 5] [--measure-s 20]
                        [--workers 2] [--threads 4] [--out bench/results/web.json]

The data is synthetic and labelled as such: every agent is named "synthetic-...", every result's
environment says `"synthetic": true`, and the rows live in their own PostgreSQL database
(`bench_web`, created here from --postgres), never in the app's. Evaluations are shaped like the
grader's results (gates, per-shape rows, summary, flags, KernelBench reward) over the real
catalogue's tasks; leaderboard scores are then built by the leaderboard's own rebuild service.

The app runs under gunicorn (gthread workers, DEBUG off, WhiteNoise for static files), through
config.wsgi, as deployed: the page cache in front of Django included (web/page_cache.py,
ARENA_PAGE_CACHE_S). The load generator is a closed loop of --clients connections on loopback,
each keep-alive with one request in flight, a warm-up, then a measured window: wrk (Debian's
`wrk`; its Lua hook reports the percentiles) when it is on PATH, else --generator python, the
same loop in asyncio. Either shares the machine's cores with the server, which the results
state. Queries per page are
counted in this process with CaptureQueriesContext, with the caches cold and then warm.
"""

import argparse
import asyncio
import json
import math
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.timing import percentile as _percentile  # noqa: E402

BATCH = 5000
TARGET_P95_MS = {"/": 50.0, "/api/v1/leaderboard": 30.0}
HARNESSES = {
    "claude-code": ["opus-4", "sonnet-4"],
    "codex": ["gpt-5", "gpt-5-mini"],
    "cursor-agent": ["auto"],
    "gemini": ["gemini-2.5-pro"],
}
EFFORTS = ["low", "high"]
GPU = "NVIDIA H200"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--warmup-s", type=float, default=5.0)
    parser.add_argument("--measure-s", type=float, default=20.0)
    parser.add_argument(
        "--reference-clients",
        type=int,
        default=1,
        help="also measure with this many clients (0: skip), to show service time alone",
    )
    parser.add_argument(
        "--generator",
        choices=["wrk", "python"],
        default="wrk" if shutil.which("wrk") else "python",
        help="the load generator (default: wrk when installed)",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default="bench_web")
    parser.add_argument("--reset", action="store_true", help="drop and reload the database")
    parser.add_argument("--load-only", action="store_true", help="load the rows, measure nothing")
    parser.add_argument(
        "--rescore", action="store_true", help="drop the leaderboard's score rows and rebuild them"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/web.json")
    return parser.parse_args()


# ---- the database -------------------------------------------------------------------------


def database_prepare(*, server_url: str, name: str, reset: bool) -> str:
    """Create the bench's own database (never the app's); returns its URL."""
    import psycopg

    if not name.startswith("bench"):
        raise SystemExit(f"--database {name!r}: the bench only writes databases named bench*")
    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and reset:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            exists = None
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server_url}/{name}"


def django_setup(database_url: str) -> dict[str, str]:
    env = {
        "DATABASE_URL": database_url,
        "ARENA_DEBUG": "0",
        "ARENA_SECRET_KEY": os.environ.get("ARENA_SECRET_KEY") or "bench-web-only-secret-key",
        "ARENA_DATA_DIR": str(REPO / "var" / "bench-web"),
        "ARENA_LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    os.environ.update(env)
    os.environ.pop("ARENA_BROKER_URL", None)
    import django

    django.setup()
    return env


def schema_and_catalogue() -> None:
    from django.conf import settings
    from django.core.management import call_command

    from tasks.services import task_sync

    call_command("migrate", verbosity=0)
    report = task_sync(catalog=settings.ARENA_CATALOG_DIR)
    if report.errors:
        raise SystemExit(f"catalogue errors: {report.errors}")


# ---- synthetic rows -----------------------------------------------------------------------


def synthetic_agents() -> list:
    from arena.services import agent_get_or_create

    agents = []
    for harness, models in HARNESSES.items():
        for model in models:
            for effort in EFFORTS:
                name = f"synthetic-{harness}-{model}-{effort}"
                agent = agent_get_or_create(
                    name=name,
                    defaults={
                        "harness": harness,
                        "model": model,
                        "effort": effort,
                        "cli_version": "0.0.0-synthetic",
                    },
                )
                agents.append(agent)
    return agents


def agent_skill(agent, index: int) -> float:
    """A fixed per-agent skill in [0.3, 0.9], so the ranking has a spread to sort."""
    return 0.3 + 0.6 * ((index * 7919) % 13) / 12


def outcome_draw(rng: random.Random, skill: float) -> str:
    roll = rng.random()
    for outcome, share in (
        ("not_compiled", 0.12 * (1.2 - skill)),
        ("runtime_failure", 0.05),
        ("incorrect", 0.25 * (1.1 - skill)),
        ("timeout", 0.01),
        ("overfit", 0.04),
    ):
        if roll < share:
            return outcome
        roll -= share
    return "passed"


REWARDS = {
    "not_compiled": -5.0,
    "runtime_failure": -3.0,
    "incorrect": -2.0,
    "timeout": -7.0,
}


def shape_rows(rng: random.Random, task, outcome: str, speedup: float) -> list[dict]:
    visible = task.manifest.get("visible_shapes") or [{}]
    rows = []
    for index in range(len(visible) + 3):
        seen = index < len(visible)
        shape = dict(visible[index % len(visible)])
        if not seen:
            shape = {k: max(1, int(v * rng.uniform(0.3, 1.7))) for k, v in shape.items()}
        correct = outcome == "passed" or (outcome == "overfit" and seen)
        ran = outcome in ("passed", "overfit", "incorrect")
        eager_ms = rng.uniform(0.1, 20.0)
        candidate = eager_ms / max(speedup * rng.uniform(0.9, 1.1), 1e-3)
        timed = ran and seen and correct
        rows.append(
            {
                "shape": shape,
                "seen": seen,
                "correct": correct if ran else None,
                "max_abs_err": rng.uniform(0, 1e-4) if ran else None,
                "max_rel_err": rng.uniform(0, 1e-4) if ran else None,
                "candidate_ms": (
                    {"median": candidate, "p10": candidate * 0.98, "p90": candidate * 1.03}
                    if timed
                    else None
                ),
                "eager_ms": eager_ms if timed else None,
                "compile_ms": eager_ms * rng.uniform(0.6, 1.0) if timed else None,
                "sota_ms": eager_ms * rng.uniform(0.3, 0.8) if timed else None,
                "tflops": rng.uniform(1, 500) if timed else None,
                "gbps": rng.uniform(100, 4300) if timed else None,
                "roofline_fraction": min(0.97, 0.4 * speedup * rng.uniform(0.8, 1.2))
                if timed
                else None,
                "reason": "" if correct or not ran else "output 0: max abs error above tolerance",
            }
        )
    return rows


def synthetic_result(rng: random.Random, task, skill: float) -> dict:
    """One evaluation's result, shaped as the grader writes it (docs/result-schema.md)."""
    outcome = outcome_draw(rng, skill)
    speedup = math.exp(rng.gauss(math.log(0.6 + 1.4 * skill), 0.5))
    per_shape = shape_rows(rng, task, outcome, speedup)
    compiled = outcome not in ("not_compiled", "timeout")
    correct = outcome in ("passed", "overfit")
    unseen = [r for r in per_shape if not r["seen"]]
    unseen_ok = sum(1 for r in unseen if r["correct"])
    overfit = {"code": "overfit", "message": "correct on seen shapes only"}
    flags = [overfit] if outcome == "overfit" else []
    status = {"passed": "passed", "overfit": "passed", "timeout": "timeout"}.get(outcome, "failed")
    return {
        "status": status,
        "gates": {
            "compile": {"passed": compiled, "reason": "synthetic", "detail": {}},
            "correctness": {"passed": correct if compiled else None, "reason": "synthetic"},
            "performance": {"passed": correct or None, "reason": "synthetic", "detail": {}},
            "generalization": {
                "passed": (unseen_ok == len(unseen)) if correct else None,
                "reason": f"correct on {unseen_ok} of {len(unseen)} unseen shapes",
                "detail": {"unseen_shapes": len(unseen)},
            },
        },
        "per_shape": per_shape,
        "summary": (
            {
                "speedup_vs_eager": speedup,
                "speedup_vs_compile": speedup * 0.9,
                "roofline_fraction": min(0.97, 0.4 * speedup),
                "generalization_pass_rate": unseen_ok / len(unseen),
            }
            if correct
            else {}
        ),
        "flags": flags,
        "reward": (speedup - 1.0) if correct else REWARDS[outcome],
        "environment": {"gpu": GPU, "cuda": "12.8", "synthetic": True},
        "task": {"slug": task.slug},
        "task_version": task.version_hash,
        "device": "cuda",
        "wall_s": rng.uniform(10, 90),
        "log": [],
        "ranked": correct and not flags,
    }


def runs_load(*, total: int, seed: int = 20261121) -> dict[str, int]:
    """Top the synthetic runs up to `total` in batches; returns row counts."""
    from arena.models import Run

    agents = synthetic_agents()
    have = Run.objects.filter(agent__slug__startswith="synthetic-").count()
    rng = random.Random(seed + have)  # noqa: S311 -- synthetic data, reproducible by seed
    started = time.monotonic()
    while have < total:
        count = min(BATCH, total - have)
        runs_batch_create(rng=rng, agents=agents, count=count)
        have += count
        print(f"  {have:>7} runs ({time.monotonic() - started:.0f} s)", flush=True)
    return {"loaded_s": round(time.monotonic() - started, 1)}


def runs_batch_create(*, rng: random.Random, agents: list, count: int) -> None:
    from django.db import transaction
    from django.utils import timezone

    from arena.models import Run, Submission
    from evaluator.models import Evaluation, EvaluationShape
    from evaluator.services import evaluation_shape_build
    from tasks.models import Task

    tasks = list(Task.objects.filter(is_active=True))
    now = timezone.now()
    with transaction.atomic():
        picks = [(rng.randrange(len(agents)), rng.choice(tasks)) for _ in range(count)]
        runs = Run.objects.bulk_create(run_row(rng, agents[a], t, now) for a, t in picks)
        graded = [
            (run, task, agent_skill(agents[a], a))
            for run, (a, task) in zip(runs, picks, strict=True)
            if run.status == Run.Status.DONE
        ]
        results = [synthetic_result(rng, task, skill) for _, task, skill in graded]
        evaluations = Evaluation.objects.bulk_create(
            evaluation_row(task, result, now)
            for (_, task, _), result in zip(graded, results, strict=True)
        )
        Submission.objects.bulk_create(
            Submission(run=run, evaluation=evaluation)
            for (run, _, _), evaluation in zip(graded, evaluations, strict=True)
        )
        EvaluationShape.objects.bulk_create(
            evaluation_shape_build(evaluation=evaluation, index=index, row=row)
            for evaluation, result in zip(evaluations, results, strict=True)
            for index, row in enumerate(result["per_shape"])
        )


def run_row(rng: random.Random, agent, task, now):
    from arena.models import Run

    failed = rng.random() < 0.05
    input_tokens = int(rng.uniform(5e4, 2e6))
    output_tokens = int(rng.uniform(5e3, 2e5))
    return Run(
        agent=agent,
        task=task,
        status=Run.Status.FAILED if failed else Run.Status.DONE,
        failure_reason=rng.choice(["agent_timeout", "no_solution", "agent_error"])
        if failed
        else "",
        source=Run.Source.ARENA,
        hidden=rng.random() < 0.005,
        hidden_reason="synthetic moderation sample",
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=int(input_tokens * rng.uniform(0, 4)),
        cost_usd=(input_tokens * 3 + output_tokens * 15) / 1e6,
        duration_s=rng.uniform(60, 2700),
        finished_at=now,
    )


def evaluation_row(task, result: dict, now):
    from evaluator.models import Evaluation

    code = f"# synthetic solution for {task.slug}\n"
    return Evaluation(
        task=task,
        task_version=task.version_hash,
        solution_name="solution.py",
        solution_code=code,
        solution_sha256="0" * 64,
        status=result["status"],
        device="cuda",
        reward=result["reward"],
        ranked=result["ranked"],
        result=result,
        attempts=1,
        started_at=now,
        finished_at=now,
    )


def scores_build(*, rescore: bool) -> dict:
    """The leaderboard's own rebuild over the loaded rows, where the leaderboard has one."""
    try:
        from arena.models import RunScore
        from arena.run_scores import leaderboard_rebuild
    except ImportError:
        return {"rebuilt": None, "note": "arena.run_scores.leaderboard_rebuild not present"}
    started = time.monotonic()
    if rescore:
        RunScore.objects.all().delete()
    added = leaderboard_rebuild()
    return {"added": added, "rebuild_s": round(time.monotonic() - started, 1)}


def vacuum_analyze() -> float:
    """What autovacuum does to a live database: planner statistics and the visibility map
    (index-only counts), which a freshly bulk-loaded one lacks."""
    from django.db import connection

    started = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return round(time.monotonic() - started, 1)


def row_counts() -> dict[str, int]:
    from arena.models import Agent, Run, Submission
    from evaluator.models import Evaluation, EvaluationShape
    from tasks.models import Task

    counts = {
        "runs": Run.objects.count(),
        "synthetic_agents": Agent.objects.filter(slug__startswith="synthetic-").count(),
        "tasks": Task.objects.filter(is_active=True).count(),
        "submissions": Submission.objects.count(),
        "evaluations": Evaluation.objects.count(),
        "evaluation_shapes": EvaluationShape.objects.count(),
    }
    try:
        from arena.models import RunScore

        counts["run_scores"] = RunScore.objects.count()
    except ImportError:
        pass
    return counts


# ---- queries per page ---------------------------------------------------------------------


def pages_to_count() -> list[str]:
    from arena.models import Run
    from tasks.models import Task

    run = Run.objects.filter(hidden=False, status="done").order_by("pk").first()
    task = Task.objects.filter(slug="silu").first() or Task.objects.first()
    agent_slug = "synthetic-claude-code-opus-4-high"  # slugify of a name made above
    return [
        "/",
        "/api/v1/leaderboard",
        "/matrix/",
        f"/agents/{agent_slug}/",
        f"/tasks/{task.slug}/",
        f"/runs/{run.pk}/",
        "/api/v1/runs",
        f"/api/v1/runs/{run.pk}",
        "/api/v1/agents",
        "/api/v1/evaluations",
    ]


def query_counts() -> dict[str, dict]:
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(raise_request_exception=False)
    counts = {}
    for path in pages_to_count():
        cache.clear()
        row = {}
        for state in ("cold", "warm"):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(path)
                elapsed_ms = (time.perf_counter() - started) * 1000
            row[state] = {
                "status": response.status_code,
                "queries": len(queries),
                "ms_single_request": round(elapsed_ms, 1),
            }
        counts[path] = row
        print(f"  {path:<45} cold {row['cold']} warm {row['warm']}", flush=True)
    return counts


# ---- the server ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_start(
    *, env: dict[str, str], port: int, workers: int, threads: int, log_dir: Path | None = None
):
    """gunicorn on `port`, once the static files are collected where it serves them from: the
    pages name them by content hash, which only the collected manifest knows."""
    environment = {**os.environ, **env}
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "-v", "0"],
        cwd=REPO,
        env=environment,
        check=True,
    )
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "config.wsgi:application",
        f"--bind=127.0.0.1:{port}",
        f"--workers={workers}",
        "--worker-class=gthread",
        f"--threads={threads}",
        "--keep-alive=5",
        "--backlog=256",
        "--log-level=warning",
    ]
    log = open((log_dir or REPO / "var" / "bench-web") / "gunicorn.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(command, cwd=REPO, env=environment, stdout=log, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited; see {log.name}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, command
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("gunicorn did not start listening within 60 s")


# ---- the load generator -------------------------------------------------------------------


async def response_read(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """One HTTP/1.1 response: (status, keep the connection)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip().lower()
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding") == "chunked":
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            await reader.readexactly(size + 2)
        await reader.readuntil(b"\r\n")
    return status, headers.get("connection") != "close"


async def client_loop(port: int, path: str, window: tuple[float, float], stats: dict) -> None:
    measure_from, stop_at = window
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: keep-alive\r\n"
        "Accept: text/html,application/json\r\n\r\n"
    ).encode()
    reader = writer = None
    while (started := time.perf_counter()) < stop_at:
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            status, keep = await response_read(reader)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            status, keep = 0, False
        finished = time.perf_counter()
        # A request counts when it completes inside the window, whenever it started, so
        # that slow requests are not dropped from the sample.
        if measure_from <= finished <= stop_at:
            stats["latencies_ms"].append((finished - started) * 1000)
            stats["statuses"][status] = stats["statuses"].get(status, 0) + 1
        if not keep and writer is not None:
            writer.close()
            reader = writer = None
    if writer is not None:
        writer.close()


async def load_run(*, port: int, path: str, clients: int, warmup_s: float, measure_s: float):
    now = time.perf_counter()
    window = (now + warmup_s, now + warmup_s + measure_s)
    stats: dict = {"latencies_ms": [], "statuses": {}}
    await asyncio.gather(*(client_loop(port, path, window, stats) for _ in range(clients)))
    return stats


WRK_REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "ARENA-WRK {\\"requests\\": %d, \\"duration_us\\": %d, \\"p50_us\\": %d, "
    .. "\\"p95_us\\": %d, \\"p99_us\\": %d, \\"mean_us\\": %.1f, \\"max_us\\": %d, "
    .. "\\"errors\\": {\\"connect\\": %d, \\"read\\": %d, \\"write\\": %d, "
    .. "\\"timeout\\": %d, \\"status_not_2xx_3xx\\": %d}}\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    latency:percentile(99), latency.mean, latency.max,
    e.connect, e.read, e.write, e.timeout, e.status))
end
"""


def wrk_run(*, port: int, path: str, clients: int, seconds: float) -> dict:
    """One wrk run; its Lua `done` hook prints the summary as JSON."""
    script = REPO / "var" / "bench-web" / "report.lua"
    script.write_text(WRK_REPORT)
    threads = max(1, min(2, clients))
    out = subprocess.run(
        [
            "wrk",
            f"--threads={threads}",
            f"--connections={clients}",
            f"--duration={max(1, round(seconds))}s",
            "--timeout=10s",
            "--header=Accept: text/html,application/json",
            f"--script={script}",
            f"http://127.0.0.1:{port}{path}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("ARENA-WRK "))
    return json.loads(line.removeprefix("ARENA-WRK "))


def wrk_measure(*, port: int, path: str, clients: int, args: argparse.Namespace) -> dict:
    wrk_run(port=port, path=path, clients=clients, seconds=args.warmup_s)  # discarded
    row = wrk_run(port=port, path=path, clients=clients, seconds=args.measure_s)
    failed = sum(row["errors"].values())
    p95 = row["p95_us"] / 1000
    measured_s = row["duration_us"] / 1e6
    return {
        "requests": row["requests"],
        "failed": failed,
        "errors": row["errors"],
        "throughput_rps": round(row["requests"] / measured_s, 1),
        "p50_ms": round(row["p50_us"] / 1000, 2),
        "p95_ms": round(p95, 2),
        "p99_ms": round(row["p99_us"] / 1000, 2),
        "mean_ms": round(row["mean_us"] / 1000, 2),
        "max_ms": round(row["max_us"] / 1000, 2),
        "target_p95_ms": TARGET_P95_MS.get(path),
        "target_met": row["requests"] > 0
        and p95 <= TARGET_P95_MS.get(path, math.inf)
        and failed == 0,
    }


def percentile(values: list[float], q: float) -> float:
    """The grader's percentile (linear between ranks); NaN where nothing was measured."""
    return _percentile(values, q) if values else float("nan")


def load_summary(stats: dict, measure_s: float, path: str) -> dict:
    latencies = sorted(stats["latencies_ms"])
    ok = stats["statuses"].get(200, 0)
    p95 = percentile(latencies, 0.95)
    return {
        "requests": len(latencies),
        "ok_200": ok,
        "statuses": {str(k): v for k, v in sorted(stats["statuses"].items())},
        "throughput_rps": round(len(latencies) / measure_s, 1),
        "p50_ms": round(percentile(latencies, 0.50), 2),
        "p95_ms": round(p95, 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "mean_ms": round(statistics.fmean(latencies), 2) if latencies else None,
        "max_ms": round(latencies[-1], 2) if latencies else None,
        "target_p95_ms": TARGET_P95_MS.get(path),
        "target_met": bool(latencies)
        and p95 <= TARGET_P95_MS.get(path, math.inf)
        and ok == len(latencies),
    }


def load_measure(*, port: int, path: str, clients: int, args: argparse.Namespace) -> dict:
    print(f"load: {clients} clients on {path}", flush=True)
    # Other work on the machine takes cores from the server; the load average says how much.
    load_before = os.getloadavg()[0]
    if args.generator == "wrk":
        summary = wrk_measure(port=port, path=path, clients=clients, args=args)
    else:
        stats = asyncio.run(
            load_run(
                port=port,
                path=path,
                clients=clients,
                warmup_s=args.warmup_s,
                measure_s=args.measure_s,
            )
        )
        summary = load_summary(stats, args.measure_s, path)
    summary["clients"] = clients
    summary["load_average_1m"] = {"before": load_before, "after": os.getloadavg()[0]}
    print(f"  {summary}", flush=True)
    return summary


def queueing_analysis(endpoints: dict[str, dict], clients: int) -> dict:
    """Little's law for a closed loop: mean latency = clients / throughput. A p95 target at
    this many clients therefore needs at least clients / target requests per second."""
    return {
        path: {
            "mean_latency_from_littles_law_ms": round(1000 * clients / row["throughput_rps"], 1)
            if row["throughput_rps"]
            else None,
            "throughput_needed_for_target_rps_at_least": round(
                1000 * clients / TARGET_P95_MS[path]
            ),
            "throughput_measured_rps": row["throughput_rps"],
        }
        for path, row in endpoints.items()
    }


# ---- main ---------------------------------------------------------------------------------


def machine() -> dict:
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_at_end": os.getloadavg(),
        "note": "the load generator runs on the same cores as the server and the database",
    }


def main() -> None:
    args = parse_args()
    url = database_prepare(server_url=args.postgres, name=args.database, reset=args.reset)
    env = django_setup(url)
    (REPO / "var" / "bench-web").mkdir(parents=True, exist_ok=True)
    print(f"database {args.database}: migrating, syncing the catalogue", flush=True)
    schema_and_catalogue()
    print(f"loading synthetic runs up to {args.runs}", flush=True)
    load = runs_load(total=args.runs)
    load.update(scores_build(rescore=args.rescore))
    load["vacuum_analyze_s"] = vacuum_analyze()
    counts = row_counts()
    print(f"rows: {counts}", flush=True)
    if args.load_only:
        return
    print("queries per page (this process, caches cold then warm)", flush=True)
    queries = query_counts()

    from django.conf import settings
    from django.db import connections

    connections.close_all()
    port = free_port()
    proc, command = server_start(env=env, port=port, workers=args.workers, threads=args.threads)
    endpoints, reference = {}, {}
    try:
        for path in TARGET_P95_MS:
            endpoints[path] = load_measure(port=port, path=path, clients=args.clients, args=args)
            if args.reference_clients:
                reference[path] = load_measure(
                    port=port, path=path, clients=args.reference_clients, args=args
                )
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    results = {
        "what": "leaderboard page and read API under load, over synthetic runs",
        "synthetic_data": True,
        "database": f"PostgreSQL database {args.database} (separate from the app's)",
        "machine": machine(),
        "rows": counts,
        "load_phase": load,
        "server": {
            "command": " ".join(command[1:]),
            "debug": False,
            "workers": args.workers,
            "threads_per_worker": args.threads,
            "page_cache_s": settings.ARENA_PAGE_CACHE_S,
        },
        "load_generator": {
            "kind": (
                "wrk, closed loop over keep-alive HTTP/1.1 on loopback, 2 threads"
                if args.generator == "wrk"
                else "asyncio closed loop over keep-alive HTTP/1.1 on loopback"
            ),
            "clients": args.clients,
            "warmup_s": args.warmup_s,
            "measure_s": args.measure_s,
        },
        "endpoints": endpoints,
        "reference_low_concurrency": reference,
        "queueing": queueing_analysis(endpoints, args.clients),
        "queries_per_page": queries,
        "reproduce": "python bench/web.py " + " ".join(sys.argv[1:]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()
