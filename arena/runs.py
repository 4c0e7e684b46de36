"""Agent runs in the arena: what a worker does with a run it claimed (build the workspace, run
the agent in a sandbox, collect its solution and log). Every state change and every message to
a queue is arena/lifecycle.py's.

While it works the worker renews the run's lease from a thread. Collecting happens in one
transaction: the trajectory, the submission and the move to evaluating are all written, or none
is, so a run never has two submissions. Grading is the gpu queue's job
(arena.lifecycle.submission_evaluate).
"""

import fnmatch
import logging
import os
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from arena.agents import SCRIPTED_STRATEGIES
from arena.agents.base import ARENA_INSTRUCTIONS, Adapter, AdapterError, Budget, Verdict
from arena.agents.launcher import NOT_STARTED, STOPPED
from arena.agents.registry import adapter_for
from arena.lifecycle import (
    HELD,
    MAX_DETAIL_CHARS,
    Reason,
    RunLost,
    Status,
    run_advance,
    run_claim,
    run_fail,
    run_lease_end,
    run_queued_create,
    run_submit,
)
from arena.models import Agent, Run, Submission
from arena.run_logs import run_trajectory_attach
from arena.services import agent_get_or_create
from arena.workspace import (
    Workspace,
    WorkspaceError,
    workspace_build,
    workspace_changed_protected,
    workspace_collect,
)
from evaluator.services import evaluation_create
from grader.evaluate import CHILD_CODE
from sandboxes.backends import INSIDE_SWITCH, Limits, SandboxError, sandbox_for, scrubbed_env
from tasks.models import Task
from tasks.selectors import task_folder
from transcripts.services import TrajectoryRejected, trajectory_max_bytes

logger = logging.getLogger(__name__)

# A run whose workers keep dying under it is failed rather than retried for ever.
MAX_ATTEMPTS = 3
LAUNCHER = Path(__file__).resolve().parent / "agents" / "launcher.py"
BOX_POINTER = "box-path"
STOPPED_UNASKED = "stopped"
# The uid an agent runs as in its sandbox: never root, whose agent CLIs refuse to run unattended.
AGENT_UID = 1000
# How often the budget watcher reads a running agent's logs.
BUDGET_POLL_S = 1.0


class RunFailed(Exception):
    """The run ends failed with `reason` (one of Run.FailureReason) and a readable detail."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


# --- creating ----------------------------------------------------------------------------


def agent_adapter(*, agent: Agent) -> Adapter:
    """The agent's adapter; AdapterError names a bad harness or option."""
    return adapter_for(
        harness=agent.harness, model=agent.model, effort=agent.effort, config=agent.config
    )


def run_budget(*, agent: Agent, override: dict | None = None) -> Budget:
    """The agent's default budget with `override` on top; ValueError names the bad field."""
    return Budget.from_dict(agent.config.get("budget")).merged(override)


def run_create(
    *,
    agent: Agent,
    task: Task,
    budget: dict | None = None,
    created_by: AbstractBaseUser | None = None,
) -> Run:
    """A queued arena run, sent to the agents queue once the caller's transaction commits.
    `created_by`: the account that launched it (None: the platform, e.g. launch_runs)."""
    agent_adapter(agent=agent)  # a misconfigured agent fails here, not in a worker
    merged = run_budget(agent=agent, override=budget).to_dict()
    return run_queued_create(agent=agent, task=task, budget=merged, created_by=created_by)


@transaction.atomic
def runs_launch(
    *,
    agent: Agent,
    tasks: list[Task],
    repeats: int = 1,
    budget: dict | None = None,
    created_by: AbstractBaseUser | None = None,
) -> list[Run]:
    """`repeats` runs of `agent` on each task, all created or none."""
    if repeats < 1:
        raise ValueError("repeats: must be at least 1")
    return [
        run_create(agent=agent, task=task, budget=budget, created_by=created_by)
        for task in tasks
        for _ in range(repeats)
    ]


# --- the lease ----------------------------------------------------------------------------


