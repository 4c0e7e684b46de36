"""Runs executed in this process (no broker): every way a run can end short of grading.

The agents are real processes in the real sandbox; the runs' grading messages go to queues of
this test's own that no worker serves.
"""

import shlex
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from arena.lifecycle import (
    RunLost,
    RunNotCancellable,
    run_advance,
    run_cancel,
    run_fail,
    run_finish,
    runs_recover,
)
from arena.models import Run, Submission
from arena.runs import MAX_ATTEMPTS, attempt_box, run_create, run_execute, run_folder
from evaluator.models import Evaluation
from sandboxes.backends import bwrap_usable
from sandboxes.docker import docker_usable
from tests.arena.runs.conftest import command_agent, make_agent, wait_for_status
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

COPY_STARTER = "cp starter/solution.py solution.py"


def execute(agent, task, **budget) -> Run:
    run = run_create(agent=agent, task=task, budget=budget or None)
    run_execute(run_id=run.pk)
    return Run.objects.get(pk=run.pk)


def test_a_run_that_writes_a_solution_is_submitted_for_grading(run_queues, vector_add):
    agent = command_agent("copies-starter", f"sh -c '{COPY_STARTER}'")
    run = execute(agent, vector_add)
    assert run.status == Run.Status.EVALUATING, run.failure_detail
    submission = Submission.objects.get(run=run)
    assert submission.evaluation.status == Evaluation.Status.QUEUED
    starter = (vector_add.folder, "starter/solution.py")
    assert "ModelNew" in submission.evaluation.solution_code, starter
    assert run.attempts == 1
    assert run.protected_changed == []
    assert run.lease_expires_at is None
    assert run.budget == {
        "wall_clock_s": 2700.0,
        "max_turns": None,
        "max_tokens": None,
        "max_cost_usd": None,
    }
    # The sandbox's folder is gone; the solution that left it is kept beside the attempt.
    attempt = run_folder(run_id=run.pk) / "attempt-1"
    assert not attempt_box(run_id=run.pk, attempt=1).exists()
    assert (attempt / "solution" / "solution.py").is_file()


def test_an_agent_past_its_wall_clock_budget_fails_with_agent_timeout(run_queues, vector_add):
    agent = command_agent("sleeper", "sleep 60")
    started = time.monotonic()
    run = execute(agent, vector_add, wall_clock_s=1.5)
    assert time.monotonic() - started < 30
    assert (run.status, run.failure_reason) == ("failed", "agent_timeout")
    assert "wall-clock budget of 1.5 s" in run.failure_detail
    # What the run page polls says so too.
    live = Client().get(reverse("leaderboard:run-status", args=[run.pk])).json()
    assert (live["status"], live["failure_reason"], live["finished"]) == (
        "failed",
        "agent_timeout",
        True,
    )
    assert run.budget["wall_clock_s"] == 1.5
    assert not Submission.objects.filter(run=run).exists()


def test_an_agent_that_writes_nothing_fails_with_no_solution(run_queues, vector_add):
    run = execute(command_agent("idle", "true"), vector_add)
    assert (run.status, run.failure_reason) == ("failed", "no_solution")
    assert "solution.py: not found in the workspace" in run.failure_detail


def test_a_solution_that_links_to_a_host_file_fails_with_no_solution(run_queues, vector_add):
    run = execute(command_agent("linker", "ln -s /etc/passwd solution.py"), vector_add)
    assert (run.status, run.failure_reason) == ("failed", "no_solution")
    assert "a symbolic link" in run.failure_detail


def test_a_cli_that_is_not_installed_fails_with_agent_error_naming_it(run_queues, vector_add):
    run = execute(command_agent("ghost", "no-such-agent-cli --json"), vector_add)
    assert (run.status, run.failure_reason) == ("failed", "agent_error")
    assert run.failure_detail == "no-such-agent-cli: not installed (not found on PATH)"


def test_real_cli_adapters_fail_cleanly_when_their_cli_is_missing(
    run_queues, vector_add, monkeypatch, tmp_path
):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty PATH: none of the CLIs is there
    for harness, binary in (("claude-code", "claude"), ("codex", "codex"), ("gemini", "gemini")):
        run = execute(make_agent(f"real-{harness}", harness), vector_add)
        assert (run.status, run.failure_reason) == ("failed", "agent_error"), harness
        assert run.failure_detail == f"{binary}: not installed (not found on PATH)"


