"""The fork server (grader/forkserver.py): a trusted child forked from it starts as a cold one
would (its own session, folder, limits, cgroup and descriptors, this process its parent), holds
no secret, is supervised and killed as any child is, and gives a cold child's verdicts; a server
that is gone is replaced."""

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from grader import EvaluateOptions, evaluate, forkserver
from sandboxes.backends import Limits, SandboxError, bwrap_usable
from sandboxes.processes import own_children

pytestmark = pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")

SOLUTIONS = Path(__file__).resolve().parent / "solutions"
OPTIONS = {"timeout_s": 180, "unseen_count": 1}
CHILD = [sys.executable, "-m", "grader.child"]


@pytest.fixture
def servers(monkeypatch):
    """Servers of the test's own, closed after it."""
    fresh = forkserver._Servers()
    monkeypatch.setattr(forkserver, "SERVERS", fresh)
    yield fresh
    fresh.close()


def trusted_env(home: Path, **extra: str) -> dict[str, str]:
    from grader.launch import ENGINE_ROOT
    from sandboxes.backends import scrubbed_env

    return scrubbed_env(
        {
            "PYTHONPATH": str(ENGINE_ROOT),
            "TRITON_INTERPRET": "1",
            "CUDA_VISIBLE_DEVICES": "",
            **extra,
        },
        home=home,
    )


def start_waiting(tmp_path: Path, name: str, limits: Limits):
    """A probe's child started ahead of its job, waiting on its stdin."""
    workdir = tmp_path / name
    workdir.mkdir()
    running = forkserver.TrustedSandbox().start(
        [*CHILD, "--prepared", "probe"],
        workdir=workdir,
        env=trusted_env(workdir),
        limits=limits,
        prepared=True,
    )
    deadline = time.monotonic() + 120
    while not running.is_prepared() and running.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.is_prepared(), (workdir / "child.log").read_text()
    return running, workdir


def proc_status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def test_a_forked_child_starts_as_a_cold_one_would(servers, tmp_path):
    limits = Limits(timeout_s=60, memory_bytes=6 * 2**30)
    running, workdir = start_waiting(tmp_path, "probe", limits)
    pid = running.proc.pid
    assert isinstance(running.proc, forkserver.ForkedProcess)
    # Forked, not imported: its start says so (launch.start_report).
    assert set(running.readiness()["marks"]) >= {"forked", "profiler"}
    assert "torch" not in running.readiness()["marks"]
    # This process is its parent (the intermediate is gone), it leads a session of its own,
    # and works in its own folder.
    assert int(proc_status(pid)["PPid"]) == os.getpid()
    assert pid in own_children()
    assert os.getsid(pid) == pid
    assert Path(f"/proc/{pid}/cwd").resolve() == workdir.resolve()
    # Its limits, as a cold start applies them.
    limits_text = Path(f"/proc/{pid}/limits").read_text()
    assert "Max core file size        0" in limits_text
    assert f"Max address space         {6 * 2**30}" in limits_text
    # Its descriptors: stdin (the job's pipe), its log twice, the channel; nothing of the
    # server's (its socket) nor of this process's.
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert set(fds) >= {0, 1, 2} and len(fds) == 4, fds
    assert fds[1] == fds[2] == str(workdir / "child.log")
    assert fds[0].startswith("pipe:")
    assert not [link for link in fds.values() if link.startswith("socket:")]
    # In the child's cgroup where one was made.
    for folder in running.cgroup.folders():
        assert str(pid) in Path(folder, "cgroup.procs").read_text().split()
    # Supervised as any child: discarded, it is gone and reaped, and the server lives on.
    (server,) = servers._servers.values()
    running.discard()
    assert running.proc.poll() is not None
    assert pid not in own_children()
    assert server.alive()


