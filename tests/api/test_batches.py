"""POST /api/v1/batches: many solutions of one agent graded as uploads, resumable under a key,
with progress and one JSON line per result."""

import json

import pytest

from arena.models import Batch, Run, Submission
from tests.api.factories import client_with_token, error_of, token_create
from tests.conftest import REPO
from tests.waiting import wait_for

URL = "/api/v1/batches"
SOLUTIONS = REPO / "tests" / "evaluator" / "solutions"


@pytest.fixture
def enqueued(monkeypatch):
    sent: list[int] = []
    monkeypatch.setattr(
        "arena.lifecycle.submission_enqueue", lambda *, submission: sent.append(submission.pk)
    )
    return sent


def items(count: int, *, task: str = "silu", start: int = 0) -> list[dict]:
    return [
        {"task": task, "name": f"s{i}.py", "code": f"class ModelNew: pass  # {i}\n"}
        for i in range(start, start + count)
    ]


def body_of(response) -> bytes:
    return b"".join(response.streaming_content)


def post(client, body: dict, capture):
    with capture(execute=True):
        return client.post(URL, body, format="json")


def test_a_batch_makes_one_graded_upload_per_solution_and_reports_progress(
    catalog_tasks, enqueued, django_capture_on_commit_callbacks
):
    client = client_with_token(token_create())
    response = post(
        client,
        {"agent": "Batcher", "key": "sweep-1", "submissions": items(3)},
        django_capture_on_commit_callbacks,
    )
    assert response.status_code == 201, response.content
    body = response.json()
    batch = Batch.objects.get(pk=body["id"])
    submissions = list(Submission.objects.filter(batch=batch).order_by("pk"))
    assert enqueued == [s.pk for s in submissions]
    assert (body["created"], body["already"], body["total"], body["finished"]) == (3, 0, 3, 0)
    assert body["progress_url"] == f"/api/v1/batches/{batch.pk}"
    assert [s.evaluation.solution_name for s in submissions] == ["s0.py", "s1.py", "s2.py"]
    assert {s.run.agent.name for s in submissions} == {"Batcher"}
    assert {s.run.source for s in submissions} == {Run.Source.UPLOAD}

    progress = client.get(body["progress_url"]).json()
    assert progress["statuses"] == {"queued": 3}
    assert (progress["total"], progress["finished"], progress["done"]) == (3, 0, False)
    assert client.get(body["results_url"]).json()["results"] == []  # nothing finished yet
    lines = client.get(body["results_url"], HTTP_ACCEPT="application/x-ndjson")
    assert body_of(lines) == b""
    assert body_of(client.get(body["results_url"] + "?format=ndjson")) == b""


def test_the_same_key_again_adds_only_what_the_batch_lacks(
    catalog_tasks, enqueued, django_capture_on_commit_callbacks
):
    client = client_with_token(token_create())
    first = post(
        client,
        {"agent": "Resumer", "key": "k", "submissions": items(2)},
        django_capture_on_commit_callbacks,
    ).json()
    # The client died after the first request; it sends everything again, and one more.
    again = post(
        client,
        {"agent": "Resumer", "key": "k", "submissions": items(3)},
        django_capture_on_commit_callbacks,
    )
    assert again.status_code == 201
    body = again.json()
    assert (body["id"], body["created"], body["already"], body["total"]) == (first["id"], 1, 2, 3)
    # Nothing new: 200, and nothing enqueued.
    before = len(enqueued)
    same = post(
        client,
        {"agent": "Resumer", "key": "k", "submissions": items(3)},
        django_capture_on_commit_callbacks,
    )
    assert (same.status_code, same.json()["created"], len(enqueued)) == (200, 0, before)
    # Without a key, a batch of its own.
    fresh = post(
        client, {"agent": "Resumer", "submissions": items(1)}, django_capture_on_commit_callbacks
    )
    assert fresh.json()["id"] != first["id"]
    # Another agent under the same key is refused.
    other = post(
        client,
        {"agent": "Someone Else", "key": "k", "submissions": items(1)},
        django_capture_on_commit_callbacks,
    )
    assert other.status_code == 403
    assert "the batch 'k' is for the agent 'Resumer'" in error_of(other)["message"]


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([*items(1), {"task": "no-such-task", "code": "x = 1\n"}], "unknown task 'no-such-task'"),
        ([*items(1), {"task": "silu", "code": "   "}], "the solution is empty"),
        ([*items(1), {"task": "silu", "name": "../..", "code": "x = 1\n"}], "needs a file name"),
        ([*items(1), {"task": "silu"}], "required"),
    ],
)
def test_one_bad_entry_refuses_the_whole_batch_naming_it(
    catalog_tasks, enqueued, entries, expected
):
    client = client_with_token(token_create())
    response = client.post(URL, {"agent": "Careful", "submissions": entries}, format="json")
    assert response.status_code == 400, response.content
    fields = error_of(response)["fields"]
    assert all(name.startswith("submissions.1") for name in fields), fields
    assert expected in json.dumps(fields)
    assert not Batch.objects.exists() and not Run.objects.exists() and enqueued == []


