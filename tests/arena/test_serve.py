"""`manage.py serve` (what `make run` starts): web server and worker together, stopped by Ctrl-C."""

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.api.factories import token_create
from tests.conftest import REPO, _worker_database_env
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post_multipart(
    url: str, fields: dict[str, str], file_field: str, path: Path, token: str
) -> dict:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
        f'filename="{path.name}"\r\nContent-Type: text/x-python\r\n\r\n'.encode()
        + path.read_bytes()
        + b"\r\n"
    )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        url,
        data=body,
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Authorization": f"Token {token}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode()


def test_serve_runs_web_and_worker_and_ctrl_c_stops_both(catalog_tasks, solutions_dir, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, **_worker_database_env(), ARENA_GRADER_DEVICE="cpu")
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--addr", f"127.0.0.1:{port}"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:

        def serving() -> bool:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                return "<h1>Leaderboard</h1>" in get(base + "/")
            except OSError:
                return False

        wait_for(serving, timeout_s=60, what="the web server")
        created = post_multipart(
            base + "/api/v1/submissions",
            {"task": "silu", "agent": "cli"},
            "solution",
            solutions_dir / "silu_triton.py",
            token_create().key,  # writes need an API token
        )

        def graded() -> dict | None:
            status = json.loads(get(f"{base}/api/v1/submissions/{created['id']}"))
            return status if status["status"] not in ("queued", "running") else None

        status = wait_for(graded, timeout_s=180, what="the submission to be graded")
        assert status["status"] == "passed", (tmp_path / "serve.log").read_text()[-3000:]
        page = get(base + created["run_url"])
        # Graded on the CPU: correct, and never ranked.
        assert "Verdict" in page and "unranked (CPU)" in page and "silu_triton.py" in page
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    children = subprocess.run(
        ["pgrep", "-f", f"127.0.0.1:{port}"], capture_output=True, text=True, check=False
    )
    assert children.stdout.strip() == ""
