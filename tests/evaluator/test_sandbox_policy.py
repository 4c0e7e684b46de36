"""Untrusted code runs only in a sandbox that isolates, unless the development switch is on."""

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from django.conf import settings

import sandboxes.docker as docker_module
from arena.agents.registry import ADAPTERS
from grader import EvaluateOptions, evaluate, load_task
from grader.cli import main as cli_main
from grader.evaluate import private_scratch
from grader.guards import other_process_entry
from grader.result import REWARD_TIMEOUT_OR_SANDBOX
from sandboxes import backends as sandbox_module
from sandboxes.backends import (
    UNSAFE_SWITCH,
    BwrapSandbox,
    ProcessSandbox,
    SandboxError,
    sandbox_for,
)
from sandboxes.secret_variables import (
    DEPLOYMENT_SECRETS,
    PROVIDER_CREDENTIALS,
    secret_variables,
)

SILU = "silu"
REPO_ROOT = str(Path(__file__).resolve().parents[2])


@pytest.fixture(scope="module")
def silu():
    return load_task(SILU)


@pytest.fixture
def no_isolating_backend(monkeypatch):
    """A host without bubblewrap and without a docker engine."""
    real_which = sandbox_module.shutil.which
    monkeypatch.setattr(
        sandbox_module.shutil,
        "which",
        lambda name, *args, **kwargs: (
            None if name == "bwrap" else real_which(name, *args, **kwargs)
        ),
    )
    monkeypatch.setattr(
        docker_module, "docker_problem", lambda image=None: "no Docker engine answers"
    )


def test_the_process_backend_is_refused_without_the_switch():
    with pytest.raises(SandboxError) as refused:
        sandbox_for("process")
    assert "does not isolate" in str(refused.value)
    assert UNSAFE_SWITCH in str(refused.value)


def test_the_process_backend_is_given_with_the_switch():
    assert isinstance(sandbox_for("process", allow_unisolated=True), ProcessSandbox)


def test_auto_names_every_missing_backend_where_none_isolates(no_isolating_backend):
    with pytest.raises(SandboxError) as refused:
        sandbox_for("auto")
    message = str(refused.value)
    assert "no isolating sandbox works on this host" in message
    assert "bubblewrap is not installed" in message
    assert "docker: no Docker engine answers" in message
    assert UNSAFE_SWITCH in message


def test_auto_falls_back_to_a_plain_process_only_with_the_switch(no_isolating_backend):
    backend = sandbox_for("auto", allow_unisolated=True)
    assert backend.name == "process"
    assert backend.isolates is False


@pytest.mark.skipif(not sandbox_module.bwrap_usable(), reason="bubblewrap cannot run here")
def test_auto_takes_bwrap_where_it_works():
    assert isinstance(sandbox_for("auto"), BwrapSandbox)


def test_grading_without_an_isolating_sandbox_is_the_graders_error(
    no_isolating_backend, silu, solutions_dir
):
    result = evaluate(silu, solutions_dir / "silu_triton.py", "cpu", EvaluateOptions())
    assert result.status == "error"
    assert result.gates["compile"].passed is None  # not held against the solution
    assert "no isolating sandbox works on this host" in result.gates["compile"].reason
    assert result.per_shape[0].correct is None
    # KernelBench's timeout-or-sandbox reward, as docs/sandboxes.md gives it.
    assert result.reward == REWARD_TIMEOUT_OR_SANDBOX == -7
    docs = (Path(REPO_ROOT) / "docs" / "sandboxes.md").read_text()
    assert f"reward {REWARD_TIMEOUT_OR_SANDBOX:g}," in docs


def test_the_cli_refuses_the_process_backend_without_the_switch(solutions_dir, capsys):
    code = cli_main(
        [
            "evaluate",
            "--task",
            SILU,
            "--solution",
            str(solutions_dir / "silu_triton.py"),
            "--device",
            "cpu",
            "--sandbox",
            "process",
            "--json",
        ]
    )
    printed = json.loads(capsys.readouterr().out)
    assert code == 1
    assert printed["status"] == "error"
    assert UNSAFE_SWITCH in printed["gates"]["compile"]["reason"]


