"""The demo leaderboard's runs: which tasks, which scripted agents, and running one for real.

Shared by `manage.py seed_demo` and bench/demo_gpu.py (which records the same runs graded on a
GPU), so both run exactly the same agents on exactly the same tasks. No Django here.
"""

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arena.agents import scripted_run
from arena.workspace import (
    WorkspaceError,
    workspace_build,
    workspace_changed_protected,
    workspace_collect,
)

# Quick on CPU under the Triton interpreter (a few seconds to grade each) and single-output,
# which the weak strategy's deliberate bug needs: Triton kernel-to-kernel tasks with starters,
# and two PyTorch-to-kernel tasks.
DEMO_TASKS = (
    "tt-vector-add",
    "tt-row-max",
    "tt-softmax",
    "tt-bias-gelu",
    "tt-transpose",
    "tt-cumsum",
    "t2t-log-softmax",
    "t2c-row-sum",
)
STRATEGIES = ("starter", "reference", "weak", "broken")
AGENT_TIMEOUT_S = 30 * 60


@dataclass(frozen=True)
class DemoAgent:
    strategy: str

    @property
    def name(self) -> str:
        return f"scripted-{self.strategy} (demo)"

    @property
    def slug(self) -> str:
        return f"scripted-{self.strategy}-demo"


DEMO_AGENTS = tuple(DemoAgent(s) for s in STRATEGIES)


@dataclass(frozen=True)
class DemoRun:
    strategy: str
    task_slug: str
    log: str
    duration_s: float
    solution: str | None  # None when the agent left no usable solution
    problem: str  # why there is no solution, or which protected files it changed

    @property
    def solution_sha256(self) -> str:
        return hashlib.sha256((self.solution or "").encode()).hexdigest()


def demo_plan(*, task_folders: dict[str, Path]) -> list[tuple[DemoAgent, str]]:
    """(agent, task) pairs: the starter strategy only where a task has a starter kernel."""
    return [
        (agent, slug)
        for slug, folder in task_folders.items()
        for agent in DEMO_AGENTS
        if agent.strategy != "starter" or (folder / "starter").is_dir()
    ]


def demo_run(*, task_folder: Path, strategy: str, timeout_s: float = AGENT_TIMEOUT_S) -> DemoRun:
    """Run the scripted agent in a fresh workspace and collect its solution and log."""
    with tempfile.TemporaryDirectory(prefix="arena-demo-") as tmp:
        workspace = workspace_build(task_folder=task_folder, root=Path(tmp) / "workspace")
        outcome = scripted_run(
            workspace=workspace.root,
            strategy=strategy,
            log_path=Path(tmp) / "log.jsonl",
            timeout_s=timeout_s,
        )
        log = outcome.log_path.read_text(encoding="utf-8", errors="replace")
        problem, solution = "", None
        if outcome.timed_out or outcome.returncode != 0:
            problem = f"the agent exited with {outcome.returncode}: {outcome.stderr[-2000:]}"
        changed = workspace_changed_protected(workspace=workspace)
        if changed:
            problem = f"the agent changed protected files: {', '.join(changed)}"
        if not problem:
            try:
                solution = workspace_collect(workspace=workspace, dest=Path(tmp) / "out")[
                    "solution.py"
                ]
            except WorkspaceError as exc:
                problem = str(exc)
    return DemoRun(
        strategy=strategy,
        task_slug=workspace.task_slug,
        log=log,
        duration_s=outcome.duration_s,
        solution=solution,
        problem=problem,
    )
