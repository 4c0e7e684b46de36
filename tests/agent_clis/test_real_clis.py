"""Claude Code, Codex and Gemini CLI, the real programs, run by the arena through its agents
queue, in the bwrap sandbox and in docker: each works a catalogue task against the scripted
model server with its own tools, its own log is read into the transcript page, and its kernel
is graded. Budgets the arena enforces stop them mid-run."""

import os
import re
from html import unescape
from pathlib import Path

import pytest
from django.test import Client

from arena.models import Agent, Run, Submission
from arena.runs import attempt_box, run_create
from evaluator.models import Evaluation
from sandboxes.docker import docker_problem
from tests.agent_clis.conftest import cli_missing
from tests.arena.runs.conftest import wait_for_status
from tests.waiting import wait_for

# Each run once, on the embedded pass: they test the CLIs, not PostgreSQL or Redis.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.worker,
    pytest.mark.skipif(
        bool(os.environ.get("ARENA_BROKER_URL")), reason="runs once, on the embedded pass"
    ),
]

# harness, program, script played, the tool that writes the kernel as the transcript names it.
CLIS = [
    ("claude-code", "claude", "solve-vector-add", "Write"),
    ("codex", "codex", "reach-out", "apply_patch"),
    ("gemini", "gemini", "solve-vector-add", "write_file"),
]
API = {"claude-code": "anthropic", "codex": "openai", "gemini": "gemini"}


def cli_agent(harness: str, script: str, model_server, **config) -> Agent:
    slug = f"{harness}-{script}"
    return Agent.objects.create(
        slug=slug,
        name=slug,
        harness=harness,
        model=script,
        config={"base_url": model_server.base_url, "sandbox": "bwrap", **config},
    )


@pytest.mark.parametrize(("harness", "program", "script", "write_tool"), CLIS)
def test_a_real_cli_solves_a_task_in_bwrap_and_its_own_log_is_its_transcript(
    harness, program, script, write_tool, cli_worker, model_server, catalog_tasks
):
    if problem := cli_missing(program):
        pytest.skip(problem)
    run = solved_run(harness, script, model_server, sandbox="bwrap")
    assert_graded_with_its_own_log(run, harness, script, write_tool, model_server)
    print(f"{harness} in bwrap: {run.duration_s:.1f} s")


@pytest.mark.parametrize(("harness", "program", "script", "write_tool"), CLIS)
def test_a_real_cli_solves_a_task_in_docker_and_its_own_log_is_its_transcript(
    harness,
    program,
    script,
    write_tool,
    cli_worker,
    model_server,
    catalog_tasks,
    full_sandbox_image,
):
    if problem := cli_missing(program) or docker_problem(full_sandbox_image):
        pytest.skip(problem)
    run = solved_run(harness, script, model_server, sandbox="docker")
    assert_graded_with_its_own_log(run, harness, script, write_tool, model_server)
    print(f"{harness} in docker: {run.duration_s:.1f} s")


def solved_run(harness: str, script: str, model_server, *, sandbox: str) -> Run:
    model_server.served.clear()
    agent = cli_agent(harness, script, model_server, sandbox=sandbox)
    run = run_create(agent=agent, task=catalog_tasks_task("tt-vector-add"))
    run = wait_for_status(run, Run.Status.DONE, Run.Status.FAILED, timeout_s=300)
    assert run.status == Run.Status.DONE, f"{run.failure_reason}: {run.failure_detail}"
    return run


def assert_graded_with_its_own_log(
    run: Run, harness: str, script: str, write_tool: str, model_server
):
    """The kernel the CLI wrote passed grading, and the transcript page is the CLI's own log:
    its tool calls, the file written as a diff, check's output, the server's token counts."""
    evaluation = Submission.objects.get(run=run).evaluation
    assert evaluation.status == Evaluation.Status.PASSED, evaluation.result
    assert "mask = offsets < n" in evaluation.solution_code
    calls = [c for c in model_server.main_calls() if c["api"] == API[harness]]
    # Every step in order (Codex may poll a long ./check once more, at the same step).
    steps = [c["step"] for c in calls]
    assert steps == sorted(steps) and set(steps) == set(range(steps[-1] + 1)) and len(steps) >= 4
    # Tokens as the server reported them, each call counted once.
    assert run.input_tokens == sum(c["input_tokens"] for c in calls)
    assert run.output_tokens == sum(c["output_tokens"] for c in calls)
    assert run.cli_version and run.trajectory.tool_call_count >= 3
    page = unescape(Client().get(f"/runs/{run.pk}/transcript").content.decode())
    assert write_tool in page and "./check" in page
    assert "+    mask = offsets < n" in page  # the kernel, written, as a diff
    assert "[PASS] correctness" in page  # check's real output
    assert f"in {calls[0]['input_tokens']:,}" in page
    if script == "reach-out":
        # example.com was refused by the egress proxy: the tool result says so.
        assert re.search(r"403|Forbidden|Tunnel connection failed", page)
    swept(run)


