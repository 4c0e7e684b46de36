"""Filling the demo leaderboard with runs that really happened (`manage.py seed_demo`).

Every demo run is the scripted agent working a task in a workspace. Where bench/demo_gpu.py
recorded that run graded on a GPU (arena/demo/graded-*.json) for the task's current version,
the recorded run is imported: its log, its solution and the grader's verdict as it was given
there, labelled with the GPU and the script. Otherwise the agent runs here and its solution is
submitted like any other, to be graded by the worker on whatever device it has. Nothing is
made up: every number comes from the grader, and every transcript from the agent's own log.
"""

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from arena.agents.scripted import VERSION as SCRIPTED_VERSION
from arena.demo.scripted_runs import DEMO_AGENTS, DemoAgent, DemoRun, demo_plan, demo_run
from arena.lifecycle import run_recorded_create
from arena.models import Agent, Run, Submission
from arena.run_logs import run_trajectory_attach
from arena.run_scores import leaderboard_record
from arena.services import agent_get_or_create, submission_create
from evaluator.services import evaluation_create, evaluation_store_result
from tasks.models import Task
from tasks.selectors import task_folder
from transcripts.services import TrajectoryRejected

RECORDED_DIR = Path(__file__).resolve().parent
RECORDED_GLOB = "graded-*.json"
RECORDING_SCRIPT = "bench/demo_gpu.py"
SCRIPTED_CLI_VERSION = f"scripted {SCRIPTED_VERSION}"
LOG_NAME = "scripted-stream.jsonl"


class DemoError(Exception):
    """Demo data that cannot be used; the message names the file, task or field."""


@dataclass(frozen=True)
class Recorded:
    """One run recorded by bench/demo_gpu.py, with where and when it was graded."""

    entry: dict[str, Any]
    gpu: str
    date: str
    path: Path

    @property
    def note(self) -> str:
        return f"graded on {self.gpu} by {RECORDING_SCRIPT} ({self.date})"


@dataclass
class SeedReport:
    imported: list[str] = field(default_factory=list)  # recorded runs, graded on a GPU
    submitted: list[str] = field(default_factory=list)  # run here, queued for grading
    skipped: list[str] = field(default_factory=list)  # already in the database
    failed: list[str] = field(default_factory=list)  # the agent left no solution


def demo_agent_get_or_create(*, agent: DemoAgent) -> Agent:
    return agent_get_or_create(
        name=agent.name,
        defaults={
            "harness": "scripted",
            "model": "scripted",
            # The strategy tells the four demo agents apart wherever agents are grouped.
            "effort": agent.strategy,
            "cli_version": SCRIPTED_CLI_VERSION,
            "config": {"strategy": agent.strategy},  # launchable like any scripted agent
        },
    )


def _run_provenance(row: Agent) -> dict[str, str]:
    """What ran, stored on the run: the agent row may change later."""
    return {"cli_version": SCRIPTED_CLI_VERSION, "model": row.model, "effort": row.effort}


def demo_recorded_load(*, paths: Iterable[Path]) -> dict[tuple[str, str], Recorded]:
    """(strategy, task slug) -> recorded run, from bench/demo_gpu.py's files."""
    found: dict[tuple[str, str], Recorded] = {}
    for path in sorted(paths):
        data = _read_json(path)
        for index, entry in enumerate(data["runs"]):
            _check_entry(entry, where=f"{path}: runs[{index}]")
            found[(entry["strategy"], entry["task"])] = Recorded(
                entry=entry, gpu=data["gpu"], date=data["date"], path=path
            )
    return found


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DemoError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise DemoError(f"{path}: field 'runs' must be a list")
    for key in ("gpu", "date"):
        if not isinstance(data.get(key), str):
            raise DemoError(f"{path}: field {key!r} must be a string")
    return data


_ENTRY_FIELDS = {"strategy": str, "task": str, "task_version": str, "log": str}


def _check_entry(entry: Any, *, where: str) -> None:
    if not isinstance(entry, dict):
        raise DemoError(f"{where}: must be an object")
    for name, kind in _ENTRY_FIELDS.items():
        if not isinstance(entry.get(name), kind):
            raise DemoError(f"{where}: field {name!r} must be a {kind.__name__}")
    if entry["strategy"] not in {a.strategy for a in DEMO_AGENTS}:
        raise DemoError(f"{where}: field 'strategy': unknown strategy {entry['strategy']!r}")
    result = entry.get("result")
    if result is not None and not isinstance(result, dict):
        raise DemoError(f"{where}: field 'result' must be an object or null")


def recorded_matches(*, recorded: Recorded, task: Task) -> bool:
    """Recorded for this task version, and the verdict is of exactly the solution recorded."""
    entry = recorded.entry
    if entry["task_version"] != task.version_hash:
        return False
    solution, result = entry.get("solution"), entry.get("result")
    if solution is None or result is None:
        return result is None and solution is None
    digest = hashlib.sha256(solution.encode()).hexdigest()
    return (
        digest == entry.get("solution_sha256") == result.get("solution_hash")
        and result.get("task_version") == task.version_hash
    )