class LeaseKeeper(threading.Thread):
    """Renews the run's lease while the worker works; notices when the run is lost."""

    def __init__(self, *, run_id: int, attempt: int, stop_file: Path | None = None) -> None:
        super().__init__(daemon=True, name=f"run-{run_id}-lease")
        self.run_id, self.attempt, self.stop_file = run_id, attempt, stop_file
        self.done = threading.Event()
        self.lost = threading.Event()

    def run(self) -> None:
        interval = settings.ARENA_RUN_LEASE_S / 4
        try:
            while not self.done.wait(interval):
                if not self.renew():
                    self.lost.set()
                    if self.stop_file is not None:
                        self.stop_file.touch()  # the launcher ends the agent's group
                    return
        finally:
            connection.close()  # this thread's own connection

    def renew(self) -> bool:
        """False only when the run is no longer this attempt's; a database error is retried
        at the next beat (the lease outlasts three missed beats)."""
        held = Run.objects.filter(pk=self.run_id, attempts=self.attempt, status__in=HELD)
        try:
            return held.update(lease_expires_at=run_lease_end()) == 1
        except DatabaseError:
            logger.warning("run %s: lease not renewed this time", self.run_id, exc_info=True)
            connection.close()
            return True

    def __enter__(self) -> "LeaseKeeper":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.join(timeout=30)


# --- executing a run ----------------------------------------------------------------------


@dataclass(frozen=True)
class AttemptPaths:
    folder: Path  # runs/<id>/attempt-<n>: what the worker keeps (logs)
    box: Path  # the sandbox's working folder (workspace, home, logs), removed afterwards

    @property
    def workspace(self) -> Path:
        return self.box / "workspace"

    @property
    def home(self) -> Path:
        return self.box / "home"

    @property
    def log(self) -> Path:
        return self.box / "agent.log"

    @property
    def stderr(self) -> Path:
        return self.box / "agent.stderr"

    @property
    def stop(self) -> Path:
        return self.box / "stop"


def run_folder(*, run_id: int) -> Path:
    return Path(settings.ARENA_RUNS_DIR) / str(run_id)


def run_execute(*, run_id: int) -> Run | None:
    """Claim the run and take it from preparing to evaluating (or failed); idempotent.

    None when there is nothing to do: the run is finished, or held by a live worker.
    """
    attempt = run_claim(run_id=run_id)
    if attempt is None:
        logger.info("run %s is finished or held by another worker", run_id)
        return None
    if attempt > MAX_ATTEMPTS:
        detail = f"the workers running it were lost {attempt - 1} times; not retried again"
        run_fail(run_id=run_id, reason=Reason.SANDBOX_ERROR, detail=detail, attempt=attempt)
        return Run.objects.get(pk=run_id)
    paths = _attempt_paths(run_id=run_id, attempt=attempt)
    try:
        with LeaseKeeper(run_id=run_id, attempt=attempt, stop_file=paths.stop) as lease:
            _attempt(run_id=run_id, attempt=attempt, paths=paths, lease=lease)
    except RunLost as exc:
        logger.info("run %s attempt %s stopped: %s", run_id, attempt, exc)
    except RunFailed as exc:
        run_fail(run_id=run_id, reason=exc.reason, detail=exc.detail, attempt=attempt)
    except Exception as exc:
        # An arena fault, not the agent's: fail the run with what happened rather than leave
        # it for the sweep to retry into the same fault.
        logger.exception("run %s attempt %s crashed", run_id, attempt)
        detail = f"the arena could not run the agent: {type(exc).__name__}: {exc}"
        run_fail(run_id=run_id, reason=Reason.SANDBOX_ERROR, detail=detail, attempt=attempt)
    finally:
        _keep_logs(paths=paths)  # whatever happened, what the agent wrote is kept
        shutil.rmtree(paths.box, ignore_errors=True)
    return Run.objects.get(pk=run_id)


def _attempt_paths(*, run_id: int, attempt: int) -> AttemptPaths:
    folder = run_folder(run_id=run_id) / f"attempt-{attempt}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # The sandbox's folder lies under the temporary folder: bwrap mounts a fresh /tmp and binds
    # the working folder into it, where it can make the parent folders it needs.
    box = Path(tempfile.mkdtemp(prefix=f"arena-run-{run_id}-{attempt}-"))
    (folder / BOX_POINTER).write_text(str(box))
    return AttemptPaths(folder=folder, box=box)


def attempt_box(*, run_id: int, attempt: int) -> Path:
    """Where an attempt's sandbox folder is (or was): its workspace and home."""
    return Path((run_folder(run_id=run_id) / f"attempt-{attempt}" / BOX_POINTER).read_text())


