"""A candidate that attacks the worker grading it, under every backend this machine has.

The grading parent holds secrets in its environment and conceals them as a worker does; the
candidate walks /proc for them, knocks on Redis and PostgreSQL, lists the worker's data folder
and leaves a file in /dev/shm. It prints what it found (its log comes back with the verdict).
"""

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tests.sandbox.conftest import NAMESPACE_BACKENDS, REPO

SECRET_NAMES = ("ARENA_SECRET_KEY", "ARENA_HIDDEN_SEED", "DATABASE_URL", "ARENA_BROKER_URL")

PROBE = """
import json, os, socket
from pathlib import Path
import torch, torch.nn as nn

def attempt(action):
    try:
        return action()
    except OSError as exc:
        return type(exc).__name__

def environs():
    # Per readable /proc/<pid>/environ but its own: the worker's variables it holds.
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                variables = (entry / "environ").read_bytes().decode(errors="replace").split("\\0")
            except OSError:
                continue
            found.append([v for v in variables if v.startswith(WANTED)])
    return found

def knock(port, greeting):
    with socket.create_connection(("127.0.0.1", port), timeout=3) as conn:
        conn.sendall(greeting)
        conn.settimeout(3)
        return conn.recv(64).decode(errors="replace") or "connected"

def leave_file():
    Path(SHM_MARK).write_text("left behind")
    return "written"

report = {
    "environs": environs(),
    "redis": attempt(lambda: knock(6379, b"PING\\r\\n")),
    "postgres": attempt(lambda: knock(5432, b"\\x00\\x00\\x00\\x08\\x04\\xd2\\x16\\x2f")),
    "data_dir": attempt(lambda: sorted(os.listdir(DATA_DIR))),
    "shm": attempt(leave_file),
}
print("PROBE " + json.dumps(report), flush=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)
"""

GRADE = """
import json, sys
from grader.concealment import environ_conceal
environ_conceal({names!r})
from grader import EvaluateOptions, evaluate
options = EvaluateOptions(sandbox={backend!r}, allow_unisolated={backend!r} == "process")
result = evaluate("silu", {solution!r}, "cpu", options)
gates = {{name: [gate.reason, gate.detail] for name, gate in result.gates.items()}}
sandbox = result.environment.get("sandbox")
graded = {{"status": result.status, "log": result.log, "sandbox": sandbox, "gates": gates}}
print(json.dumps(graded))
"""


@pytest.fixture
def backend_image(request, backend):
    if backend == "docker":
        request.getfixturevalue("full_sandbox_image")
    return backend


def grade_in_a_worker_like_process(backend: str, solution: Path, scratch: Path, secrets: dict):
    code = GRADE.format(names=list(secrets), backend=backend, solution=str(solution))
    env = dict(os.environ, **secrets, PYTHONPATH=str(REPO), ARENA_SCRATCH_DIR=str(scratch))
    ran = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    return json.loads(ran.stdout.strip().splitlines()[-1])


def probe_report(graded: dict) -> dict:
    lines = [line for line in graded["log"].splitlines() if line.startswith("PROBE ")]
    assert lines, graded
    return json.loads(lines[-1].removeprefix("PROBE "))


@pytest.mark.parametrize("backend", [*NAMESPACE_BACKENDS, "process"])
def test_a_candidate_reads_reaches_and_leaves_nothing(backend, backend_image, tmp_path):
    marker = uuid.uuid4().hex[:12]
    secrets = {name: f"{name.lower()}-{marker}" for name in SECRET_NAMES}
    data_dir = REPO / "var" / f"probe-data-{marker}"
    data_dir.mkdir(parents=True)
    (data_dir / "arena.sqlite3").write_text("the database")
    shm_mark = Path("/dev/shm") / f"arena-probe-{marker}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    solution = tmp_path / "probe.py"
    header = (
        f"DATA_DIR = {str(data_dir)!r}\nSHM_MARK = {str(shm_mark)!r}\n"
        f"WANTED = {tuple(f'{name}=' for name in SECRET_NAMES)!r}\n"
    )
    solution.write_text(header + textwrap.dedent(PROBE))
    try:
        graded = grade_in_a_worker_like_process(backend, solution, scratch, secrets)
        left_in_shm = shm_mark.exists()
    finally:
        shm_mark.unlink(missing_ok=True)
        (data_dir / "arena.sqlite3").unlink()
        data_dir.rmdir()
    assert graded["sandbox"] == backend, graded
    report = probe_report(graded)
    # Whatever the backend: the grading parent's secrets are not readable from any /proc.
    for value in secrets.values():
        assert not any(value in str(environ) for environ in report["environs"]), backend
    # The candidate's scratch space is gone once the evaluation ends.
    assert list(scratch.iterdir()) == []
    if backend == "process":
        # It reads every /proc environ of the host, its grading parent's among them, and that
        # holds no secret; a plain process isolates nothing else (the development switch).
        assert len(report["environs"]) > 1
        return
    assert graded["status"] == "passed", graded["gates"]
    assert "PONG" not in report["redis"] and report["redis"] != "connected", report["redis"]
    assert report["postgres"] in ("ConnectionRefusedError", "OSError", "TimeoutError")
    assert report["data_dir"] == "FileNotFoundError"
    assert left_in_shm is False
