"""Arena runs carried end to end by real Celery worker processes."""

import io
import os
import re
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command

from arena.models import Run, Submission
from arena.runs import attempt_box, run_create, run_folder
from evaluator.models import Evaluation
from evaluator.services import evaluation_store_result
from tests.api.factories import client_with_token, token_create, upload
from tests.arena.runs.conftest import command_agent, make_agent, wait_for_status
from tests.processes import processes_called
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def test_a_scripted_run_ends_done_with_a_graded_submission_and_its_trajectory(
    run_queues, workers, vector_add
):
    workers("both", [run_queues.agents, run_queues.build, run_queues.gpu])
    out = io.StringIO()
    call_command("launch_runs", "--agent=scripted-weak", f"--tasks={vector_add.slug}", stdout=out)
    run = Run.objects.get(agent__slug="scripted-weak")
    assert run.status == Run.Status.DONE, run.failure_detail
    # The live table's last frame, then the summary.
    lines = out.getvalue().splitlines()
    assert lines[-1] == "launch_runs: 1 done"
    assert any(
        f"{run.pk} " in line and "tt-vector-add" in line and "done" in line for line in lines
    )
    submission = Submission.objects.get(run=run)
    evaluation = submission.evaluation
    assert evaluation.status == Evaluation.Status.PASSED
    assert evaluation.result["gates"]["generalization"]["passed"] is True
    assert evaluation.shapes.filter(seen=False).exists()
    # The weak strategy wrote a wrong kernel, ran check, and fixed it: all in the transcript.
    trajectory = run.trajectory
    assert trajectory is not None
    assert trajectory.format.startswith("claude")
    assert trajectory.tool_call_count >= 6
    assert (run.cli_version, run.model, run.attempts) == ("scripted 1", "scripted", 1)
    assert run.duration_s > 0 and run.finished_at is not None
    assert run.protected_changed == []
    kept = run_folder(run_id=run.pk) / "attempt-1"
    assert b'"type": "result"' in (kept / "agent.log").read_bytes()


def test_two_workers_one_per_queue_carry_a_run_end_to_end(run_queues, workers, vector_add):
    agents = workers("agents", [run_queues.agents, run_queues.build])
    gpu = workers("gpu", [run_queues.gpu])
    agent = make_agent("scripted-starter-2w", "scripted", strategy="starter")
    run = run_create(agent=agent, task=vector_add)
    run = wait_for_status(run, Run.Status.DONE, Run.Status.FAILED)
    assert run.status == Run.Status.DONE, run.failure_detail
    submission = Submission.objects.get(run=run)
    assert submission.evaluation.status == Evaluation.Status.PASSED
    assert "arena.agents.run_execute[" in agents.log()
    assert "arena.submission_evaluate[" not in agents.log()
    assert "arena.submission_evaluate[" in gpu.log()
    assert "arena.agents.run_execute[" not in gpu.log()


def test_a_worker_killed_mid_run_leaves_the_run_resumed_once_and_done(
    run_queues, workers, vector_add
):
    # Short leases and sweeps so a dead worker's run is found within seconds.
    timing = {"ARENA_RUN_LEASE_S": "4", "ARENA_RUN_SWEEP_S": "2"}
    first = workers("first", [run_queues.agents, run_queues.build, run_queues.gpu], **timing)
    # The marker names the agent's processes on the host, whatever pid namespace they are in.
    marker = f"slow-agent-{uuid.uuid4().hex}"
    agent = command_agent(
        "slow-but-steady",
        f"sh -c ': {marker}; echo $$ > agent.pid; sleep 8; cp starter/solution.py solution.py'",
    )
    run = run_create(agent=agent, task=vector_add)
    wait_for_status(run, Run.Status.AGENT_RUNNING, timeout_s=60)
    pid_file = attempt_box(run_id=run.pk, attempt=1) / "workspace" / "agent.pid"
    wait_for(
        lambda: pid_file.is_file() and pid_file.read_text().strip(), timeout_s=30, what="the agent"
    )
    assert _processes_named(marker)
    first.kill()
    # The agent does not outlive the worker that ran it.
    wait_for(lambda: not _processes_named(marker), timeout_s=10, what="the orphaned agent to end")
    assert Run.objects.get(pk=run.pk).status == Run.Status.AGENT_RUNNING
    time.sleep(4)  # the dead worker's lease runs out
    workers("second", [run_queues.agents, run_queues.build, run_queues.gpu], **timing)
    run = wait_for_status(run, Run.Status.DONE, Run.Status.FAILED)
    assert run.status == Run.Status.DONE, run.failure_detail
    assert run.attempts == 2
    assert Submission.objects.filter(run=run).count() == 1
    assert Evaluation.objects.filter(submission__run=run).count() == 1


