"""A run's log: attaching an imported trajectory to an existing run. (A log uploaded for a new
run, with its kernel: arena/log_uploads.py; the transcript page: leaderboard/transcript_pages.py.)

The transcripts app imports, stores and renders logs; runs are this app's rows. The trajectory
is written by the transcripts app and handed back here, inside the same transaction, to be
attached.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from django.contrib.auth.base_user import AbstractBaseUser

from arena.agent_names import AgentNameRefused, agent_name_parse
from arena.agents.registry import ADAPTERS
from arena.models import Agent, Run
from arena.selectors import runs_visible_to
from arena.services import run_may_act
from tasks.models import Task
from tasks.selectors import task_get_active
from transcript_formats.registry import harness_by_format
from transcripts.models import Trajectory
from transcripts.services import (
    TrajectoryForbidden,
    TrajectoryRejected,
    trajectory_prepare,
    trajectory_store,
)

# The harness whose CLI writes each log format, as the format's registry entry labels it: an
# agent first seen in an upload takes it. Where the arena runs that CLI, it is the adapter's
# name (arena/agents); the others are named for their CLI and can be uploaded but not launched.
# A list of chat messages names no CLI.
HARNESS_BY_FORMAT = harness_by_format()
# Harnesses the arena cannot launch: their logs are uploaded, never run here.
UPLOAD_ONLY_HARNESSES = frozenset(HARNESS_BY_FORMAT.values()) - frozenset(ADAPTERS)
# Harnesses that tie an agent to one CLI's logs; others (a command template, the scripted
# demo) may run any CLI, and a log of any harness is accepted under them.
LOG_HARNESSES = frozenset(HARNESS_BY_FORMAT.values())


def run_trajectory_attach(
    *, run: Run, data: bytes | None = None, path: Path | None = None, filename: str = ""
) -> Trajectory:
    """Import a log for `run` (which has none yet) and attach it, or nothing at all."""
    if run.trajectory_id is not None:
        raise TrajectoryRejected("run", f"run {run.pk} already has a trajectory")
    prepared = trajectory_prepare(data=data, path=path, filename=filename)
    return trajectory_store(prepared, then=lambda trajectory: run_spend_set(run, trajectory))


def trajectory_upload(
    *,
    run_id: int,
    data: bytes | None = None,
    path: Path | None = None,
    file: BinaryIO | None = None,
    filename: str = "",
    max_bytes: int | None = None,
    user: AbstractBaseUser | None = None,
) -> Trajectory:
    """The log of an existing run that has none yet, attached or nothing at all. `user` is the
    account uploading (None: the operator, from the command line): it must be allowed to act
    for the run (TrajectoryForbidden otherwise)."""
    _check_run(run_id=run_id, user=user)
    # Parsing takes seconds on a large log: it happens before the transaction opens.
    prepared = trajectory_prepare(
        data=data, path=path, file=file, filename=filename, max_bytes=max_bytes
    )

    def attach(trajectory: Trajectory) -> None:
        run = Run.objects.select_for_update().select_related("agent").get(pk=run_id)
        if run.trajectory_id is not None:
            raise TrajectoryRejected("run", f"run {run_id} already has a trajectory")
        agent_harness_check(agent=run.agent, harness=HARNESS_BY_FORMAT.get(trajectory.format, ""))
        _run_describe(run, trajectory)
        run_spend_set(run, trajectory)

    return trajectory_store(prepared, then=attach)


def _check_run(*, run_id: int, user: AbstractBaseUser | None) -> None:
    # A hidden run of someone else's does not exist for the uploader: no answer tells it apart.
    runs = Run.objects.all() if user is None else runs_visible_to(user=user)
    run = runs.select_related("agent").filter(pk=run_id).first()
    if run is None:
        raise TrajectoryRejected("run", f"no run with id {run_id}")
    if user is not None and not run_may_act(user=user, run=run):
        raise TrajectoryForbidden("run", f"run {run_id} is not yours: only its owner attaches logs")
    if run.trajectory_id is not None:
        raise TrajectoryRejected("run", f"run {run_id} already has a trajectory")


def task_for_new_run(*, agent_slug: str, task_slug: str) -> Task:
    """The active task a new run of the agent named `agent_slug` is uploaded for, or
    TrajectoryRejected naming the field that is wrong."""
    try:
        agent_name_parse(agent_slug)
    except AgentNameRefused as exc:
        raise TrajectoryRejected("agent", f"{exc.message}; or give a run id") from None
    if not task_slug.strip():
        raise TrajectoryRejected("task", "name the task, or give a run id")
    task = task_get_active(slug=task_slug.strip())
    if task is None:
        raise TrajectoryRejected("task", f"unknown task {task_slug.strip()!r}")
    return task


def agent_harness_check(*, agent: Agent, harness: str) -> None:
    """Refuse a log that another harness than the agent's wrote, saying how to upload it."""
    if not harness or agent.harness not in LOG_HARNESSES or agent.harness == harness:
        return
    raise TrajectoryRejected(
        "agent",
        f"this log was written by {harness}; the agent {agent.name!r} is a {agent.harness} "
        f"agent: make a second agent for it, e.g. {f'{agent.name} ({harness})'!r}",
    )


def _run_describe(run: Run, trajectory: Trajectory) -> None:
    """Fill what the run does not say it ran from what its log says (an arena run's own
    record stays)."""
    summary = trajectory.summary if isinstance(trajectory.summary, dict) else {}
    found = {
        "harness": HARNESS_BY_FORMAT.get(trajectory.format, ""),
        "model": str(summary.get("model") or ""),
        "cli_version": str(summary.get("cli_version") or ""),
    }
    blank = [name for name, value in found.items() if value and not getattr(run, name)]
    for name in blank:
        setattr(run, name, found[name][: Run._meta.get_field(name).max_length])
    if blank:
        run.save(update_fields=blank)


def run_spend_set(run: Run, trajectory: Trajectory) -> None:
    """Attach the trajectory: the run's spend is what it says it spent."""
    run.trajectory = trajectory
    run.input_tokens = trajectory.input_tokens
    run.output_tokens = trajectory.output_tokens
    run.cache_read_tokens = trajectory.cache_read_tokens
    run.cache_write_tokens = trajectory.cache_write_tokens
    run.cost_usd = trajectory.cost_usd
    run.cost_computed = trajectory.cost_computed
    fields = ["trajectory", "input_tokens", "output_tokens", "cache_read_tokens"]
    fields += ["cache_write_tokens", "cost_usd", "cost_computed"]
    if trajectory.duration_s is not None:
        run.duration_s = trajectory.duration_s
        fields.append("duration_s")
    run.save(update_fields=fields)
