"""The run_kernel API: POST /api/v1/evaluations queues a grading, GET reads its verdict."""

import pytest

from evaluator.models import Evaluation
from evaluator.services import evaluation_create
from tasks.models import Task
from tests.api.factories import client_with_token, error_of, token_create, upload
from tests.waiting import wait_for

URL = "/api/v1/evaluations"


@pytest.fixture
def enqueued(monkeypatch):
    sent: list[int] = []
    monkeypatch.setattr(
        "evaluator.services.evaluation_enqueue", lambda *, evaluation: sent.append(evaluation.pk)
    )
    return sent


def queued_evaluation(status: str = Evaluation.Status.QUEUED, *, by=None) -> Evaluation:
    evaluation = evaluation_create(
        task=Task.objects.get(slug="silu"),
        solution_name="s.py",
        solution_code="x = 1\n",
        submitted_by=by,
    )
    Evaluation.objects.filter(pk=evaluation.pk).update(status=status)
    return evaluation


def invalid_fields(response) -> dict:
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid"
    return error["fields"]


def test_file_upload_is_queued_with_its_position_and_enqueued_on_commit(
    client, token, catalog_tasks, enqueued, django_capture_on_commit_callbacks
):
    ahead = [queued_evaluation(), queued_evaluation(Evaluation.Status.RUNNING)]
    queued_evaluation(Evaluation.Status.PASSED)  # finished: not ahead of anyone
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            URL, {"task": "silu", "solution": upload(name="../k.py")}, format="multipart"
        )
    assert response.status_code == 201, response.content
    body = response.json()
    evaluation = Evaluation.objects.get(pk=body["id"])
    assert body == {
        "id": evaluation.pk,
        "task": "silu",
        "status": "queued",
        "queue_position": len(ahead),
        "url": f"/api/v1/evaluations/{evaluation.pk}",
    }
    assert enqueued == [evaluation.pk]
    assert evaluation.solution_name == "k.py"
    assert not hasattr(evaluation, "submission")  # no run, no leaderboard entry
    assert evaluation.submitted_by == token.user  # the one account that may read it


def test_solution_as_json_text_with_an_allowed_backend(client, catalog_tasks, enqueued):
    code = "import torch\nclass ModelNew(torch.nn.Module): pass\n"
    response = client.post(
        URL, {"task": "silu", "solution": code, "backend": "triton"}, format="json"
    )
    assert response.status_code == 201, response.content
    evaluation = Evaluation.objects.get(pk=response.json()["id"])
    assert (evaluation.solution_name, evaluation.solution_code) == ("solution.py", code)
    assert response.json()["queue_position"] == 0


def test_backend_the_task_does_not_allow_is_refused(client, catalog_tasks):
    response = client.post(
        URL, {"task": "silu", "solution": "x = 1", "backend": "tilelang"}, format="json"
    )
    assert invalid_fields(response) == {"backend": ["silu allows triton, cuda, not 'tilelang'"]}
    assert not Evaluation.objects.exists()


def test_unknown_task_is_refused_naming_the_field(client, catalog_tasks):
    response = client.post(URL, {"task": "nope", "solution": upload()}, format="multipart")
    assert invalid_fields(response) == {"task": ["unknown task 'nope'"]}
    assert not Evaluation.objects.exists()


def test_missing_solution_is_refused_naming_the_field(client, catalog_tasks):
    response = client.post(URL, {"task": "silu"}, format="json")
    assert invalid_fields(response) == {"solution": ["This field is required."]}
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize("as_json", [False, True])
def test_oversize_solution_is_refused(client, catalog_tasks, settings, as_json):
    settings.ARENA_MAX_SOLUTION_BYTES = 1024
    code = "#" * 1025
    if as_json:
        response = client.post(URL, {"task": "silu", "solution": code}, format="json")
    else:
        data = {"task": "silu", "solution": upload(code.encode())}
        response = client.post(URL, data, format="multipart")
    assert invalid_fields(response) == {"solution": ["larger than the 1024-byte limit"]}
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize(
    ("solution", "message"),
    [
        ("   \n", "the solution is empty"),
        (12, "expected a file (multipart) or text (JSON), not int"),
        ("x = '\x00'", "contains NUL bytes"),
    ],
)
def test_unusable_json_solutions_are_refused(client, catalog_tasks, solution, message):
    response = client.post(URL, {"task": "silu", "solution": solution}, format="json")
    assert invalid_fields(response) == {"solution": [message]}