def _processes_named(marker: str) -> list[str]:
    """Live processes whose command line holds `marker` (zombies are dead already)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in command and state != "Z" and entry.name != str(os.getpid()):
            found.append(entry.name)
    return found


def test_a_grading_worker_killed_mid_evaluation_is_taken_over_and_its_late_verdict_refused(
    run_queues, workers, vector_add
):
    # A short grading timeout, a lease of 3 s renewed every second, and quick sweeps, so the
    # lost grading is taken over in seconds (sweeps much quicker than 5 s only crowd the lost
    # grading's message out: the embedded broker hands a worker one message a second). The
    # upload hangs at import, under a name of its own: its evaluation is running when the
    # worker's whole process group is killed.
    timing = {
        "ARENA_GRADER_TIMEOUT_S": "8",
        "ARENA_GRADER_LEASE_S": "3",
        "ARENA_GRADER_HEARTBEAT_S": "1",
        "ARENA_RUN_SWEEP_S": "5",
    }
    name = f"hang{uuid.uuid4().hex[:11]}"  # the kernel keeps 15 characters of a name
    code = (
        f"import ctypes, time\nctypes.CDLL(None).prctl(15, b'{name}', 0, 0, 0)\ntime.sleep(300)\n"
    )
    first = workers("first", [run_queues.build, run_queues.gpu], **timing)
    response = client_with_token(token_create(username="hangs")).post(
        "/api/v1/submissions",
        {"task": vector_add.slug, "agent": "hangs", "solution": upload(code.encode(), "hangs.py")},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    submission = Submission.objects.get(pk=response.json()["id"])
    wait_for(lambda: processes_called(name), timeout_s=60, what="the candidate to start")
    held = Evaluation.objects.get(pk=submission.evaluation_id)
    assert (held.status, held.attempts) == ("running", 1)
    # The worker's heartbeat carries the lease past the one it was claimed under.
    wait_for(
        lambda: (
            Evaluation.objects.get(pk=held.pk).lease_expires_at
            > held.lease_expires_at + timedelta(seconds=1)
        ),
        timeout_s=10,
        what="a heartbeat to renew the lease",
    )
    first.kill()
    wait_for(lambda: not processes_called(name), timeout_s=15, what="the candidate to end")
    assert Evaluation.objects.get(pk=held.pk).status == "running"  # stuck
    # Its message died with the worker (file broker) or waits hours for redelivery (Redis):
    # the new worker's sweep finds the lease run out and grades it again, in the same row.
    workers("second", [run_queues.build, run_queues.gpu], **timing)
    run = wait_for_status(submission.run, Run.Status.DONE, Run.Status.FAILED, timeout_s=180)
    assert run.status == Run.Status.DONE, run.failure_detail
    evaluations = Evaluation.objects.filter(submission__run=run)
    assert evaluations.count() == 1
    evaluation = evaluations.get()
    assert (evaluation.status, evaluation.attempts) == ("timeout", 2)
    # The hang is met by the grader (8 s) or, where the broker hands the build message back to
    # the second worker first (Redis), by the build stage's own limit: a timeout either way.
    assert re.fullmatch(r"timed out after \d+ s", evaluation.result["gates"]["compile"]["reason"])
    assert Submission.objects.filter(run=run).count() == 1
    # Had the first worker lived on to store a verdict, attempt 1's would be refused: the
    # second attempt's verdict stands, and its run with it.
    passed = dict(evaluation.result, status="passed", reward=3.0, ranked=True)
    assert evaluation_store_result(evaluation=held, data=passed, attempt=1) is None
    after = Evaluation.objects.get(pk=evaluation.pk)
    assert (after.status, after.attempts, after.reward, after.finished_at, after.result) == (
        "timeout",
        2,
        evaluation.reward,
        evaluation.finished_at,
        evaluation.result,
    )
    assert after.shapes.count() == evaluation.shapes.count()
    assert Run.objects.get(pk=run.pk).status == Run.Status.DONE