def test_an_agent_that_exits_non_zero_fails_with_agent_error_and_its_stderr(run_queues, vector_add):
    agent = command_agent("crasher", "sh -c 'echo segfault in the tokenizer >&2; exit 3'")
    run = execute(agent, vector_add)
    assert (run.status, run.failure_reason) == ("failed", "agent_error")
    assert run.failure_detail.splitlines() == [
        "sh exited with 3: segfault in the tokenizer",
        "no trajectory: agent.log is missing, empty or not a regular file",
    ]


def test_an_agent_without_its_completion_marker_fails_with_agent_error(run_queues, vector_add):
    agent = command_agent(
        "unfinished", f"sh -c '{COPY_STARTER}; echo working'", completion_marker="^DONE$"
    )
    run = execute(agent, vector_add)
    assert (run.status, run.failure_reason) == ("failed", "agent_error")
    assert "stopped without its completion marker" in run.failure_detail


def test_a_provider_error_marker_fails_with_provider_error(run_queues, vector_add):
    agent = command_agent(
        "unlucky",
        f"sh -c '{COPY_STARTER}; echo PROVIDER_ERROR 529 overloaded; exit 1'",
        provider_error_marker="^PROVIDER_ERROR",
    )
    run = execute(agent, vector_add)
    assert (run.status, run.failure_reason) == ("failed", "provider_error")
    assert run.failure_detail.startswith("PROVIDER_ERROR 529 overloaded")
    assert not Submission.objects.filter(run=run).exists()


def test_a_provider_error_on_stderr_fails_with_provider_error(run_queues, vector_add):
    agent = command_agent("no-key", "sh -c 'echo API Error: 401 invalid x-api-key >&2; exit 1'")
    run = execute(agent, vector_add)
    assert (run.status, run.failure_reason) == ("failed", "provider_error")
    assert "API Error: 401" in run.failure_detail


def test_a_turn_budget_exceeded_in_the_log_fails_with_budget_exhausted(run_queues, vector_add):
    agent = make_agent("scripted-tight", "scripted", strategy="starter")
    run = execute(agent, vector_add, max_turns=2)
    assert (run.status, run.failure_reason) == ("failed", "budget_exhausted"), run.failure_detail
    assert "against a budget of max_turns = 2" in run.failure_detail
    # The failed run keeps its transcript: the reader sees where the turns went.
    assert run.trajectory is not None and run.trajectory.turn_count > 2
    assert not Submission.objects.filter(run=run).exists()


def test_a_budget_marker_in_the_log_fails_with_budget_exhausted(run_queues, vector_add):
    agent = command_agent(
        "out-of-turns",
        f"sh -c '{COPY_STARTER}; echo Reached max turns'",
        budget_marker="max turns",
    )
    run = execute(agent, vector_add)
    assert (run.status, run.failure_reason) == ("failed", "budget_exhausted")


def test_an_unknown_sandbox_fails_with_sandbox_error(run_queues, vector_add):
    agent = command_agent("boxless", COPY_STARTER, sandbox="no-such-sandbox")
    run = execute(agent, vector_add)
    assert (run.status, run.failure_reason) == ("failed", "sandbox_error")
    assert "unknown sandbox 'no-such-sandbox'" in run.failure_detail


def test_changed_protected_files_flag_the_run_and_the_trusted_grader_still_grades(
    run_queues, vector_add
):
    agent = command_agent(
        "tamperer", f"sh -c 'echo \"# mine now\" >> reference.py; rm check; {COPY_STARTER}'"
    )
    run = execute(agent, vector_add)
    assert run.status == Run.Status.EVALUATING
    assert run.protected_changed == ["check", "reference.py"]
    assert Submission.objects.filter(run=run).count() == 1


def test_a_finished_run_is_not_executed_again(run_queues, vector_add):
    run = execute(command_agent("once", f"sh -c '{COPY_STARTER}'"), vector_add)
    assert run_execute(run_id=run.pk) is None
    again = Run.objects.get(pk=run.pk)
    assert (again.status, again.attempts) == (Run.Status.EVALUATING, 1)
    assert Submission.objects.filter(run=run).count() == 1


def test_a_grader_that_cannot_run_fails_the_run_with_grader_error(run_queues, vector_add):
    run = execute(command_agent("graded", f"sh -c '{COPY_STARTER}'"), vector_add)
    evaluation = Submission.objects.get(run=run).evaluation
    evaluation.status = Evaluation.Status.ERROR
    evaluation.error = "the grader could not run: reference.py: not found"
    evaluation.save()
    assert run_finish(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.failure_reason) == ("failed", "grader_error")
    assert run.failure_detail == evaluation.error