def demo_seed(
    *,
    task_slugs: Iterable[str],
    strategies: Iterable[str],
    recorded: dict[tuple[str, str], Recorded],
    verify: bool = False,
    progress: Callable[[str], None] = lambda line: None,
) -> SeedReport:
    """Add every demo run (agent x task) that is not in the database yet.

    With `verify`, a recorded run is used only after the agent, run here, wrote the very
    solution that was recorded; its verdict is then the GPU's, its transcript this run's.
    """
    tasks = _demo_tasks(task_slugs)
    wanted = set(strategies)
    report = SeedReport()
    folders = {slug: task_folder(task=task) for slug, task in tasks.items()}
    for agent, slug in demo_plan(task_folders=folders):
        if agent.strategy not in wanted:
            continue
        label, task = f"{agent.name} on {slug}", tasks[slug]
        if _demo_run_exists(agent=agent, task=task):
            report.skipped.append(label)
            continue
        match = recorded.get((agent.strategy, slug))
        if match is not None and not recorded_matches(recorded=match, task=task):
            match = None
        if match is not None and not verify:
            demo_run_import_recorded(agent=agent, task=task, recorded=match)
            report.imported.append(label)
            progress(f"{label}: imported, {match.note}")
            continue
        progress(f"{label}: running the scripted agent")
        run = demo_run(task_folder=folders[slug], strategy=agent.strategy)
        _seed_local_run(agent, task, run, match, report=report, progress=progress)
    return report


def _seed_local_run(
    agent: DemoAgent,
    task: Task,
    run: DemoRun,
    match: Recorded | None,
    *,
    report: SeedReport,
    progress: Callable[[str], None],
) -> None:
    label = f"{agent.name} on {task.slug}"
    same = match is not None and run.solution is not None
    if same and run.solution_sha256 == match.entry.get("solution_sha256"):
        demo_run_import_recorded(agent=agent, task=task, recorded=match, log=run.log)
        report.imported.append(label)
        progress(f"{label}: same solution as recorded, {match.note}")
        return
    demo_run_submit(agent=agent, task=task, run=run)
    if run.solution is None:
        report.failed.append(label)
        progress(f"{label}: no solution ({run.problem})")
    else:
        report.submitted.append(label)
        progress(f"{label}: submitted for grading after {run.duration_s:.0f} s")


def _demo_tasks(task_slugs: Iterable[str]) -> dict[str, Task]:
    tasks = {}
    for slug in task_slugs:
        task = Task.objects.filter(slug=slug, is_active=True).first()
        if task is None:
            raise DemoError(f"task {slug!r} is not in the database; run `manage.py sync_tasks`")
        tasks[slug] = task
    return tasks


def _demo_run_exists(*, agent: DemoAgent, task: Task) -> bool:
    return Run.objects.filter(agent__slug=agent.slug, task=task).exists()


def _locked_agent(agent: DemoAgent, task: Task) -> Agent | None:
    """The agent row, locked, or None when its run on the task appeared meanwhile."""
    row = demo_agent_get_or_create(agent=agent)
    # Two seeders at once: the second waits here, then sees the first one's run.
    Agent.objects.select_for_update().filter(pk=row.pk).first()
    return None if _demo_run_exists(agent=agent, task=task) else row


def demo_run_import_recorded(
    *, agent: DemoAgent, task: Task, recorded: Recorded, log: str | None = None
) -> Run | None:
    """A recorded run as it happened: finished, with its GPU verdict and its log (or `log`)."""
    entry = recorded.entry
    submission: Submission | None = None
    with transaction.atomic():
        row = _locked_agent(agent, task)
        if row is None:
            return None
        solved = entry.get("solution") is not None
        run = run_recorded_create(
            agent=row,
            task=task,
            solved=solved,
            detail=entry.get("problem") or "the agent left no solution",
            **_run_provenance(row),
        )
        if solved:
            evaluation = evaluation_create(
                task=task,
                solution_name=entry.get("solution_name") or "solution.py",
                solution_code=entry["solution"],
            )
            data = dict(entry["result"], recorded={"note": recorded.note, "gpu": recorded.gpu})
            # Recorded on a GPU host: the new row's attempt 0, never claimed here.
            evaluation_store_result(evaluation=evaluation, data=data, attempt=0)
            submission = Submission.objects.create(run=run, evaluation=evaluation)
        # Last: the import writes files, and nothing after it may fail and orphan them.
        where = f"{recorded.path}: the run of {agent.name} on {task.slug}"
        _trajectory_attach(entry["log"] if log is None else log, run=run, where=where)
    if submission is not None:
        # Scored as a graded run is (arena.lifecycle.submission_evaluate): the sweep's catch-up
        # only looks past the newest score, and a worker may grade a newer one first.
        leaderboard_record(submission_id=submission.pk)
    return run


def demo_run_submit(*, agent: DemoAgent, task: Task, run: DemoRun) -> Run | None:
    """A run that happened here: its solution is graded by the worker once this commits."""
    with transaction.atomic():
        row = _locked_agent(agent, task)
        if row is None:
            return None
        if run.solution is None:
            created = run_recorded_create(
                agent=row, task=task, solved=False, detail=run.problem, **_run_provenance(row)
            )
        else:
            submission = submission_create(
                task=task,
                agent_name=row.name,
                solution_name="solution.py",
                solution_code=run.solution,
            )
            created = submission.run
            created.source = Run.Source.ARENA
            for name, value in _run_provenance(row).items():
                setattr(created, name, value)
            created.save(update_fields=["source", *_run_provenance(row)])
        where = f"the run of {agent.name} on {task.slug} made here"
        _trajectory_attach(run.log, run=created, where=where)
    return created


def _trajectory_attach(log: str, *, run: Run, where: str) -> None:
    try:
        run_trajectory_attach(run=run, data=log.encode(), filename=LOG_NAME)
    except TrajectoryRejected as exc:
        raise DemoError(f"{where}: field 'log': {exc.message}") from None


def demo_recorded_paths() -> list[Path]:
    return sorted(RECORDED_DIR.glob(RECORDED_GLOB))