def _attempt(*, run_id: int, attempt: int, paths: AttemptPaths, lease: LeaseKeeper) -> None:
    run = Run.objects.select_related("agent", "task").get(pk=run_id)
    adapter, workspace = _prepare(run=run, attempt=attempt, paths=paths)
    run_advance(run_id=run_id, attempt=attempt, old=Status.PREPARING, new=Status.AGENT_RUNNING)
    budget = Budget.from_dict(run.budget)
    verdict, wall_s = _agent_run(adapter=adapter, budget=budget, paths=paths, run=run)
    if lease.lost.is_set():
        raise RunLost(f"run {run_id} was cancelled or claimed again while its agent ran")
    if verdict.reason == STOPPED_UNASKED:
        # The agent wrote the stop file itself: its own doing, not a cancel.
        verdict = Verdict(Reason.AGENT_ERROR, "the agent stopped itself (it wrote the stop file)")
    run_advance(run_id=run_id, attempt=attempt, old=Status.AGENT_RUNNING, new=Status.COLLECTING)
    _collect(
        run_id=run_id,
        attempt=attempt,
        adapter=adapter,
        budget=budget,
        verdict=verdict,
        workspace=workspace,
        paths=paths,
        wall_s=wall_s,
    )


def _prepare(*, run: Run, attempt: int, paths: AttemptPaths) -> tuple[Adapter, Workspace]:
    """The adapter and its program, the CLI version recorded, the workspace built."""
    try:
        adapter = agent_adapter(agent=run.agent)
        adapter.locate()
        adapter.allowed_hosts()
    except AdapterError as exc:
        raise RunFailed(Reason.AGENT_ERROR, str(exc)) from None
    version = adapter.version()
    Run.objects.filter(pk=run.pk, attempts=attempt).update(cli_version=version)
    pinned = run.agent.cli_version
    if pinned and pinned not in version:
        # The leaderboard ranks an agent as one CLI version: another one is another agent.
        detail = f"{adapter.program()} --version says {version!r}; the agent is version {pinned}"
        raise RunFailed(Reason.AGENT_ERROR, detail)
    try:
        workspace = workspace_build(task_folder=task_folder(task=run.task), root=paths.workspace)
    except (WorkspaceError, OSError) as exc:
        raise RunFailed(Reason.SANDBOX_ERROR, f"the workspace could not be built: {exc}") from None
    paths.home.mkdir()
    (paths.home / "tmp").mkdir()
    return adapter, workspace


def _agent_run(
    *, adapter: Adapter, budget: Budget, paths: AttemptPaths, run: Run
) -> tuple[Verdict, float]:
    """The adapter's command in the sandbox under the wall-clock budget; how it ended."""
    sandbox_name = run.agent.config.get("sandbox") or settings.ARENA_AGENT_SANDBOX
    prompt = ARENA_INSTRUCTIONS + (paths.workspace / "PROMPT.md").read_text(encoding="utf-8")
    argv = adapter.command(prompt=prompt, budget=budget, home=paths.home)
    env = scrubbed_env(adapter.env(home=paths.home, environ=dict(os.environ)), paths.home)
    env[INSIDE_SWITCH] = "1"  # the workspace's check grades in the agent's own sandbox
    adapter.prepare_home(home=paths.home, budget=budget)
    try:
        sandbox = sandbox_for(
            sandbox_name,
            allow_unisolated=settings.ARENA_UNSAFE_RUN_UNISOLATED,
            image=settings.ARENA_SANDBOX_IMAGE,
        )
        with BudgetWatcher(adapter=adapter, budget=budget, paths=paths) as watcher:
            outcome = sandbox.run(
                [*_launcher_argv(paths), *argv],
                workdir=paths.box,
                env=env,
                limits=agent_limits(wall_clock_s=budget.wall_clock_s),
                # The workspace's `check` runs the grader: its code, never the whole checkout.
                readable=[LAUNCHER.parent, *adapter.readable(), *CHILD_CODE],
                allow_hosts=adapter.allowed_hosts(),
            )
    except SandboxError as exc:
        raise RunFailed(Reason.SANDBOX_ERROR, str(exc)) from None
    if watcher.over and outcome.returncode == STOPPED:
        return Verdict(Reason.BUDGET_EXHAUSTED, watcher.over), outcome.wall_s
    if outcome.timed_out:
        detail = f"the agent was stopped at its wall-clock budget of {budget.wall_clock_s:g} s"
        return Verdict(Reason.AGENT_TIMEOUT, detail), outcome.wall_s
    stderr = _read_text(paths.stderr, limit=64 * 1024)
    if outcome.returncode == NOT_STARTED and "cannot be started" in stderr:
        raise RunFailed(Reason.AGENT_ERROR, stderr.strip())
    if outcome.returncode == STOPPED:
        return Verdict(STOPPED_UNASKED, ""), outcome.wall_s  # unless the lease was lost
    if outcome.returncode != 0 and not paths.log.exists():
        box_log = _read_text(paths.box / "child.log", limit=8000)
        raise RunFailed(
            Reason.SANDBOX_ERROR, f"the sandbox failed ({outcome.returncode}): {box_log}"
        )
    log = adapter.marker_log(log_path=paths.log, workspace=paths.workspace)
    verdict = adapter.judge(log_path=log, stderr=stderr, returncode=outcome.returncode)
    return verdict, outcome.wall_s


