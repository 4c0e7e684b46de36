"""Memory of one upload: what a web process holds while it takes one valid log.

    python bench/upload_memory.py [--sizes-mib 25,50,100,200] [--formats claude-code,codex,...]
                                  [--paths service,trace,http]
                                  [--out bench/results/upload-memory.json]

Logs are generated at each size, the largest just under ARENA_TRAJECTORY_MAX_BYTES, one of
each format family: JSON lines (bench/transcript_logs.py: a Claude Code session folder
uploaded as a deflated .zip, its subagent files and their .meta.json inside; a Codex rollout as
a plain .jsonl and the same rollout as a .jsonl.gz) and one JSON document (here: an OpenAI chat
message list, a Gemini CLI session, a claude.ai conversation, an OpenCode export). Each log's
content differs from every other's (a server refuses a log it took before). Each upload is
measured in a fresh process:

- `service`: a Django process that imports the log once through the upload service
  (`transcripts.services.trajectory_import`, given the open file as Django hands a view its
  uploaded file) after a small warm-up upload; peak RSS over the RSS before it (VmHWM, reset
  through /proc/self/clear_refs).
- `trace`: the same in another fresh process under tracemalloc (its traced peak: Python's own
  allocations, fragmentation and freed pages not counted).
- `http`: the app as deployed (gunicorn, one gthread worker, DEBUG off), a warm-up upload, then
  the log POSTed to /api/v1/trajectories streamed from disk; the worker's peak RSS over its RSS
  before the request.

The budget of each upload is twice what it stores (raw log .gz + normalized transcript .json.gz)
or 256 MiB, whichever is less. Results go to bench/results/upload-memory.json with the command.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import platform
import random
import shutil
import socket
import subprocess
import sys
import time
import uuid
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.transcript_logs import (  # noqa: E402
    _source_file,
    _text,
    write_claude_code_session,
    write_codex_rollout,
)

DATA_DIR = REPO / "var" / "bench-upload-memory"
MIB = 1 << 20
LIMIT_BYTES = 200 * MIB  # ARENA_TRAJECTORY_MAX_BYTES's default
BUDGET_CAP_BYTES = 256 * MIB
# The generators overshoot their target a little; the largest log stays under the limit.
LARGEST_SHARE = 0.96
FORMATS = (
    "claude-code",
    "codex",
    "codex-gz",
    "chat-messages",
    "gemini-session",
    "claude-ai-export",
    "opencode-export",
)
# Formats read from one JSON document: the name each is uploaded under.
DOCUMENTS = {
    "chat-messages": "chat.json",
    "gemini-session": "session-2025-10-18T14-57-bench.json",
    "claude-ai-export": "conversation.json",
    "opencode-export": "export.json",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes-mib", default="25,50,100,200")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--paths", default="service,trace,http")
    parser.add_argument(
        "--out", type=Path, default=REPO / "bench" / "results" / "upload-memory.json"
    )
    parser.add_argument("--child", nargs=3, metavar=("MODE", "LOG", "NAME"), help=argparse.SUPPRESS)
    return parser.parse_args()


# ---- memory of a process ----------------------------------------------------------------------


def status_kib(pid: int | str, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def peak_reset(pid: int | str) -> int:
    """Reset the process's peak RSS to its RSS now (Linux 4.0+); returns that RSS in bytes."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return status_kib(pid, "VmRSS") * 1024


def peak_bytes(pid: int | str) -> int:
    return status_kib(pid, "VmHWM") * 1024


# ---- the logs -------------------------------------------------------------------------------


