"""Agents that the arena runs inside a workspace, and how their processes are started.

Adapters, one per CLI, turn (prompt, workspace, budget) into a command line and read how the
run ended: claude_code.py, codex.py, cursor.py, gemini.py, command.py (any CLI from a
template), and `scripted` (registry.py), which runs scripted.py, a deterministic program that
drives the end-to-end tests and the demo leaderboard. base.py holds what they share (budgets,
markers), registry.py finds them by harness name, launcher.py starts an agent inside its
sandbox. Like a real agent CLI, the scripted agent runs as its own process with the workspace
as its working folder, a private home and no host credentials in its environment, and its
stream-json log is its stdout. arena/runs.py is the Django side that runs them.

No Django here: bench/demo_gpu.py runs agents on a GPU host that has only Python, torch and
triton.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SCRIPTED_PROGRAM = Path(__file__).resolve().parent / "scripted.py"
SCRIPTED_STRATEGIES = ("starter", "reference", "weak", "broken")
DEFAULT_TIMEOUT_S = 45 * 60
# What an agent process may inherit: how to find programs and which GPU is its.
ENV_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "ARENA_SCRATCH_DIR")


class AgentError(Exception):
    """An agent that could not be started; the message names the program or folder."""


@dataclass(frozen=True)
class AgentOutcome:
    returncode: int | None
    timed_out: bool
    duration_s: float
    log_path: Path
    stderr: str


def scripted_command(*, strategy: str, python: str | None = None) -> list[str]:
    if strategy not in SCRIPTED_STRATEGIES:
        choices = ", ".join(SCRIPTED_STRATEGIES)
        raise AgentError(f"unknown scripted strategy {strategy!r}; choose one of {choices}")
    # Run by path, not `-m arena...`: the arena package starts Django's Celery app on import.
    return [python or sys.executable, str(SCRIPTED_PROGRAM), "--strategy", strategy]


def agent_env(*, home: Path) -> dict[str, str]:
    """A clean environment: no tokens, no database URL, no grader secret, a private home."""
    env = {k: os.environ[k] for k in ENV_PASSTHROUGH if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({"HOME": str(home), "TMPDIR": str(home), "PYTHONDONTWRITEBYTECODE": "1"})
    return env


def agent_run(
    *, command: list[str], workspace: Path, log_path: Path, timeout_s: float = DEFAULT_TIMEOUT_S
) -> AgentOutcome:
    """Run an agent in `workspace`, its stdout into `log_path`; killed as a group at timeout."""
    if not workspace.is_dir():
        raise AgentError(f"{workspace}: the workspace folder does not exist")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="agent-home-") as home,
        log_path.open("wb") as log,
    ):
        try:
            process = subprocess.Popen(
                command,
                cwd=workspace,
                env=agent_env(home=Path(home)),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise AgentError(f"{command[0]}: cannot be started ({exc.strerror})") from None
        timed_out = False
        try:
            _, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            # The agent's children (its check, the grader's) share its session: end them all.
            os.killpg(process.pid, signal.SIGKILL)
            _, stderr = process.communicate()
    return AgentOutcome(
        returncode=process.returncode,
        timed_out=timed_out,
        duration_s=round(time.monotonic() - started, 3),
        log_path=log_path,
        stderr=stderr.decode("utf-8", errors="replace")[-8000:],
    )


def scripted_run(
    *, workspace: Path, strategy: str, log_path: Path, timeout_s: float = DEFAULT_TIMEOUT_S
) -> AgentOutcome:
    """The scripted agent with `strategy`, run in `workspace`."""
    command = scripted_command(strategy=strategy)
    return agent_run(command=command, workspace=workspace, log_path=log_path, timeout_s=timeout_s)