class BudgetWatcher(threading.Thread):
    """Reads the agent's logs while it runs and stops it (the launcher's stop file: the CLI and
    all it started) once it spends past a turn or token budget that its CLI does not enforce."""

    def __init__(self, *, adapter: Adapter, budget: Budget, paths: AttemptPaths) -> None:
        super().__init__(daemon=True, name="budget-watcher")
        self.adapter, self.budget, self.paths = adapter, budget, paths
        self.done = threading.Event()
        self.over = ""

    def run(self) -> None:
        enforced = self.adapter.enforced_by_cli
        while not self.done.wait(BUDGET_POLL_S):
            spent = self.adapter.progress(log_path=self.paths.log, home=self.paths.home)
            self.over = spent.over(self.budget, enforced=enforced)
            if self.over:
                self.paths.stop.touch()
                return

    def __enter__(self) -> "BudgetWatcher":
        if self.budget.max_turns or self.budget.max_tokens:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        if self.is_alive():
            self.join(timeout=30)


def _launcher_argv(paths: AttemptPaths) -> list[str]:
    return [
        sys.executable,
        str(LAUNCHER),
        "--cwd",
        str(paths.workspace),
        "--stdout",
        str(paths.log),
        "--stderr",
        str(paths.stderr),
        "--stop",
        str(paths.stop),
        "--",
    ]


def agent_limits(*, wall_clock_s: float) -> Limits:
    """An agent's sandbox: its wall-clock budget, and ARENA_AGENT_MEMORY_MB for the whole tree
    (the cgroup's, or the container's under docker), never as a per-process address-space cap:
    Node-based CLIs reserve far more virtual memory than they use."""
    memory_mb = settings.ARENA_AGENT_MEMORY_MB
    return Limits(
        timeout_s=wall_clock_s,
        memory_bytes=memory_mb * 1024**2 if memory_mb else None,
        address_space=False,
        user=AGENT_UID,
    )


def _read_text(path: Path, *, limit: int) -> str:
    try:
        with path.open("rb") as fh:
            return fh.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _keep_logs(*, paths: AttemptPaths) -> None:
    """stdout and stderr of the agent, kept beside the attempt after the box is removed."""
    for source in (paths.log, paths.stderr, paths.box / "child.log"):
        data = _read_agent_file(source, limit=trajectory_max_bytes())
        if data is not None:
            (paths.folder / source.name).write_bytes(data)