def test_cancelling_a_running_agent_stops_it_and_submits_nothing(run_queues, vector_add, settings):
    settings.ARENA_RUN_LEASE_S = 2  # the lease keeper looks every half second
    # A plain process (development switch): the pid the agent writes is then the host's own.
    settings.ARENA_AGENT_SANDBOX = "process"
    settings.ARENA_UNSAFE_RUN_UNISOLATED = True
    agent = command_agent("long-thinker", "sh -c 'echo $$ > agent.pid; sleep 120'")
    run = run_create(agent=agent, task=vector_add)

    def execute() -> None:
        # As a worker's task ends: its thread's database connection closed with it, never left
        # open to hold the test database when the session drops it.
        try:
            run_execute(run_id=run.pk)
        finally:
            connection.close()

    worker = threading.Thread(target=execute)
    worker.start()
    wait_for_status(run, Run.Status.AGENT_RUNNING, timeout_s=60)
    pid_file = attempt_box(run_id=run.pk, attempt=1) / "workspace" / "agent.pid"
    pid = int(
        wait_for(
            lambda: pid_file.is_file() and pid_file.read_text().strip(),
            timeout_s=30,
            what="the agent's pid",
        )
    )
    cancelled = run_cancel(run_id=run.pk)
    assert cancelled.status == Run.Status.CANCELLED
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert not _alive(pid)
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED and run.finished_at is not None
    assert not Submission.objects.filter(run=run).exists()
    with pytest.raises(RunNotCancellable, match="is cancelled"):
        run_cancel(run_id=run.pk)


def test_a_queued_run_can_be_cancelled_and_is_then_never_started(run_queues, vector_add):
    run = run_create(agent=command_agent("never", "true"), task=vector_add)
    run_cancel(run_id=run.pk)
    assert run_execute(run_id=run.pk) is None
    assert Run.objects.get(pk=run.pk).attempts == 0


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap cannot make namespaces here")
def test_under_bwrap_the_scripted_agent_works_and_sees_neither_repository_nor_database(
    run_queues, vector_add, settings
):
    settings.ARENA_AGENT_SANDBOX = "bwrap"
    run = execute(make_agent("scripted-bwrap", "scripted", strategy="starter"), vector_add)
    assert run.status == Run.Status.EVALUATING, run.failure_detail
    assert run.trajectory.tool_call_count >= 4
    database = settings.DATABASES["default"]["NAME"]
    repository_file = settings.BASE_DIR / "config" / "settings.py"
    probe = command_agent("prober", f"sh -c 'ls {repository_file}; ls {database}; {COPY_STARTER}'")
    run = execute(probe, vector_add)
    assert run.status == Run.Status.EVALUATING, run.failure_detail
    stderr = (run_folder(run_id=run.pk) / "attempt-1" / "agent.stderr").read_text()
    assert f"'{repository_file}': No such file" in stderr
    assert f"'{database}': No such file" in stderr


def test_an_agent_is_never_run_in_a_plain_process_without_the_switch(
    run_queues, vector_add, settings
):
    settings.ARENA_AGENT_SANDBOX = "process"
    settings.ARENA_UNSAFE_RUN_UNISOLATED = False
    run = execute(command_agent("unisolated", f"sh -c 'echo started; {COPY_STARTER}'"), vector_add)
    assert (run.status, run.failure_reason) == ("failed", "sandbox_error")
    assert "does not isolate" in run.failure_detail
    assert "ARENA_UNSAFE_RUN_UNISOLATED" in run.failure_detail
    log = run_folder(run_id=run.pk) / "attempt-1" / "agent.log"
    assert not log.exists() or "started" not in log.read_text()
    assert not Submission.objects.filter(run=run).exists()


def _abandon(run: Run, *, status: str, attempts: int, expired: bool = True) -> None:
    """What a worker that died holding the run leaves behind."""
    offset = timedelta(seconds=-5 if expired else 300)
    Run.objects.filter(pk=run.pk).update(
        status=status, attempts=attempts, lease_expires_at=timezone.now() + offset
    )


def test_the_sweep_sends_again_only_runs_whose_lease_ran_out(run_queues, vector_add):
    agent = command_agent("steady", f"sh -c '{COPY_STARTER}'")
    lost = run_create(agent=agent, task=vector_add)
    held = run_create(agent=agent, task=vector_add)
    fresh = run_create(agent=agent, task=vector_add)
    _abandon(lost, status=Run.Status.AGENT_RUNNING, attempts=1)
    _abandon(held, status=Run.Status.AGENT_RUNNING, attempts=1, expired=False)
    assert runs_recover() == [lost.pk]
    assert Run.objects.get(pk=lost.pk).status == Run.Status.QUEUED  # back in the queue
    assert runs_recover() == []  # one message per run and period, however many sweeps
    # A live lease is never taken over; the lost run starts over as attempt 2.
    assert run_execute(run_id=held.pk) is None
    resumed = run_execute(run_id=lost.pk)
    assert (resumed.status, resumed.attempts) == (Run.Status.EVALUATING, 2)
    assert Submission.objects.filter(run=lost).count() == 1
    assert Run.objects.get(pk=fresh.pk).status == Run.Status.QUEUED