def test_the_cli_names_a_switch_value_it_cannot_read(solutions_dir, capsys, monkeypatch):
    monkeypatch.setenv(UNSAFE_SWITCH, "maybe")
    code = cli_main(
        ["evaluate", "--task", SILU, "--solution", str(solutions_dir / "silu_triton.py")]
    )
    assert code == 2
    assert f"{UNSAFE_SWITCH}='maybe'" in capsys.readouterr().err


def test_a_worker_erases_its_secrets_from_what_its_children_can_read():
    """The Celery worker's start-up hook, fired as a worker fires it, in a process that holds
    the secrets in its environment; its child then reads /proc/<parent>/environ."""
    secrets = {
        "ARENA_SECRET_KEY": "probe-secret-key-7f3a",
        "ARENA_HIDDEN_SEED": "probe-hidden-seed-7f3a",
        "DATABASE_URL": "postgres://probe:pw-7f3a@127.0.0.1:5432/prod",
        "ARENA_BROKER_URL": "redis://127.0.0.1:6379/9",
    }
    script = textwrap.dedent("""
        import ctypes, json, os, subprocess, sys
        from celery.signals import worker_init
        import config.celery
        from django.conf import settings
        worker_init.send(sender=None)
        read_parent = "import os; print(open(f'/proc/{os.getppid()}/environ', 'rb').read().hex())"
        child = subprocess.run(
            [sys.executable, "-c", read_parent],
            capture_output=True, text=True, check=True,
        )
        dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
        print(json.dumps({
            "parent_environ": bytes.fromhex(child.stdout.strip()).decode(errors="replace"),
            "own_environ": open("/proc/self/environ", "rb").read().decode(errors="replace"),
            "os_environ": sorted(n for n in os.environ if n in settings.ARENA_CONCEALED_VARIABLES),
            "settings_kept": [settings.SECRET_KEY, settings.ARENA_HIDDEN_SEED],
            "dumpable": dumpable,
        }))
    """)
    env = dict(os.environ, **secrets, PYTHONPATH=REPO_ROOT)
    env.pop("ARENA_CACHE_URL", None)
    ran = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    for value in secrets.values():
        assert value not in report["parent_environ"]
        assert value not in report["own_environ"]
    assert "PATH=" in report["parent_environ"]  # the rest of the block is intact
    assert report["os_environ"] == []
    # The worker itself still holds what settings read before the erasure.
    assert report["settings_kept"] == [secrets["ARENA_SECRET_KEY"], secrets["ARENA_HIDDEN_SEED"]]
    assert report["dumpable"] == 0


def test_scratch_left_by_a_killed_worker_is_removed_by_the_next_evaluation(tmp_path):
    gone_pid = _a_pid_not_running()
    stale = tmp_path / f"arena-eval-{gone_pid}-abc123"
    (stale / "candidate" / "io").mkdir(parents=True)
    (stale / "candidate" / "io" / "out.pt").write_bytes(b"outputs")
    alive = tmp_path / f"arena-eval-{os.getpid()}-def456"  # another evaluation of a live worker
    alive.mkdir()
    with private_scratch("arena-eval", root=str(tmp_path)) as folder:
        assert folder.name.startswith(f"arena-eval-{os.getpid()}-")
        assert not stale.exists()
        assert alive.exists()
    assert not folder.exists()


def _a_pid_not_running() -> int:
    pid = 4_000_000
    while Path(f"/proc/{pid}").exists():
        pid += 1
    return pid