def test_the_server_holds_no_secret_of_the_grading_process(servers, tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_HIDDEN_SEED", "1234")
    monkeypatch.setenv("DATABASE_URL", "postgres://secret@db/prod")
    running, _ = start_waiting(tmp_path, "probe", Limits(timeout_s=60))
    (server,) = servers._servers.values()
    environ = Path(f"/proc/{server.proc.pid}/environ").read_bytes().split(b"\0")
    names = {entry.split(b"=", 1)[0].decode() for entry in environ if entry}
    assert "ARENA_HIDDEN_SEED" not in names and "DATABASE_URL" not in names
    assert "PYTHONPATH" in names
    running.discard()


def test_a_killed_child_is_reported_as_killed_and_nothing_is_left(servers, tmp_path):
    running, _ = start_waiting(tmp_path, "probe", Limits(timeout_s=60))
    running.proc.kill()
    assert running.proc.wait(timeout=10) == -signal.SIGKILL
    outcome = running.wait(10)
    assert outcome.returncode == -signal.SIGKILL
    assert outcome.leftover_processes == 0
    assert running.proc.pid not in own_children()


def test_a_server_that_died_is_replaced(servers, tmp_path):
    first, _ = start_waiting(tmp_path, "first", Limits(timeout_s=60))
    (server,) = servers._servers.values()
    server.proc.kill()
    server.proc.wait()
    second, _ = start_waiting(tmp_path, "second", Limits(timeout_s=60))
    (replacement,) = servers._servers.values()
    assert replacement is not server and replacement.alive()
    assert isinstance(second.proc, forkserver.ForkedProcess)
    # A child forked by the server that died lives on to its end, as its own process.
    assert first.alive()
    first.discard()
    second.discard()


def test_forked_judges_give_the_verdicts_of_cold_ones(servers):
    def graded(solution: str, fork_server: bool):
        options = EvaluateOptions(fork_server=fork_server, **OPTIONS)
        return evaluate("silu", SOLUTIONS / solution, "cpu", options)

    for solution in ("silu_triton.py", "silu_wrong_relu.py"):
        cold, forked = graded(solution, False), graded(solution, True)
        assert (forked.status, forked.reward) == (cold.status, cold.reward)
        assert {n: g.passed for n, g in forked.gates.items()} == {
            n: g.passed for n, g in cold.gates.items()
        }
        assert [r.correct for r in forked.per_shape] == [r.correct for r in cold.per_shape]
    # The forked evaluations' judges came from one server, started once.
    assert len(servers._servers) == 1


def test_the_switch_reads_its_variable(monkeypatch):
    monkeypatch.setenv("ARENA_GRADER_FORK_SERVER", "0")
    assert EvaluateOptions().fork_server is False
    monkeypatch.setenv("ARENA_GRADER_FORK_SERVER", "1")
    assert EvaluateOptions().fork_server is True
    monkeypatch.setenv("ARENA_GRADER_FORK_SERVER", "maybe")
    with pytest.raises(ValueError, match="ARENA_GRADER_FORK_SERVER"):
        EvaluateOptions()


def test_only_trusted_children_are_forked():
    assert forkserver.forkable([*CHILD, "job.json"])
    assert not forkserver.forkable(["bwrap", "--", *CHILD, "job.json"])
    assert not forkserver.forkable([sys.executable, "solution.py"])


def test_a_child_never_given_its_go_ahead_runs_nothing(servers, tmp_path):
    # As for a fork whose answer was lost: the child ends before it does anything.
    first, workdir = start_waiting(tmp_path, "first", Limits(timeout_s=60))
    first.discard()
    (server,) = servers._servers.values()
    go_read, go_write = os.pipe()
    channel_read, channel_write = os.pipe()
    stdin_read, stdin_write = os.pipe()
    with (workdir / "never.log").open("ab") as log:
        pid = server.fork(
            ["--prepared", "probe"],
            cwd=workdir,
            env=trusted_env(workdir),
            fds=(stdin_read, log.fileno(), channel_write, go_read),
            cgroups=[],
            rlimits=[],
        )
    for fd in (go_read, go_write, channel_write, stdin_read):
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert os.read(channel_read, 4096) == b""  # never said it was prepared
    assert (workdir / "never.log").read_bytes() == b""
    os.close(channel_read)
    os.close(stdin_write)


def test_a_server_that_stops_answering_fails_the_start_and_starts_nothing_else(
    servers, tmp_path, monkeypatch
):
    first, _ = start_waiting(tmp_path, "first", Limits(timeout_s=60))
    first.discard()
    (server,) = servers._servers.values()
    monkeypatch.setattr(forkserver, "ANSWER_TIMEOUT_S", 1.0)
    os.kill(server.proc.pid, signal.SIGSTOP)
    before = own_children()
    workdir = tmp_path / "lost"
    workdir.mkdir()
    with pytest.raises(SandboxError, match="could not start"):
        forkserver.TrustedSandbox().start(
            [*CHILD, "--prepared", "probe"],
            workdir=workdir,
            env=trusted_env(workdir),
            limits=Limits(timeout_s=60),
            prepared=True,
        )
    # No child started cold in its place; the stopped server was let go (killed).
    assert own_children() <= before
    assert not server.alive() and not servers._servers
    # The next child comes from a new server.
    again, _ = start_waiting(tmp_path, "again", Limits(timeout_s=60))
    assert isinstance(again.proc, forkserver.ForkedProcess)
    again.discard()


# What the server imports before it forks (serve(): grader.child), in a fresh interpreter with
# every way torch asks CUDA whether a device is there recorded: a process that asked has started
# CUDA's driver, and no child forked from it could use the GPU (torch.utils.cpp_extension asks
# at its import, so only the candidate's child, never forked, imports it in its preparation).
SERVER_IMPORTS = """
import sys
import torch
asked = []
def recorded(name, original):
    def call(*args, **kwargs):
        asked.append(name)
        return original(*args, **kwargs)
    return call
for name in ("is_available", "device_count", "init", "_lazy_init"):
    setattr(torch.cuda, name, recorded(name, getattr(torch.cuda, name)))
import grader.child
print("ASKED", asked, "torch.utils.cpp_extension" in sys.modules)
"""


def test_what_the_server_imports_asks_cuda_nothing():
    from tests.processes import repo_python

    done = repo_python("-c", SERVER_IMPORTS, timeout_s=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "ASKED [] False", done.stdout
