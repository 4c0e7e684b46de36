"""Isolation claims of the sandbox backends, each tried by a real child process."""

import json
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from sandboxes.backends import Limits, bwrap_usable, sandbox_for, scrubbed_env

REPO = Path(__file__).resolve().parents[2]


BACKENDS = [
    "process",
    pytest.param(
        "bwrap",
        marks=pytest.mark.skipif(
            not bwrap_usable(), reason="bubblewrap is not installed or cannot create namespaces"
        ),
    ),
]


def run_snippet(
    backend: str,
    tmp_path: Path,
    code: str,
    *,
    timeout_s: float = 60,
    memory_bytes: int | None = None,
) -> tuple[object, dict]:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    script = workdir / "snippet.py"
    script.write_text(textwrap.dedent(code))
    outcome = sandbox_for(backend, allow_unisolated=backend == "process").run(
        [sys.executable, str(script)],
        workdir=workdir,
        env=scrubbed_env({}, home=workdir),
        limits=Limits(timeout_s=timeout_s, memory_bytes=memory_bytes),
    )
    report_path = workdir / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    return outcome, report


@pytest.mark.parametrize("backend", BACKENDS)
def test_wall_clock_timeout_kills_the_child(backend, tmp_path):
    started = time.monotonic()
    outcome, _ = run_snippet(backend, tmp_path, "import time\ntime.sleep(120)\n", timeout_s=2)
    assert outcome.timed_out is True
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_limit_stops_a_runaway_allocation(backend, tmp_path):
    _, report = run_snippet(
        backend,
        tmp_path,
        """
        import json
        try:
            hog = bytearray(4 * 1024**3)
            result = "allocated"
        except MemoryError:
            result = "refused"
        json.dump({"result": result}, open("report.json", "w"))
    """,
        memory_bytes=1024**3,
    )
    assert report == {"result": "refused"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_environment_is_scrubbed_of_secrets(backend, tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_HIDDEN_SEED", "s3cret")
    monkeypatch.setenv("ARENA_SECRET_KEY", "k")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db/arena")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    _, report = run_snippet(
        backend,
        tmp_path,
        """
        import json, os
        json.dump({"env": sorted(os.environ)}, open("report.json", "w"))
    """,
    )
    leaked = {"ARENA_HIDDEN_SEED", "ARENA_SECRET_KEY", "DATABASE_URL", "AWS_SECRET_ACCESS_KEY"}
    assert report["env"] and not leaked & set(report["env"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_detached_processes_do_not_outlive_the_child(backend, tmp_path):
    marker = f"{time.time_ns() % 100000 + 100000}.25"
    run_snippet(
        backend,
        tmp_path,
        f"""
        import subprocess
        subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
        subprocess.Popen(["sh", "-c", "(sleep {marker} &) &"])
    """,
    )
    time.sleep(0.5)
    survivors = subprocess.run(
        ["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True, check=False
    )
    assert survivors.stdout.strip() == ""


@pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap is not usable here")
class TestBwrapIsolation:
    def test_no_network_even_to_loopback(self, tmp_path):
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen()
            port = server.getsockname()[1]
            _, report = run_snippet(
                "bwrap",
                tmp_path,
                f"""
                import json, socket
                try:
                    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
                    result = "connected"
                except OSError as exc:
                    result = type(exc).__name__
                try:
                    socket.getaddrinfo("example.org", 443)
                    dns = "resolved"
                except OSError:
                    dns = "failed"
                json.dump({{"result": result, "dns": dns}}, open("report.json", "w"))
            """,
            )
        assert report["result"] != "connected"
        assert report["dns"] == "failed"

    def test_files_outside_the_sandbox_are_absent_and_tmp_is_private(self, tmp_path):
        secret = REPO / "var" / f"secret-{uuid.uuid4().hex}.txt"
        secret.parent.mkdir(parents=True, exist_ok=True)
        secret.write_text("database password")
        escape = Path("/tmp") / f"arena-escape-{uuid.uuid4().hex}"
        try:
            _, report = run_snippet(
                "bwrap",
                tmp_path,
                f"""
                import json, os
                def attempt(action):
                    try:
                        action()
                        return "ok"
                    except OSError as exc:
                        return type(exc).__name__
                report = {{
                    "secret": attempt(lambda: open({str(secret)!r}).read()),
                    "home": attempt(lambda: os.listdir("/root")),
                    "write_repo": attempt(lambda: open({str(REPO / "escape.txt")!r}, "w")),
                    "write_tmp": attempt(lambda: open({str(escape)!r}, "w").write("x")),
                }}
                json.dump(report, open("report.json", "w"))
            """,
            )
        finally:
            secret.unlink()
        assert report["secret"] == "FileNotFoundError"
        # Inside, the write fails (read-only root) or lands in the sandbox's private /tmp when
        # the checkout itself lives under /tmp; either way nothing reaches the host.
        assert report["write_repo"] != "ok" or str(REPO).startswith("/tmp/")
        assert report["write_tmp"] == "ok"
        assert not escape.exists()
        assert not (REPO / "escape.txt").exists()
        assert report["home"] in ("FileNotFoundError", "ok")
