"""POST /api/v1/submissions: validation names the field, and a refusal writes nothing."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from arena.models import Agent, Run, Submission
from evaluator.models import Evaluation

URL = "/api/v1/submissions"


@pytest.fixture
def client():
    return APIClient()


def upload(code: bytes = b"class ModelNew: pass\n", name: str = "solution.py"):
    return SimpleUploadedFile(name, code, content_type="text/x-python")


def nothing_written() -> bool:
    return not (
        Agent.objects.exists()
        or Run.objects.exists()
        or Evaluation.objects.exists()
        or Submission.objects.exists()
    )


def test_request_without_a_solution_is_refused_naming_the_field(client, catalog_tasks):
    response = client.post(URL, {"task": "silu", "agent": "a"}, format="multipart")
    assert response.status_code == 400
    assert response.json() == {"solution": ["No file was submitted."]}
    assert nothing_written()


def test_unknown_task_is_refused_naming_the_field(client, catalog_tasks):
    response = client.post(
        URL, {"task": "nope", "agent": "a", "solution": upload()}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json() == {"task": ["unknown task 'nope'"]}
    assert nothing_written()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (b"", "The submitted file is empty."),
        (b"  \n", "the file is empty"),
        (b"\xff\xfe\x00bad", "not UTF-8 text"),
        (b"x = 1\x00\n", "contains NUL bytes"),
    ],
)
def test_unreadable_solution_files_are_refused(client, catalog_tasks, code, message):
    response = client.post(
        URL, {"task": "silu", "agent": "a", "solution": upload(code)}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json() == {"solution": [message]}
    assert nothing_written()


def test_oversized_solution_is_refused(client, catalog_tasks, settings):
    settings.ARENA_MAX_SOLUTION_BYTES = 1024
    response = client.post(
        URL, {"task": "silu", "agent": "a", "solution": upload(b"#" * 2048)}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json() == {"solution": ["larger than the 1024-byte limit"]}


def test_agent_name_without_letters_is_refused(client, catalog_tasks):
    response = client.post(
        URL, {"task": "silu", "agent": "!!!", "solution": upload()}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json() == {"agent": ["the agent name needs letters or digits"]}


def test_valid_upload_creates_run_evaluation_and_submission(
    client, catalog_tasks, django_capture_on_commit_callbacks, monkeypatch
):
    enqueued = []
    monkeypatch.setattr(
        "arena.services.submission_enqueue", lambda *, submission: enqueued.append(submission.pk)
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
