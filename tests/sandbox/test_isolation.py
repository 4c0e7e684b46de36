"""Each isolation claim of the bwrap and docker sandboxes, tried by a real escape attempt."""

import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.sandbox.conftest import NAMESPACE_BACKENDS, REPO

pytestmark = pytest.mark.parametrize("backend", NAMESPACE_BACKENDS)

ATTEMPT = """
import json, os, socket, subprocess, sys, time
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as exc:
        return type(exc).__name__
"""


def host_addresses() -> list[str]:
    """Loopback and the address this host would use outside (no packet is sent)."""
    addresses = ["127.0.0.1"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            addresses.append(probe.getsockname()[0])
        except OSError:
            pass
    return addresses


def survivors(marker: str) -> str:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    return found.stdout.strip()


def test_secret_files_of_the_host_cannot_be_read(backend, run_code):
    home_secret = Path.home() / f".arena-secret-{uuid.uuid4().hex}"
    etc_secret = Path("/etc") / f"arena-secret-{uuid.uuid4().hex}"
    repo_secret = REPO / "var" / f"secret-{uuid.uuid4().hex}.txt"
    repo_secret.parent.mkdir(exist_ok=True)
    for secret in (home_secret, etc_secret, repo_secret):
        secret.write_text("database password")
    try:
        ran = run_code(
            backend,
            ATTEMPT
            + f"""
report = {{name: attempt(lambda p=path: open(p).read()) for name, path in [
    ("home", {str(home_secret)!r}), ("etc", {str(etc_secret)!r}),
    ("repo", {str(repo_secret)!r}), ("shadow", "/etc/shadow"),
    ("settings", {str(REPO / "config" / "settings.py")!r}),
]}}
json.dump(report, open("report.json", "w"))
""",
        )
    finally:
        for secret in (home_secret, etc_secret, repo_secret):
            secret.unlink()
    assert ran.report == {
        "home": "FileNotFoundError",
        "etc": "FileNotFoundError",
        "repo": "FileNotFoundError",
        "shadow": "FileNotFoundError",
        "settings": "FileNotFoundError",
    }


def test_a_listener_on_the_host_cannot_be_reached(backend, run_code):
    with socket.socket() as server:
        server.bind(("0.0.0.0", 0))  # noqa: S104 - listening everywhere is the point
        server.listen()
        port = server.getsockname()[1]
        server.settimeout(0.1)
        ran = run_code(
            backend,
            ATTEMPT
            + f"""
report = {{host: attempt(lambda h=host: socket.create_connection((h, {port}), timeout=3))
          for host in {host_addresses()!r}}}
json.dump(report, open("report.json", "w"))
""",
        )
        with pytest.raises(TimeoutError):
            server.accept()
    assert ran.report and "ok" not in ran.report.values(), ran.report


def test_hostnames_do_not_resolve(backend, run_code):
    ran = run_code(
        backend,
        """
import json, socket
report = {}
for name in ("example.org", "pypi.org", "host.docker.internal"):
    try:
        socket.getaddrinfo(name, 443)
        report[name] = "resolved"
    except OSError:
        report[name] = "failed"
json.dump(report, open("report.json", "w"))
""",
    )
    assert set(ran.report.values()) == {"failed"}, ran.report


def test_only_the_workspace_and_tmp_are_writable(backend, run_code):
    escapes = [Path("/usr") / f"arena-escape-{uuid.uuid4().hex}", REPO / "escape.txt"]
    escapes.append(Path("/") / f"arena-escape-{uuid.uuid4().hex}")
    ran = run_code(
        backend,
        ATTEMPT
        + f"""
report = {{p: attempt(lambda p=p: open(p, "w").write("x")) for p in {[str(e) for e in escapes]!r}}}
report["workspace"] = attempt(lambda: open("written.txt", "w").write("x"))
report["tmp"] = attempt(lambda: open("/tmp/written.txt", "w").write("x"))
json.dump(report, open("report.json", "w"))
""",
    )
    assert ran.report.pop("workspace") == "ok"
    assert ran.report.pop("tmp") == "ok"
    # A checkout under /tmp lies beneath the sandbox's private /tmp: a write there succeeds
    # inside and must still never reach the host's file.
    private = {str(e) for e in escapes if e.is_relative_to("/tmp")}
    refused = {p: r for p, r in ran.report.items() if p not in private}
    assert set(refused.values()) <= {"OSError", "PermissionError", "FileNotFoundError"}
    assert not any(e.exists() for e in escapes)
    assert (ran.workdir / "written.txt").exists()


def test_a_fork_bomb_hits_the_pids_limit(backend, run_code):
    ran = run_code(
        backend,
        """
import json, os, time
started, error = 0, None
for _ in range(300):
    try:
        pid = os.fork()
    except OSError as exc:
        error = type(exc).__name__
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    started += 1
json.dump({"started": started, "error": error}, open("report.json", "w"))
""",
        pids=40,
        timeout_s=60,
    )
    assert ran.report["error"] == "BlockingIOError", ran.report
    assert ran.report["started"] < 40


def test_exhausting_memory_is_killed_and_reported(backend, run_code):
    # Several processes, each under the per-process address-space cap, together over the limit:
    # only a limit on the whole tree stops them.
    ran = run_code(
        backend,
        """
import os, time
children = []
for _ in range(6):
    pid = os.fork()
    if pid == 0:
        hog = bytearray(96 * 1024**2)
        time.sleep(3)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
""",
        memory_bytes=256 * 1024**2,
        timeout_s=120,
    )
    assert ran.outcome.memory_exceeded is True


def test_without_an_address_space_cap_the_tree_memory_limit_still_holds(backend, run_code):
    # As agents run: Node-based CLIs reserve huge address spaces, so only the tree is capped.
    ran = run_code(
        backend,
        """
import json, resource
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
json.dump({"unlimited": soft == resource.RLIM_INFINITY}, open("report.json", "w"))
reserved = bytearray(64 * 1024**2)  # fine
hog = bytearray(512 * 1024**2)  # over the tree's 256 MiB
""",
        memory_bytes=256 * 1024**2,
        address_space=False,
        timeout_s=120,
    )
    assert ran.report == {"unlimited": True}
    assert ran.outcome.memory_exceeded is True


def test_a_detached_process_does_not_outlive_the_run(backend, run_code):
    marker = f"{time.time_ns() % 100000 + 200000}.5"
    ran = run_code(
        backend,
        f"""
import subprocess
subprocess.run(["sh", "-c", "setsid nohup sleep {marker} >/dev/null 2>&1 &"], check=True)
subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
""",
    )
    assert ran.outcome.returncode == 0
    time.sleep(0.5)
    assert survivors(f"sleep {marker}") == ""


def test_a_command_past_its_time_limit_is_killed_and_reported(backend, run_code):
    marker = f"{time.time_ns() % 100000 + 300000}.5"
    started = time.monotonic()
    ran = run_code(
        backend,
        f"""
import subprocess
subprocess.run(["sleep", "{marker}"])
""",
        timeout_s=3,
    )
    assert ran.outcome.timed_out is True
    assert ran.outcome.returncode is None
    assert time.monotonic() - started < 45
    time.sleep(0.5)
    assert survivors(f"sleep {marker}") == ""


def test_cpu_time_is_held_to_the_quota(backend, run_code):
    ran = run_code(
        backend,
        """
import json, threading, time
def spin():
    end = time.monotonic() + 2
    while time.monotonic() < end:
        pass
threads = [threading.Thread(target=spin) for _ in range(2)]
wall = time.monotonic()
for t in threads: t.start()
for t in threads: t.join()
json.dump({"cpu_per_wall": time.process_time() / (time.monotonic() - wall)},
          open("report.json", "w"))
""",
        cpus=0.25,
    )
    # Two spinning threads would use up to 1.0 (the GIL); the quota holds them near 0.25.
    assert ran.report["cpu_per_wall"] < 0.5, ran.report


def test_the_child_runs_without_host_privileges(backend, run_code):
    ran = run_code(
        backend,
        """
import json
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
json.dump({"CapEff": status["CapEff"].strip()}, open("report.json", "w"))
""",
    )
    assert int(ran.report["CapEff"], 16) == 0