def test_another_processs_proc_entries_are_flagged_and_this_ones_are_not():
    other = os.getppid()
    for entry in ("environ", "cmdline", "mem", "maps", "fd", "fd/3", "root/etc/passwd", ""):
        assert other_process_entry(f"/proc/{other}/{entry}".rstrip("/")), entry
    # Another process's stat, status and comm hold no secret; the grader's own child watch
    # reads every process's stat while the guard listens.
    for harmless in ("stat", "status", "comm"):
        assert not other_process_entry(f"/proc/{other}/{harmless}"), harmless
    assert other_process_entry(f"/proc/{other}/task/{other}/environ")
    own = [f"/proc/{os.getpid()}/environ", "/proc/cpuinfo", "/proc/sys/kernel/pid_max"]
    own.append(os.path.realpath("/proc/thread-self/environ"))
    assert not any(other_process_entry(path) for path in own)
    # A thread of this process, by its own id.
    thread_ids: list[int] = []
    done = threading.Event()
    worker = threading.Thread(
        target=lambda: (thread_ids.append(threading.get_native_id()), done.wait())
    )
    worker.start()
    try:
        while not thread_ids:
            done.wait(0.01)
        assert not other_process_entry(f"/proc/{thread_ids[0]}/environ")
    finally:
        done.set()
        worker.join()


def test_every_secret_variable_is_named_in_one_list():
    named = secret_variables(
        [
            "ARENA_SECRET_KEY",
            "DATABASE_URL",
            "ARENA_EMAIL_URL",
            "ANTHROPIC_API_KEY",
            "MYCLI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "PATH",
            "HOME",
            "ARENA_SCRATCH_DIR",
            "CUDA_VISIBLE_DEVICES",
        ]
    )
    assert "PATH" not in named and "ARENA_SCRATCH_DIR" not in named
    assert len(named) == 7
    credentials = {name for adapter in ADAPTERS.values() for name in adapter.credential_env}
    assert credentials <= set(PROVIDER_CREDENTIALS)
    assert settings.ARENA_CONCEALED_VARIABLES == DEPLOYMENT_SECRETS


# A solution that, as it loads, reads the environment of every process above it, and is otherwise
# a correct SiLU (so that it runs to the end, where the child reports the files it opened).
PARENT_READER = """
import json, os
from pathlib import Path
import torch

def ancestors():
    pid = os.getppid()
    while pid > 1:
        yield pid
        status = Path(f"/proc/{pid}/status").read_text()
        pid = int(next(line for line in status.splitlines() if line.startswith("PPid:")).split()[1])

read = {}
for pid in ancestors():
    try:
        read[pid] = open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
    except OSError as exc:
        read[pid] = type(exc).__name__
REPORT.write_text(json.dumps({"ppid": os.getppid(), "environs": read, "own": dict(os.environ)}))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)
"""


def test_the_cli_erases_every_secret_and_flags_a_solution_reading_its_parent(tmp_path):
    """`python -m evaluator evaluate` with planted secrets, under the forced process backend:
    the solution reads /proc/<pid>/environ of its parent and every process above it."""
    planted = {
        name: f"planted-{name.lower()}-5c1e"
        for name in (*DEPLOYMENT_SECRETS, "ANTHROPIC_API_KEY", "MYCLI_API_KEY")
    }
    report = tmp_path / "report.json"
    solution = tmp_path / "reader.py"
    solution.write_text(f"REPORT = __import__('pathlib').Path({str(report)!r})\n" + PARENT_READER)
    env = dict(os.environ, **planted, PYTHONPATH=REPO_ROOT, ARENA_SCRATCH_DIR=str(tmp_path))
    argv = ["evaluate", "--task", SILU, "--solution", str(solution), "--device", "cpu"]
    ran = subprocess.run(
        [sys.executable, "-m", "evaluator", *argv, "--sandbox", "process", "--json"],
        capture_output=True,
        text=True,
        env={**env, UNSAFE_SWITCH: "1"},
        cwd=REPO_ROOT,
        timeout=300,
        check=False,
    )
    graded = json.loads(ran.stdout.strip().splitlines()[-1])
    seen = json.loads(report.read_text())
    assert not set(planted) & set(seen["own"])
    for value in planted.values():
        assert not any(value in text for text in seen["environs"].values()), value
    if os.geteuid() == 0:  # root reads even a process that is not dumpable: the erasure holds
        assert any("PATH=" in text for text in seen["environs"].values()), seen["environs"]
    flags = {flag["code"]: flag["message"] for flag in graded["flags"]}
    assert f"/proc/{seen['ppid']}/environ" in flags["file_access"], graded["flags"]
    assert graded["ranked"] is False
