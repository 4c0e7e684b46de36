"""Uploads graded end to end by a real Celery worker process."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from arena.lifecycle import submission_evaluate
from arena.models import Run, Submission
from evaluator.models import Evaluation
from evaluator.services import evaluation_run
from tests.api.factories import client_with_token, token_create
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def submit(solutions_dir, name: str, agent: str = "Scripted Agent") -> Submission:
    code = (solutions_dir / name).read_bytes()
    # Writes need an API token; each upload makes its own user, so rate limits never bite.
    client = client_with_token(token_create(username=f"uploader-{Submission.objects.count()}"))
    response = client.post(
        "/api/v1/submissions",
        {"task": "silu", "agent": agent, "solution": SimpleUploadedFile(name, code)},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return Submission.objects.get(pk=response.json()["id"])


def finished_run(submission: Submission) -> Run:
    def done():
        run = Run.objects.get(pk=submission.run_id)
        return run if run.status == Run.Status.DONE else None

    return wait_for(done, timeout_s=180, what=f"run {submission.run_id} to be graded")


def test_correct_triton_solution_ends_as_a_passed_evaluation(
    celery_worker, catalog_tasks, solutions_dir
):
    submission = submit(solutions_dir, "silu_triton.py")
    run = finished_run(submission)
    evaluation = Evaluation.objects.get(pk=submission.evaluation_id)
    assert evaluation.status == "passed"
    assert evaluation.attempts == 1
    assert evaluation.device == "cpu"
    # Correct on the CPU, where nothing is timed: unranked, with no reward to read as 1x.
    assert (evaluation.ranked, evaluation.reward) == (False, None)
    assert evaluation.result["gates"]["performance"]["reason"] == "CPU timings are not ranked"
    assert evaluation.result["gates"]["correctness"]["passed"] is True
    shapes = list(evaluation.shapes.all())
    assert [s.seen for s in shapes] == [True] * 3 + [False] * 5
    assert all(s.correct for s in shapes)
    assert evaluation.result["gates"]["generalization"]["passed"] is True
    assert run.finished_at is not None


def test_wrong_solution_ends_failed_with_its_reason(celery_worker, catalog_tasks, solutions_dir):
    submission = submit(solutions_dir, "silu_wrong_relu.py")
    finished_run(submission)
    evaluation = Evaluation.objects.get(pk=submission.evaluation_id)
    assert evaluation.status == "failed"
    assert evaluation.reward == -2.0
    assert evaluation.ranked is False
    reason = evaluation.result["gates"]["correctness"]["reason"]
    assert reason.startswith("incorrect on shape {'N': 4096}: seed 0 (problem inputs): output 0:")
    assert evaluation.shapes.filter(correct=False).count() == 8


def test_a_redelivered_job_for_a_finished_evaluation_changes_nothing(
    celery_worker, catalog_tasks, solutions_dir
):
    submission = submit(solutions_dir, "silu_triton.py")
    finished_run(submission)
    before = Evaluation.objects.get(pk=submission.evaluation_id)
    assert evaluation_run(evaluation_id=before.pk) is None
    assert submission_evaluate(submission_id=submission.pk).attempts == before.attempts
    after = Evaluation.objects.get(pk=before.pk)
    assert (after.attempts, after.finished_at, after.status) == (
        before.attempts,
        before.finished_at,
        before.status,
    )
    assert after.shapes.count() == 8