def logs_write(fmt: str, size_mib: int, folder: Path) -> tuple[Path, str]:
    """A log of `fmt` of about `size_mib` MiB as it is uploaded: (path, upload name)."""
    target = min(size_mib * MIB, int(LIMIT_BYTES * LARGEST_SHARE))
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "claude-code":
        session = folder / "session"
        write_claude_code_session(
            session / "0a1b2c3d-session.jsonl", target_bytes=target, events=max(200, target // 4000)
        )
        upload = folder / "0a1b2c3d-session.zip"
        with zipfile.ZipFile(upload, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(session.rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(session).as_posix())
        shutil.rmtree(session)
        return upload, upload.name
    if fmt in DOCUMENTS:
        writers = {
            "chat-messages": write_chat_document,
            "gemini-session": write_gemini_session,
            "claude-ai-export": write_claude_ai_conversation,
            "opencode-export": write_opencode_export,
        }
        path = folder / DOCUMENTS[fmt]
        writers[fmt](path, target_bytes=target, seed=size_mib)
        return path, path.name
    rollout = folder / "rollout-2025-11-20T12-00-00-bench.jsonl"
    write_codex_rollout(rollout, target_bytes=target)
    if fmt == "codex":
        return rollout, rollout.name
    packed = rollout.with_name(rollout.name + ".gz")
    with rollout.open("rb") as source, gzip.open(packed, "wb", compresslevel=6) as out:
        shutil.copyfileobj(source, out, 1 << 20)
    rollout.unlink()
    return packed, packed.name


# ---- logs that are one JSON document -----------------------------------------------------------


class _DocumentWriter:
    """Items of a JSON array written one per line, counting the bytes."""

    def __init__(self, path: Path, head: str, tail: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = path.open("w", encoding="utf-8")
        self.tail, self.written, self.first = tail, 0, True
        self._put(head)

    def _put(self, text: str) -> None:
        self.handle.write(text)
        self.written += len(text.encode())

    def item(self, value: Any) -> None:
        self._put(("\n" if self.first else ",\n") + json.dumps(value))
        self.first = False

    def close(self) -> None:
        self._put("\n" + self.tail)
        self.handle.close()


def write_chat_document(path: Path, *, target_bytes: int, seed: int) -> None:
    """An OpenAI chat message list: tool calls that write files and run tests, their outputs."""
    rng = random.Random(seed)  # noqa: S311
    out = _DocumentWriter(path, "[", "]")
    out.item({"role": "system", "content": f"You write GPU kernels. Run {seed}."})
    out.item({"role": "user", "content": "Make kernel.py faster."})
    number = 0
    while out.written < target_bytes:
        number += 1
        call = f"call_{number:06d}"
        if number % 2:
            arguments = {
                "path": f"src/k{number % 5}.py",
                "content": "\n".join(_source_file(rng, 30)),
            }
            name, output = "write_file", "ok"
        else:
            arguments = {"command": "python -m pytest -q"}
            name, output = "run", _text(rng, rng.randint(2000, 8000))
        out.item(
            {
                "role": "assistant",
                "content": _text(rng, 200),
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                    }
                ],
                "usage": {"prompt_tokens": rng.randint(5000, 40000), "completion_tokens": 300},
            }
        )
        out.item({"role": "tool", "tool_call_id": call, "content": output})
    out.item({"role": "assistant", "content": "The kernel is faster now."})
    out.close()


def write_gemini_session(path: Path, *, target_bytes: int, seed: int) -> None:
    """A Gemini CLI session file: model messages with thoughts, tool calls and their results."""
    rng = random.Random(seed)  # noqa: S311
    head = json.dumps(
        {
            "sessionId": f"bench-{seed}",
            "projectHash": "ab" * 32,
            "startTime": "2025-10-18T14:57:28.974Z",
            "lastUpdated": "2025-10-18T18:00:00.000Z",
        }
    )
    out = _DocumentWriter(path, head[:-1] + ', "messages": [', "]}")
    out.item(
        {
            "id": "u1",
            "timestamp": "2025-10-18T14:57:28.974Z",
            "type": "user",
            "content": "Make kernel.py faster.",
        }
    )
    number = 0
    while out.written < target_bytes:
        number += 1
        stamp = f"2025-10-18T15:{number // 60 % 60:02d}:{number % 60:02d}.000Z"
        if number % 2:
            name, args = (
                "write_file",
                {"file_path": f"/w/k{number % 5}.py", "content": "\n".join(_source_file(rng, 30))},
            )
            output = "Successfully wrote the file."
        else:
            name, args = "run_shell_command", {"command": "python -m pytest -q"}
            output = _text(rng, rng.randint(2000, 8000))
        call = f"{name}-{number}"
        out.item(
            {
                "id": f"g{number}",
                "timestamp": stamp,
                "type": "gemini",
                "content": _text(rng, 200),
                "model": "gemini-2.5-pro",
                "thoughts": [
                    {"subject": "Next", "description": _text(rng, 300), "timestamp": stamp}
                ],
                "tokens": {
                    "input": rng.randint(5000, 40000),
                    "output": 300,
                    "cached": 4000,
                    "thoughts": 100,
                    "tool": 0,
                    "total": 50000,
                },
                "toolCalls": [
                    {
                        "id": call,
                        "name": name,
                        "args": args,
                        "result": [
                            {
                                "functionResponse": {
                                    "id": call,
                                    "name": name,
                                    "response": {"output": output},
                                }
                            }
                        ],
                        "status": "success",
                        "timestamp": stamp,
                    }
                ],
            }
        )
    out.close()


def write_claude_ai_conversation(path: Path, *, target_bytes: int, seed: int) -> None:
    """One conversation of a claude.ai export: replies with thinking, tool calls and results,
    each message linked to the one before it."""
    rng = random.Random(seed)  # noqa: S311
    head = json.dumps(
        {
            "uuid": f"conversation-{seed}",
            "name": "Faster kernel",
            "created_at": "2024-05-01T10:00:00.000000Z",
            "updated_at": "2024-05-01T18:00:00.000000Z",
            "account": {"uuid": "acc-1"},
        }
    )
    out = _DocumentWriter(path, head[:-1] + ', "chat_messages": [', "]}")
    parent, number = "00000000-0000-4000-8000-000000000000", 0
    while out.written < target_bytes:
        number += 1
        stamp = f"2024-05-01T1{number // 3600 % 8}:{number // 60 % 60:02d}:{number % 60:02d}Z"
        uuid_ = f"m-{number:08d}"
        if number % 2:
            content = [{"type": "text", "text": _text(rng, 300)}]
            sender = "human"
        else:
            call = f"toolu_{number:08d}"
            content = [
                {"type": "thinking", "thinking": _text(rng, 300)},
                {"type": "text", "text": _text(rng, 200)},
                {
                    "type": "tool_use",
                    "id": call,
                    "name": "repl",
                    "input": {"code": "\n".join(_source_file(rng, 30))},
                },
                {
                    "type": "tool_result",
                    "tool_use_id": call,
                    "name": "repl",
                    "content": [{"type": "text", "text": _text(rng, rng.randint(2000, 8000))}],
                    "is_error": False,
                },
            ]
            sender = "assistant"
        for block in content:
            block.update({"start_timestamp": stamp, "stop_timestamp": stamp})
        out.item(
            {
                "uuid": uuid_,
                "text": "",
                "content": content,
                "sender": sender,
                "created_at": stamp,
                "updated_at": stamp,
                "attachments": [],
                "files": [],
                "parent_message_uuid": parent,
            }
        )
        parent = uuid_
    out.close()


def write_opencode_export(path: Path, *, target_bytes: int, seed: int) -> None:
    """`opencode export <session>`: a user message, then replies with reasoning, a tool call
    (a file written or a command run, with its output) and the step's tokens."""
    rng = random.Random(seed)  # noqa: S311
    session, start = f"ses_bench{seed:06d}", 1_760_000_000_000
    info = {
        "id": session,
        "projectID": "prj_bench",
        "directory": "/w",
        "version": "0.15.8",
        "title": "Faster kernel",
        "time": {"created": start, "updated": start + 9_000_000},
    }
    out = _DocumentWriter(path, json.dumps({"info": info})[:-1] + ', "messages": [', "]}")
    user = {"id": "msg_0000000", "sessionID": session, "role": "user", "time": {"created": start}}
    text = {"type": "text", "text": "Make kernel.py faster."}
    out.item({"info": user, "parts": [{"id": "prt_0000000001", **_ids(user), **text}]})
    number = 0
    while out.written < target_bytes:
        number += 1
        message = {
            "id": f"msg_{number:07d}",
            "sessionID": session,
            "role": "assistant",
            "time": {"created": start + number * 1000, "completed": start + number * 1000 + 900},
            "modelID": "claude-sonnet-4-5-20250929",
            "providerID": "anthropic",
            "cost": 0.01,
            "tokens": {
                "input": 20,
                "output": 300,
                "reasoning": 0,
                "cache": {"read": 9000, "write": 0},
            },
        }
        if number % 2:
            tool, args, output = (
                "write",
                {"filePath": f"/w/k{number % 5}.py", "content": "\n".join(_source_file(rng, 30))},
                "",
            )
        else:
            tool, args = "bash", {"command": "python -m pytest -q"}
            output = _text(rng, rng.randint(2000, 8000))
        state = {
            "status": "completed",
            "input": args,
            "output": output,
            "time": {"start": start, "end": start + 50},
        }
        parts = [
            {"type": "reasoning", "text": _text(rng, 300)},
            {"type": "text", "text": _text(rng, 200)},
            {"type": "tool", "callID": f"toolu_{number:07d}", "tool": tool, "state": state},
            {
                "type": "step-finish",
                "reason": "tool-calls",
                "cost": 0.01,
                "tokens": message["tokens"],
            },
        ]
        out.item(
            {
                "info": message,
                "parts": [
                    {"id": f"prt_{number:07d}{n:03d}", **_ids(message), **part}
                    for n, part in enumerate(parts, start=1)
                ],
            }
        )
    out.close()


def _ids(message: dict[str, Any]) -> dict[str, str]:
    return {"sessionID": message["sessionID"], "messageID": message["id"]}


def expanded_bytes(path: Path) -> int:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            return sum(info.file_size for info in archive.infolist())
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as stream:
            return sum(len(chunk) for chunk in iter(lambda: stream.read(1 << 20), b""))
    return path.stat().st_size


# ---- the environment ----------------------------------------------------------------------


def environment() -> dict[str, str]:
    env = {
        **os.environ,
        "ARENA_DEBUG": "0",
        "ARENA_SECRET_KEY": "bench-upload-memory-only-secret-key",
        "ARENA_DATA_DIR": str(DATA_DIR),
        "ARENA_LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    for name in ("DATABASE_URL", "ARENA_BROKER_URL", "ARENA_CACHE_URL", "ARENA_SQLITE_PATH"):
        env.pop(name, None)
    return env


def django_ready() -> None:
    """Schema and catalogue, once, in this process."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from tasks.services import task_sync

    call_command("migrate", verbosity=0)
    report = task_sync(catalog=settings.ARENA_CATALOG_DIR)
    if report.errors:
        raise SystemExit(f"catalogue errors: {report.errors}")


def warmup_log(folder: Path) -> Path:
    """A small log of its own for each warm-up: the same bytes twice would be refused as
    uploaded already (409) by a server that took them before."""
    seed = uuid.uuid4().int % 1_000_000
    path = folder / "warmup" / f"rollout-2025-11-20T12-00-00-warmup-{seed}.jsonl"
    write_codex_rollout(path, target_bytes=200_000, seed=seed)
    return path


# ---- through the service, in a fresh process ------------------------------------------------


def child_main(mode: str, log: str, name: str) -> None:
    """In a fresh process: a warm-up import, then the measured one; prints JSON."""
    import gc
    import tracemalloc

    import django

    django.setup()
    from transcripts.services import trajectory_import

    with warmup_log(DATA_DIR / "logs").open("rb") as warm:
        trajectory_import(file=warm, filename="warmup.jsonl")
    gc.collect()
    if mode == "trace":
        tracemalloc.start()
    baseline = peak_reset("self")
    started, cpu_started = time.perf_counter(), time.process_time()
    with open(log, "rb") as upload:
        trajectory = trajectory_import(file=upload, filename=name)
    seconds = time.perf_counter() - started
    # CPU time too: on a shared machine the wall clock also measures the neighbours.
    report: dict[str, Any] = {
        f"{mode}_seconds": round(seconds, 2),
        f"{mode}_cpu_seconds": round(time.process_time() - cpu_started, 2),
        "parsed_format": trajectory.format,
    }
    if mode == "trace":
        report["traced_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    else:
        report["rss_peak_over_baseline_bytes"] = peak_bytes("self") - baseline
    report["stored_bytes"] = trajectory.raw_log.size + trajectory.normalized.size
    report["events"] = trajectory.event_count
    print(json.dumps(report))


def through_service(log: Path, name: str, env: dict[str, str], modes: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for mode in modes:
        done = subprocess.run(
            [sys.executable, __file__, "--child", mode, str(log), name],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"the {mode} child failed:\n{done.stderr[-4000:]}")
        report.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return report


# ---- through HTTP, under the deployed server --------------------------------------------------


def token_and_task() -> tuple[str, str]:
    from django.contrib.auth import get_user_model

    from accounts.services import api_token_create
    from tasks.models import Task

    user = get_user_model().objects.create_user(f"bench-memory-{uuid.uuid4().hex[:8]}")
    task = Task.objects.filter(is_active=True).order_by("slug").first()
    if task is None:
        raise SystemExit("no task in the catalogue")
    return api_token_create(user=user, name="bench").secret, task.slug


def server_start(env: dict[str, str], port: int) -> subprocess.Popen:
    command = [
        *(sys.executable, "-m", "gunicorn", "config.wsgi:application"),
        *(f"--bind=127.0.0.1:{port}", "--workers=1", "--worker-class=gthread", "--threads=4"),
        *("--log-level=warning", "--timeout=300"),
    ]
    log = (DATA_DIR / "gunicorn.log").open("ab")
    proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited; see {log.name}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("gunicorn did not start listening within 60 s")


def worker_pid(master: int) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.2)
    raise SystemExit("gunicorn started no worker")


def post_log(port: int, token: str, task: str, log: Path, name: str) -> tuple[int, bytes]:
    """POST the log as multipart, streamed from its file (the client holds none of it)."""
    boundary = uuid.uuid4().hex
    fields = {"agent": f"bench-{uuid.uuid4().hex[:6]}", "task": task}
    head = "".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'
        for key, value in fields.items()
    )
    head += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body():
        yield head.encode()
        with log.open("rb") as stream:
            while chunk := stream.read(1 << 20):
                yield chunk
        yield tail

    length = len(head.encode()) + log.stat().st_size + len(tail)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request(
        "POST",
        "/api/v1/trajectories",
        body=body(),
        headers={
            "Authorization": f"Token {token}",
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Content-Length": str(length),
        },
    )
    response = conn.getresponse()
    return response.status, response.read()


def through_http(log: Path, name: str, env: dict[str, str]) -> dict[str, Any]:
    from bench.web import free_port

    token, task = token_and_task()
    port = free_port()
    server = server_start(env, port)
    try:
        pid = worker_pid(server.pid)
        warm = warmup_log(DATA_DIR / "logs")
        status, body = post_log(port, token, task, warm, warm.name)
        if status != 201:
            raise SystemExit(f"the warm-up upload answered {status}: {body[:500]!r}")
        baseline = peak_reset(pid)
        started = time.perf_counter()
        status, body = post_log(port, token, task, log, name)
        seconds = time.perf_counter() - started
        if status != 201:
            raise SystemExit(f"the upload answered {status}: {body[:500]!r}")
        return {
            "http_seconds": round(seconds, 2),
            "http_rss_peak_over_baseline_bytes": peak_bytes(pid) - baseline,
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


# ---- the report ---------------------------------------------------------------------------


def measure(fmt: str, size_mib: int, paths: list[str], env: dict[str, str]) -> dict[str, Any]:
    folder = DATA_DIR / "logs" / f"{fmt}-{size_mib}"
    shutil.rmtree(folder, ignore_errors=True)
    log, name = logs_write(fmt, size_mib, folder)
    row: dict[str, Any] = {
        "format": fmt,
        "size_mib": size_mib,
        "upload_bytes": log.stat().st_size,
        "expanded_bytes": expanded_bytes(log),
    }
    modes = [m for m, path in (("rss", "service"), ("trace", "trace")) if path in paths]
    if modes:
        row.update(through_service(log, name, env, modes))
    if "http" in paths:
        row.update(through_http(log, name, env))
    stored = row.get("stored_bytes")
    if stored is not None:
        row["budget_bytes"] = min(2 * stored, BUDGET_CAP_BYTES)
        peaks = [
            row.get("rss_peak_over_baseline_bytes"),
            row.get("http_rss_peak_over_baseline_bytes"),
        ]
        row["within_budget"] = all(p is None or p <= row["budget_bytes"] for p in peaks)
    shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(row), flush=True)
    return row


def main() -> int:
    args = parse_args()
    if args.child:
        child_main(*args.child)
        return 0
    shutil.rmtree(DATA_DIR, ignore_errors=True)
    DATA_DIR.mkdir(parents=True)
    env = environment()
    os.environ.update(env)
    django_ready()
    paths = args.paths.split(",")
    rows = [
        measure(fmt, int(size), paths, env)
        for fmt in args.formats.split(",")
        for size in args.sizes_mib.split(",")
    ]
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    report = {
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "commit": commit,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "budget": "min(2 x (raw .gz + normalized .json.gz), 256 MiB) of peak RSS over baseline",
        "uploads": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    shutil.rmtree(DATA_DIR, ignore_errors=True)
    return 0 if all(row.get("within_budget", True) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