def test_limits_and_accounts(catalog_tasks, enqueued):
    client = client_with_token(token_create())
    too_many = client.post(URL, {"agent": "Big", "submissions": items(501)}, format="json")
    assert too_many.status_code == 400
    assert "500" in json.dumps(error_of(too_many))
    empty = client.post(URL, {"agent": "Big", "submissions": []}, format="json")
    assert empty.status_code == 400
    anonymous = client_with_token(None).post(
        URL, {"agent": "Big", "submissions": items(1)}, format="json"
    )
    assert anonymous.status_code == 401
    client_with_token(token_create(username="owner")).post(
        URL, {"agent": "Owned", "submissions": items(1)}, format="json"
    )
    stolen = client.post(URL, {"agent": "Owned", "submissions": items(1)}, format="json")
    assert stolen.status_code == 403
    assert Batch.objects.count() == 1 and Run.objects.count() == 1
    names = client.post(
        URL,
        {
            "agent": "Paths",
            "submissions": [{"task": "silu", "name": "/etc/../level1/a.py", "code": "x=1\n"}],
        },
        format="json",
    )
    assert names.status_code == 201
    assert (
        Submission.objects.get(batch_id=names.json()["id"]).evaluation.solution_name
        == "etc/level1/a.py"
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_results_are_one_json_line_per_graded_solution(celery_worker, catalog_tasks):
    client = client_with_token(token_create(username="batch-worker"))
    entries = [
        {"task": "silu", "name": name, "code": (SOLUTIONS / name).read_text()}
        for name in ("silu_triton.py", "silu_wrong_relu.py")
    ]
    response = client.post(URL, {"agent": "Batch Grader", "submissions": entries}, format="json")
    assert response.status_code == 201, response.content
    progress_url = response.json()["progress_url"]
    wait_for(
        lambda: client.get(progress_url).json()["done"],
        timeout_s=300,
        what="the batch to be graded",
    )
    assert client.get(progress_url).json()["statuses"] == {"failed": 1, "passed": 1}
    results = client.get(response.json()["results_url"], HTTP_ACCEPT="application/x-ndjson")
    assert results["Content-Type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in body_of(results).decode().splitlines()]
    assert client.get(response.json()["results_url"]).json()["results"] == lines
    assert [(line["solution"], line["status"]) for line in lines] == [
        ("silu_triton.py", "passed"),
        ("silu_wrong_relu.py", "failed"),
    ]
    # Passed with nothing failing, but graded on the CPU: untimed, so unranked and unrewarded.
    assert (lines[0]["reason"], lines[0]["ranked"], lines[0]["reward"]) == ("", False, None)
    assert Submission.objects.get(pk=lines[0]["submission"]).evaluation.device == "cpu"
    assert lines[1]["reason"].startswith("incorrect on shape")
    assert all(line["run_url"].rstrip("/").endswith(f"/{line['run']}") for line in lines)