def test_every_bad_field_is_named_at_once(client, catalog_tasks):
    response = client.post(URL, {}, format="json")
    assert set(invalid_fields(response)) == {"task", "solution"}


def test_bad_token_is_refused(catalog_tasks):
    client = client_with_token(None)
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = client.post(URL, {"task": "silu", "solution": "x = 1"}, format="json")
    assert response.status_code == 401
    assert error_of(response)["code"] == "authentication_failed"
    assert not Evaluation.objects.exists()


def test_throttled_token_is_refused_with_retry_after(client, catalog_tasks, settings, enqueued):
    settings.ARENA_WRITE_RATE = "3/hour"
    codes = [
        client.post(URL, {"task": "silu", "solution": "x = 1"}, format="json").status_code
        for _ in range(4)
    ]
    assert codes == [201, 201, 201, 429]
    assert 60 < int(client.post(URL, {}, format="json")["Retry-After"]) <= 3600
    assert Evaluation.objects.count() == 3


def test_detail_of_a_queued_evaluation_shows_its_position(client, token, catalog_tasks):
    first, second = queued_evaluation(by=token.user), queued_evaluation(by=token.user)
    body = client.get(f"{URL}/{second.pk}").json()
    assert (body["status"], body["queue_position"], body["reward"]) == ("queued", 1, None)
    assert client.get(f"{URL}/{first.pk}").json()["queue_position"] == 0
    assert body["solution_sha256"] == second.solution_sha256
    assert "solution_code" not in body


def test_list_is_paginated_newest_first_and_filters(client, token, catalog_tasks):
    made = [queued_evaluation(by=token.user) for _ in range(3)]
    made.append(queued_evaluation(Evaluation.Status.FAILED, by=token.user))
    queued_evaluation()  # someone else's: never listed to this account
    page = client.get(URL, {"limit": 2}).json()
    assert page["count"] == 4
    assert [row["id"] for row in page["results"]] == [made[3].pk, made[2].pk]
    assert page["next"].endswith("limit=2&offset=2") and page["previous"] is None
    second = client.get(URL, {"limit": 2, "offset": 2}).json()
    assert [row["id"] for row in second["results"]] == [made[1].pk, made[0].pk]
    failed = client.get(URL, {"status": "failed"}).json()
    assert [row["id"] for row in failed["results"]] == [made[3].pk]
    assert client.get(URL, {"task": "no-such-task"}).json()["count"] == 0


def test_list_with_an_unknown_status_names_the_parameter(anonymous, db):
    response = anonymous.get(URL, {"status": "finished"})
    assert invalid_fields(response) == {"status": ['"finished" is not a valid choice.']}


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_solution_is_graded_end_to_end_by_a_real_worker(
    celery_worker, catalog_tasks, solutions_dir
):
    client = client_with_token(token_create())
    code = (solutions_dir / "silu_triton.py").read_bytes()
    created = client.post(
        URL, {"task": "silu", "solution": upload(code, "silu_triton.py")}, format="multipart"
    )
    assert created.status_code == 201, created.content
    detail_url = created.json()["url"]

    def finished():
        body = client.get(detail_url).json()
        return body if body["status"] not in ("queued", "running") else None

    body = wait_for(finished, timeout_s=180, what="the evaluation to be graded")
    assert body["status"] == "passed", body
    assert body["queue_position"] is None
    # Correct but untimed on the CPU: not ranked, and no reward that reads as a measured 1x.
    assert body["device"] == "cpu" and body["ranked"] is False
    assert body["reward"] is None and body["result"]["reward"] is None
    assert body["result"]["ranked"] is False
    assert body["result"]["gates"]["performance"]["reason"] == "CPU timings are not ranked"
    assert body["result"]["gates"]["correctness"]["passed"] is True
    assert body["result"]["gates"]["generalization"]["passed"] is True
    assert [row["seen"] for row in body["result"]["per_shape"]] == [True] * 3 + [False] * 5


def test_grading_jobs_go_to_the_gpu_queue():
    from config.celery import app
    from evaluator.jobs import evaluation_run_task

    route = app.amqp.router.route({}, evaluation_run_task.name, args=(1,), kwargs={})
    assert route["queue"].name == "gpu"