def start_up(run, model_server) -> float:
    """Seconds from the run's start to its CLI's first call of the model: the CLI's own
    start-up (at least; the run starts a moment before its CLI does)."""
    first = model_server.main_calls()[0]["served_at"]
    return max(0.0, first - run.started_at.timestamp())


def test_a_real_cli_past_its_turn_budget_is_stopped_with_its_children_and_its_log_kept(
    cli_worker, model_server, catalog_tasks
):
    if problem := cli_missing("gemini"):
        pytest.skip(problem)
    model_server.served.clear()
    agent = cli_agent("gemini", "endless", model_server)
    run = run_create(agent=agent, task=catalog_tasks_task("tt-vector-add"), budget={"max_turns": 3})
    run = wait_for_status(run, Run.Status.DONE, Run.Status.FAILED, timeout_s=180)
    assert run.failure_reason == Run.FailureReason.BUDGET_EXHAUSTED, run.failure_detail
    assert "against a budget of max_turns = 3" in run.failure_detail
    # Stopped by the arena mid-command: the CLI's `sleep 4.25` went with it, within the turns'
    # sleeps of its first call (its own start-up, seconds on a busy host, is not the budget's).
    assert not processes_running("sleep 4.25")
    assert run.duration_s - start_up(run, model_server) < 4 * 4.25
    calls = len(model_server.main_calls())
    assert run.trajectory is not None and run.trajectory.tool_call_count >= 3  # the partial log
    swept(run)
    assert len(model_server.main_calls()) == calls  # and nothing calls the model any more
    print(f"gemini past max_turns in bwrap: {run.duration_s:.1f} s")


def test_a_real_cli_past_its_token_budget_is_stopped_by_the_arena_and_its_log_kept(
    cli_worker, model_server, catalog_tasks
):
    """Claude Code has no token limit of its own: the arena reads the tokens from its logs as
    it runs and stops it, with what it started, once they pass the budget."""
    if problem := cli_missing("claude"):
        pytest.skip(problem)
    model_server.served.clear()
    agent = cli_agent("claude-code", "endless", model_server)
    run = run_create(
        agent=agent, task=catalog_tasks_task("tt-vector-add"), budget={"max_tokens": 2130}
    )
    run = wait_for_status(run, Run.Status.DONE, Run.Status.FAILED, timeout_s=180)
    assert run.failure_reason == Run.FailureReason.BUDGET_EXHAUSTED, run.failure_detail
    # The server reported 1,020 tokens for the first call and 1,121 for the second: 2,141, past
    # the budget only with every output token counted (the CLI's stdout has one a call: 2,102).
    # The arena stopped the CLI in the second call's `sleep 4.25`.
    calls = model_server.main_calls()
    assert [c["step"] for c in calls] == [0, 1]
    spent = sum(c["input_tokens"] + c["output_tokens"] for c in calls)
    assert f"stopped at {spent} against a budget of max_tokens = 2130" in run.failure_detail
    assert not processes_running("sleep 4.25")
    assert run.duration_s - start_up(run, model_server) < 2 * 4.25
    assert run.trajectory is not None and run.trajectory.tool_call_count == 2  # the partial log
    assert run.input_tokens + run.output_tokens == spent
    swept(run)
    assert len(model_server.main_calls()) == len(calls)  # and nothing calls the model any more
    print(f"claude-code past max_tokens in bwrap: {run.duration_s:.1f} s")


def swept(run: Run) -> None:
    """The run's sandbox folder (workspace, home, logs) is removed once the worker is done
    with it, which may be a moment after the run's row says how it ended."""
    box = attempt_box(run_id=run.pk, attempt=1)
    wait_for(lambda: not box.exists(), timeout_s=30, what=f"{box} to be swept")


def processes_running(command: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if command.encode() in cmdline and state != "Z" and entry.name != str(os.getpid()):
            found.append(entry.name)
    return found


def catalog_tasks_task(slug: str):
    from tasks.models import Task

    return Task.objects.get(slug=slug)
