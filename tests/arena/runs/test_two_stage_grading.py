"""Grading in two stages by real Celery workers on two queues: a CPU worker on the build queue
compiles each upload's extensions into the shared build cache and grades compile failures
itself; the GPU worker (on the CPU here) grades with what was built and never builds."""

import uuid

import pytest

from arena.models import Run, Submission
from evaluator.models import Evaluation
from tests.api.factories import client_with_token, token_create, upload
from tests.arena.runs.conftest import wait_for_status
from tests.conftest import REPO

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

SOLUTIONS = REPO / "tests" / "evaluator" / "solutions"


def submit(code: str, agent: str) -> Submission:
    client = client_with_token(token_create(username=f"two-stage-{uuid.uuid4().hex[:8]}"))
    response = client.post(
        "/api/v1/submissions",
        {"task": "silu", "agent": agent, "solution": upload(code.encode(), "solution.py")},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return Submission.objects.get(pk=response.json()["id"])


def graded(submission: Submission) -> Evaluation:
    run = wait_for_status(submission.run, Run.Status.DONE, Run.Status.FAILED, timeout_s=240)
    assert run.status == Run.Status.DONE, run.failure_detail
    return Evaluation.objects.get(pk=submission.evaluation_id)


def test_builds_on_the_build_queue_gradings_on_the_gpu_queue(
    run_queues, workers, catalog_tasks, tmp_path
):
    cache = {"ARENA_BUILD_CACHE": str(tmp_path / "builds")}
    build = workers("build", [run_queues.build], **cache)

    # A compile failure is graded and its run closed with no GPU worker in existence.
    broken = submit((SOLUTIONS / "c_extension_compile_error.py").read_text(), "breaks-builds")
    evaluation = graded(broken)
    assert (evaluation.status, evaluation.attempts) == ("failed", 1)
    compile_gate = evaluation.result["gates"]["compile"]
    assert compile_gate["reason"] == "did not compile: the compiler refused it"
    assert "Error building extension 'arena_broken_ext'" in compile_gate["detail"]["error"]
    assert evaluation.result["environment"]["build"]["source"] == "build stage"
    assert set(evaluation.result["phases"]) == {"build"}
    assert evaluation.shapes.count() == 0

    # Uploads sent before the GPU worker starts are built meanwhile; it only grades them.
    source = (SOLUTIONS / "silu_c_extension.py").read_text()
    names = [f"arena_ext_{i}" for i in range(2)]
    uploads = [submit(source.replace("arena_fast_ext", name), name) for name in names]
    gpu = workers("gpu", [run_queues.gpu], **cache)
    for submission, name in zip(uploads, names, strict=True):
        evaluation = graded(submission)
        assert evaluation.status == "passed", evaluation.result["gates"]
        assert evaluation.result["environment"]["build"]["source"] == "cache"
        assert evaluation.result["environment"]["build"]["prebuilt_loaded"] == [name]

    assert build.log().count("evaluator.evaluation_build[") >= 3
    assert "evaluator.evaluation_build[" not in gpu.log()
    assert gpu.log().count("arena.submission_evaluate[") >= 2