def test_a_worker_that_lost_its_run_cannot_move_it_on(run_queues, vector_add):
    run = run_create(agent=command_agent("raced", "true"), task=vector_add)
    _abandon(run, status=Run.Status.AGENT_RUNNING, attempts=2, expired=False)
    with pytest.raises(RunLost):
        run_advance(
            run_id=run.pk, attempt=1, old=Run.Status.AGENT_RUNNING, new=Run.Status.COLLECTING
        )
    assert not run_fail(run_id=run.pk, reason="agent_error", detail="stale", attempt=1)
    assert Run.objects.get(pk=run.pk).status == Run.Status.AGENT_RUNNING


def test_a_run_whose_workers_keep_dying_fails_with_sandbox_error(run_queues, vector_add):
    run = run_create(agent=command_agent("cursed", "true"), task=vector_add)
    _abandon(run, status=Run.Status.AGENT_RUNNING, attempts=MAX_ATTEMPTS)
    failed = run_execute(run_id=run.pk)
    assert (failed.status, failed.failure_reason) == ("failed", "sandbox_error")
    assert failed.failure_detail == "the workers running it were lost 3 times; not retried again"


def test_an_agent_that_writes_the_stop_file_itself_fails_with_agent_error(run_queues, vector_add):
    agent = command_agent("saboteur", f"sh -c '{COPY_STARTER}; touch ../stop; sleep 30'")
    run = execute(agent, vector_add)
    assert (run.status, run.failure_reason) == ("failed", "agent_error")
    assert "stopped itself" in run.failure_detail


@pytest.mark.skipif(not docker_usable(), reason="no Docker engine answers here")
def test_under_docker_the_scripted_agent_works_in_a_container(
    run_queues, vector_add, settings, full_sandbox_image
):
    settings.ARENA_AGENT_SANDBOX = "docker"
    run = execute(make_agent("scripted-docker", "scripted", strategy="weak"), vector_add)
    assert run.status == Run.Status.EVALUATING, (run.failure_reason, run.failure_detail)
    assert run.trajectory.tool_call_count >= 6
    assert Submission.objects.filter(run=run).count() == 1


def test_a_cli_of_another_version_than_the_agent_names_fails_with_agent_error(
    run_queues, vector_add
):
    # The interpreter itself, not a `python3` on PATH that may be a shim reaching outside the
    # folders the sandbox binds (pyenv's calls into ~/.pyenv/libexec).
    copy = 'import shutil; shutil.copy("starter/solution.py", "solution.py")'
    agent = command_agent("pinned", f"{shlex.quote(sys.executable)} -c {shlex.quote(copy)}")
    agent.cli_version = "Python 2.7"
    agent.save()
    run = execute(agent, vector_add)
    assert (run.status, run.failure_reason) == ("failed", "agent_error")
    assert run.cli_version.startswith("Python 3.")
    assert run.failure_detail.endswith("the agent is version Python 2.7")
    agent.cli_version = run.cli_version
    agent.save()
    second = execute(agent, vector_add)
    assert second.status == Run.Status.EVALUATING, second.failure_detail


def test_the_agent_sees_its_provider_key_and_no_other_secret(run_queues, vector_add, monkeypatch):
    monkeypatch.setenv("MY_PROVIDER_KEY", "k-123")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "host-secret")
    monkeypatch.setenv("DATABASE_URL", "postgres://user:password@db/arena")
    agent = command_agent("env-printer", f"sh -c 'env; {COPY_STARTER}'", env=["MY_PROVIDER_KEY"])
    run = execute(agent, vector_add)
    assert run.status == Run.Status.EVALUATING, run.failure_detail
    seen = dict(
        line.split("=", 1)
        for line in (run_folder(run_id=run.pk) / "attempt-1" / "agent.log").read_text().splitlines()
        if "=" in line
    )
    assert seen["MY_PROVIDER_KEY"] == "k-123"
    for secret in ("AWS_SECRET_ACCESS_KEY", "DATABASE_URL", "ARENA_SECRET_KEY"):
        assert secret not in seen
    assert seen["HOME"] == str(attempt_box(run_id=run.pk, attempt=1) / "home")
