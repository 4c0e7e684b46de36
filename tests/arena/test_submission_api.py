"""POST /api/v1/submissions: validation names the field, and a refusal writes nothing."""

import pytest
from django.core.cache import cache

from arena.models import Agent, Run, Submission
from evaluator.models import Evaluation
from tests.api.factories import client_with_token, error_of, token_create, upload

URL = "/api/v1/submissions"


@pytest.fixture
def client(db):
    cache.clear()  # no rate-limit counts left over from another test
    return client_with_token(token_create())


def fields_of(response) -> dict:
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid"
    return error["fields"]


def nothing_written() -> bool:
    return not (
        Agent.objects.exists()
        or Run.objects.exists()
        or Evaluation.objects.exists()
        or Submission.objects.exists()
    )


def test_request_without_a_solution_is_refused_naming_the_field(client, catalog_tasks):
    response = client.post(URL, {"task": "silu", "agent": "a"}, format="multipart")
    assert fields_of(response) == {"solution": ["This field is required."]}
    assert response.json()["error"]["message"] == "solution: This field is required."
    assert nothing_written()


def test_unknown_task_is_refused_naming_the_field(client, catalog_tasks):
    response = client.post(
        URL, {"task": "nope", "agent": "a", "solution": upload()}, format="multipart"
    )
    assert fields_of(response) == {"task": ["unknown task 'nope'"]}
    assert nothing_written()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (b"", "the solution is empty"),
        (b"  \n", "the solution is empty"),
        (b"\xff\xfe\x00bad", "not UTF-8 text"),
        (b"x = 1\x00\n", "contains NUL bytes"),
    ],
)
def test_unreadable_solution_files_are_refused(client, catalog_tasks, code, message):
    response = client.post(
        URL, {"task": "silu", "agent": "a", "solution": upload(code)}, format="multipart"
    )
    assert fields_of(response) == {"solution": [message]}
    assert nothing_written()


def test_oversized_solution_is_refused(client, catalog_tasks, settings):
    settings.ARENA_MAX_SOLUTION_BYTES = 1024
    response = client.post(
        URL, {"task": "silu", "agent": "a", "solution": upload(b"#" * 2048)}, format="multipart"
    )
    assert fields_of(response) == {"solution": ["larger than the 1024-byte limit"]}
    assert nothing_written()


def test_agent_name_without_letters_is_refused(client, catalog_tasks):
    response = client.post(
        URL, {"task": "silu", "agent": "!!!", "solution": upload()}, format="multipart"
    )
    assert fields_of(response) == {"agent": ["the agent name needs letters or digits"]}


def test_valid_upload_creates_run_evaluation_and_submission(
    client, catalog_tasks, django_capture_on_commit_callbacks, monkeypatch
):
    enqueued = []
    monkeypatch.setattr(
        "arena.lifecycle.submission_enqueue", lambda *, submission: enqueued.append(submission.pk)
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            URL,
            {
                "task": "silu",
                "agent": "Scripted Agent",
                "solution": upload(name="../../etc/kernel.py"),
            },
            format="multipart",
        )
    assert response.status_code == 201, response.content
    body = response.json()
    submission = Submission.objects.get(pk=body["id"])
    assert enqueued == [submission.pk]
    assert body["status"] == "queued" and body["task"] == "silu"
    assert body["run_url"] == f"/runs/{submission.run_id}/"
    assert submission.run.agent.slug == "scripted-agent"
    assert submission.evaluation.solution_name == "kernel.py"
    assert submission.evaluation.task_version == submission.run.task.version_hash


def test_failure_halfway_through_creation_rolls_back_every_row(client, catalog_tasks, monkeypatch):
    def broken_create(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr("arena.services.evaluation_create", broken_create)
    client.raise_request_exception = False
    response = client.post(
        URL, {"task": "silu", "agent": "a", "solution": upload()}, format="multipart"
    )
    assert response.status_code == 500
    assert nothing_written()


def test_upload_without_a_token_is_refused_and_writes_nothing(catalog_tasks):
    response = client_with_token(None).post(
        URL, {"task": "silu", "agent": "a", "solution": upload()}, format="multipart"
    )
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Token"
    assert nothing_written()


def test_solution_as_json_text_is_accepted(client, catalog_tasks):
    response = client.post(
        URL, {"task": "silu", "agent": "a", "solution": "class ModelNew: pass\n"}, format="json"
    )
    assert response.status_code == 201, response.content
    evaluation = Submission.objects.get(pk=response.json()["id"]).evaluation
    assert (evaluation.solution_name, evaluation.solution_code) == (
        "solution.py",
        "class ModelNew: pass\n",
    )


def test_missing_submission_is_a_json_404(client, db):
    response = client.get(f"{URL}/999999")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"