def _read_agent_file(path: Path, *, limit: int) -> bytes | None:
    """A file the agent could have written: regular, not a link, at most `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read(limit + 1)


# --- collecting ---------------------------------------------------------------------------


def _collect(
    *,
    run_id: int,
    attempt: int,
    adapter: Adapter,
    budget: Budget,
    verdict: Verdict,
    workspace: Workspace,
    paths: AttemptPaths,
    wall_s: float,
) -> None:
    """Trajectory, then the failure or the submission: one transaction, all or nothing.

    A failed run keeps its trajectory, so its transcript shows what went wrong.
    """
    changed = workspace_changed_protected(workspace=workspace)
    transcript = adapter.transcript(log_path=paths.log, home=paths.home, workspace=workspace.root)
    with transaction.atomic():
        run = Run.objects.select_for_update().select_related("task").get(pk=run_id)
        if run.status != Status.COLLECTING or run.attempts != attempt:
            raise RunLost(f"run {run_id} left collecting")
        note = _import_trajectory(run=run, transcript=transcript, box=paths.box)
        run.protected_changed = changed
        run.duration_s = round(wall_s, 3)
        run.save(update_fields=["protected_changed", "duration_s"])
        failure = _collect_failure(
            run=run, adapter=adapter, budget=budget, verdict=verdict, note=note
        )
        solution: dict[str, str] = {}
        if failure is None:
            try:
                solution = workspace_collect(workspace=workspace, dest=paths.folder / "solution")
            except WorkspaceError as exc:
                failure = (Reason.NO_SOLUTION, f"the agent left no usable solution: {exc}")
        if failure is not None:
            run_advance(
                run_id=run_id,
                attempt=attempt,
                old=Status.COLLECTING,
                new=Status.FAILED,
                failure_reason=failure[0],
                failure_detail=failure[1][:MAX_DETAIL_CHARS],
                finished_at=timezone.now(),
                lease_expires_at=None,
            )
            return
        _submit(run=run, attempt=attempt, solution=solution)


def _collect_failure(
    *, run: Run, adapter: Adapter, budget: Budget, verdict: Verdict, note: str
) -> tuple[str, str] | None:
    if not verdict.finished:
        return verdict.reason, _with_note(verdict.detail, note)
    over = budget_overrun(run=run, budget=budget, enforced=adapter.enforced_by_cli)
    return (Reason.BUDGET_EXHAUSTED, over) if over else None


def _with_note(detail: str, note: str) -> str:
    return f"{detail}\n{note}" if note else detail


def _import_trajectory(*, run: Run, transcript: Path, box: Path) -> str:
    """Import the agent's log as the run's trajectory; a note when it cannot be imported."""
    try:
        inside = transcript.resolve().is_relative_to(box.resolve())
    except OSError:
        inside = False
    data = _read_agent_file(transcript, limit=trajectory_max_bytes()) if inside else None
    if not data:
        return f"no trajectory: {transcript.name} is missing, empty or not a regular file"
    try:
        with transaction.atomic():
            run_trajectory_attach(run=run, data=data, filename=transcript.name)
    except TrajectoryRejected as exc:
        logger.warning("run %s: trajectory not imported: %s", run.pk, exc)
        return f"no trajectory: {exc}"
    return ""


def budget_overrun(*, run: Run, budget: Budget, enforced: frozenset[str]) -> str:
    """Which budget the imported log shows was exceeded; "" when none was.

    Fields the CLI enforces itself are left to it (its log says so, see Adapter.judge).
    """
    trajectory = run.trajectory
    spent = {
        "max_turns": trajectory.turn_count if trajectory else None,
        "max_tokens": (
            run.input_tokens + run.output_tokens + run.cache_read_tokens + run.cache_write_tokens
        ),
        "max_cost_usd": run.cost_usd,
    }
    for name, used in spent.items():
        limit = getattr(budget, name)
        if limit is None or name in enforced or used is None or used <= limit:
            continue
        return f"the log shows {used:g} against a budget of {name} = {limit:g}"
    return ""


def _submit(*, run: Run, attempt: int, solution: dict[str, str]) -> Submission:
    (name, code), *_ = solution.items()
    evaluation = evaluation_create(task=run.task, solution_name=name, solution_code=code)
    return run_submit(run=run, attempt=attempt, evaluation=evaluation)


# --- recovering lost runs -----------------------------------------------------------------


# --- choosing what to launch --------------------------------------------------------------


def tasks_select(*, selector: str) -> list[Task]:
    """Active tasks named by a comma-separated selector: slugs, globs (tt-*), category:<name>,
    or all. ValueError names the part that matches nothing."""
    active = {t.slug: t for t in Task.objects.filter(is_active=True).order_by("slug")}
    chosen: dict[str, Task] = {}
    parts = [p.strip() for p in selector.split(",") if p.strip()]
    if not parts:
        raise ValueError("tasks: give slugs, globs like tt-*, category:<name> or all")
    for part in parts:
        matched = _tasks_matching(part, active)
        if not matched:
            raise ValueError(f"tasks: {part!r} matches no active task")
        chosen.update((t.slug, t) for t in matched)
    return list(chosen.values())


def _tasks_matching(part: str, active: dict[str, Task]) -> list[Task]:
    if part == "all":
        return list(active.values())
    if part.startswith("category:"):
        category = part.removeprefix("category:")
        return [t for t in active.values() if t.category == category]
    return [t for slug, t in active.items() if fnmatch.fnmatchcase(slug, part)]


def agent_for_launch(*, name: str) -> Agent:
    """The agent by slug or name; `scripted-<strategy>` is made on first use.
    ValueError names the agent when there is no such one."""
    agent = Agent.objects.filter(Q(slug=name) | Q(name=name)).first()
    if agent is not None:
        return agent
    strategy = name.removeprefix("scripted-")
    if name.startswith("scripted-") and strategy in SCRIPTED_STRATEGIES:
        return agent_get_or_create(
            name=name,
            defaults={"harness": "scripted", "model": "scripted", "config": {"strategy": strategy}},
        )
    raise ValueError(
        f"agent: no agent {name!r}; add it in the admin (harness, model, config) "
        f"or use scripted-<{'|'.join(SCRIPTED_STRATEGIES)}>"
    )
