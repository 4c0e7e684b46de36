"""An uploaded log with its kernel is a run graded like any other: the kernel attached or taken
from the log (with the file, turn and tool it came from), the run's harness, model and spend
read from the log, an agent tied to its harness; a log with no kernel is a transcript only;
every bad input refused with its field named and nothing stored."""

from __future__ import annotations

import io
import re

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from arena.models import Agent, Run, Submission
from arena.services import agent_get_or_create
from evaluator.models import Evaluation
from tests.api.factories import error_of
from tests.transcripts.web.agent_logs import SILU_EDITED, SILU_KERNEL, claude_code_log, codex_log
from tests.transcripts.web.conftest import stored_files
from tests.transcripts.web.test_upload import post
from transcripts.models import Trajectory
from transcripts.spool import work_root

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _write_budget_unspent():
    # The account's write budget is counted in the cache, across tests: these upload a lot.
    cache.clear()
    yield
    cache.clear()


CODEX_NAME = "rollout-2026-01-05T11-00-00-0199-codex.jsonl"


@pytest.fixture
def silu(db):
    from tasks.models import Task

    return Task.objects.create(
        slug="silu",
        title="SiLU",
        category="torch2triton",
        suite="core",
        dtype="fp32",
        regime="memory",
        folder="core/silu",
        version_hash="1" * 64,
    )


def nothing_stored(media_root) -> bool:
    left = list(work_root().glob("*")) if work_root().is_dir() else []
    return (
        not Trajectory.objects.exists()
        and not Run.objects.exists()
        and not Evaluation.objects.exists()
        and stored_files(media_root) == []
        and left == []
    )


def upload_claude(client, token, *, kernel: bytes | None = SILU_EDITED.encode(), **fields):
    files = {"file": ("session.jsonl", fields.pop("log", claude_code_log()))}
    if kernel is not None:
        files["solution"] = ("solution.py", kernel)
    return post(client, token, files, **{"agent": "Claude Opus", "task": "silu", **fields})


def upload_codex(client, token, **fields):
    files = {"file": (CODEX_NAME, fields.pop("log", codex_log()))}
    return post(client, token, files, **{"agent": "Codex", "task": "silu", **fields})


# -- graded like any other -------------------------------------------------------------------


def test_a_log_with_its_kernel_is_a_run_sent_to_grading_once_it_commits(
    client, api_token, silu, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as sent:
        response = upload_claude(client, api_token)
    assert response.status_code == 201, response.content
    body = response.json()
    run = Run.objects.get(pk=body["run"])
    submission = Submission.objects.get(pk=body["submission"])
    assert submission.run == run and run.status == Run.Status.EVALUATING
    assert submission.evaluation.solution_code == SILU_EDITED
    assert submission.evaluation.status == Evaluation.Status.QUEUED
    assert len(sent) == 1  # the build stage, then the GPU queue
    assert body["transcript_only"] is False and body["log_names_task"] is True
    assert body["kernel"]["source"] == "attached" and body["kernel"]["name"] == "solution.py"
    assert body["run_url"] == f"/runs/{run.pk}/"
    # What ran and what it cost are the log's.
    assert (run.harness, run.model, run.cli_version) == (
        "claude-code",
        "claude-sonnet-4-5",
        "2.0.14",
    )
    assert (run.input_tokens, run.output_tokens, run.cache_read_tokens) == (2400, 1600, 6000)
    assert run.cost_usd == pytest.approx(0.033) and run.trajectory_id == body["id"]


def test_a_kernel_left_out_is_the_last_one_the_codex_log_wrote(client, api_token, silu):
    response = upload_codex(client, api_token)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["kernel"] == {
        "source": "log",
        "name": "solution.py",
        "sha256": Evaluation.objects.get().solution_sha256,
        "path": "solution.py",
        "turn": 2,
        "tool": "apply_patch",
        "thread": "main",
    }
    assert Evaluation.objects.get().solution_code == SILU_EDITED
    assert (body["harness"], body["model"]) == ("codex", "gpt-5-codex")


def test_the_replay_starts_from_the_task_starter(client, api_token, settings, tmp_path):
    from tasks.models import Task

    starter = tmp_path / "catalog" / "core" / "tt-silu" / "starter"
    starter.mkdir(parents=True)
    (starter / "solution.py").write_text(SILU_KERNEL)
    settings.ARENA_CATALOG_DIR = tmp_path / "catalog"
    Task.objects.create(
        slug="tt-silu",
        title="SiLU",
        category="triton2triton",
        suite="core",
        dtype="fp32",
        regime="memory",
        folder="core/tt-silu",
        version_hash="2" * 64,
    )
    log = codex_log(from_starter=True, prompt="tt-silu: copy the starter and tune it")
    response = upload_codex(client, api_token, log=log, task="tt-silu")
    assert response.status_code == 201, response.content
    assert response.json()["kernel"]["turn"] == 2
    assert Evaluation.objects.get().solution_code == SILU_EDITED


def test_a_kernel_named_in_the_log_is_taken_from_it(client, api_token, silu):
    response = upload_claude(client, api_token, kernel=None, solution_path="solution.py")
    assert response.status_code == 201, response.content
    kernel = response.json()["kernel"]
    assert (kernel["source"], kernel["path"], kernel["tool"]) == (
        "log",
        "/workspace/solution.py",
        "Edit",
    )


def test_the_command_takes_the_kernel_from_the_log_or_a_file(silu, tmp_path):
    log = tmp_path / "session.jsonl"
    log.write_bytes(claude_code_log())
    out = io.StringIO()
    call_command("upload_trajectory", str(log), agent="Claude", task="silu", stdout=out)
    assert "kernel written at turn 2 of the log by Edit (/workspace/solution.py)" in out.getvalue()
    kernel = tmp_path / "mine.py"
    kernel.write_text(SILU_KERNEL)
    other = tmp_path / "codex.jsonl"
    other.write_bytes(codex_log())
    out = io.StringIO()
    call_command(
        "upload_trajectory", str(other), agent="Codex", task="silu", solution=kernel, stdout=out
    )
    assert "kernel attached (mine.py)" in out.getvalue()
    assert Submission.objects.count() == 2


# -- a transcript only -----------------------------------------------------------------------


def test_a_log_that_writes_no_kernel_is_a_transcript_only(client, api_token, silu):
    log = claude_code_log(kernel="notes\n").replace(b"solution.py", b"NOTES.md")
    response = upload_claude(client, api_token, kernel=None, log=log)
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["transcript_only"], body["submission"], body["kernel"]) == (True, None, None)
    run = Run.objects.get()
    assert run.status == Run.Status.DONE and not run.submissions.exists()
    page = client.get(f"/runs/{run.pk}/").content.decode()
    main = page[page.index("<main") : page.index("</main>")]  # the footer speaks of all runs
    assert "transcript only" in main and "graded again" not in main
    assert "none: a transcript only" in main
    transcript = client.get(f"/runs/{run.pk}/transcript").content.decode()
    assert "transcript only" in transcript and "not graded" not in transcript
    api = client.get(f"/api/v1/runs/{run.pk}").json()
    assert api["verdict"] == "transcript_only" and api["kernel"] is None


def test_transcript_only_stores_a_log_whose_kernel_is_left_out(client, api_token, silu):
    response = upload_claude(client, api_token, kernel=None, transcript_only="true")
    assert response.status_code == 201, response.content
    assert response.json()["transcript_only"] is True and not Submission.objects.exists()


def test_the_run_page_says_where_the_kernel_came_from(client, api_token, silu):
    run_id = upload_codex(client, api_token).json()["run"]
    page = client.get(f"/runs/{run_id}/").content.decode()
    provenance = re.search(r'id="kernel-provenance">(.*?)</dd>', page, re.S)
    assert provenance is not None
    text = re.sub(r"<[^>]+>", "", provenance.group(1))
    assert "written at turn 2 of the log by apply_patch (solution.py)" in " ".join(text.split())
    assert f'href="/runs/{run_id}/transcript#t-main-2"' in provenance.group(1)
    assert "log-never-names-task" not in page
    attached = upload_claude(client, api_token).json()["run"]
    page = client.get(f"/runs/{attached}/").content.decode()
    assert "attached beside the log by its uploader" in page


def test_a_log_that_never_names_the_task_is_said_so(client, api_token, silu):
    kernel = SILU_KERNEL.split("\n", 1)[1]  # its docstring names silu
    log = claude_code_log(kernel=kernel, prompt="Make the landing page's hero banner responsive.")
    response = upload_claude(client, api_token, log=log)
    assert response.status_code == 201 and response.json()["log_names_task"] is False
    page = client.get(response.json()["run_url"]).content.decode()
    assert 'id="log-never-names-task"' in page and "never names this task" in page


# -- the agent: its owner, its harness, each run's model --------------------------------------


def test_a_new_agent_takes_the_log_harness_and_the_declared_model(client, api_token, silu):
    response = upload_claude(client, api_token, model="claude-opus-4-1")
    assert response.status_code == 201, response.content
    agent = Agent.objects.get()
    assert (agent.harness, agent.model) == ("claude-code", "claude-opus-4-1")
    assert agent.owner.username == "uploader"
    # The run says what its log ran; another model under the same agent is accepted.
    log = claude_code_log(model="claude-sonnet-4", session="sess-2")
    again = upload_claude(client, api_token, log=log)
    assert again.status_code == 201, again.content
    models = set(Run.objects.values_list("model", flat=True))
    assert models == {"claude-sonnet-4-5", "claude-sonnet-4"}
    page = client.get(f"/agents/{agent.slug}/").content.decode()
    assert "<th>Model</th>" in page and "claude-sonnet-4</td>" in page


def test_a_log_of_another_harness_is_refused_naming_a_second_agent(
    client, api_token, silu, media_root
):
    assert upload_claude(client, api_token).status_code == 201
    runs, trajectories = Run.objects.count(), Trajectory.objects.count()
    response = upload_codex(client, api_token, agent="Claude Opus")
    assert response.status_code == 400
    error = error_of(response)
    assert error["message"] == (
        "agent: this log was written by codex; the agent 'Claude Opus' is a claude-code agent: "
        "make a second agent for it, e.g. 'Claude Opus (codex)'"
    )
    assert (Run.objects.count(), Trajectory.objects.count()) == (runs, trajectories)
    assert len(stored_files(media_root)) == 2  # the first upload's two files


def test_someone_elses_agent_is_refused(client, api_token, silu, django_user_model):
    other = django_user_model.objects.create_user("other", password="pw-unused-9")
    agent_get_or_create(name="Claude Opus", owner=other)
    response = upload_claude(client, api_token)
    assert response.status_code == 403
    assert not Run.objects.exists()


# -- bad input: a clear error, nothing stored -------------------------------------------------


@pytest.mark.parametrize(
    ("kernel", "why"),
    [
        (b"__global__ void silu(float* x) { }\n", "solution: solution.py: not Python (line 1: "),
        (b"import torch\n\n\nclass Model(torch.nn.Module):\n    pass\n", "defines no ModelNew"),
    ],
)
def test_an_attached_kernel_that_cannot_be_graded_is_refused(
    client, api_token, silu, media_root, kernel, why
):
    response = upload_claude(client, api_token, kernel=kernel)
    assert response.status_code == 400
    assert why in error_of(response)["message"]
    assert error_of(response)["fields"].keys() == {"solution"}
    assert nothing_stored(media_root)


def test_a_kernel_over_the_size_cap_is_refused(client, api_token, silu, media_root, settings):
    settings.ARENA_MAX_SOLUTION_BYTES = 1024
    response = upload_claude(client, api_token, kernel=SILU_KERNEL.encode() + b"#" * 1024)
    assert response.status_code == 400
    assert "larger than the 1024-byte limit" in error_of(response)["message"]
    assert nothing_stored(media_root)


def test_a_kernel_the_log_wrote_that_cannot_be_graded_is_refused(
    client, api_token, silu, media_root
):
    log = claude_code_log(kernel="import torch\n# draft\n")
    response = upload_claude(client, api_token, kernel=None, log=log)
    assert response.status_code == 400
    message = error_of(response)["message"]
    assert message.startswith(
        "solution: /workspace/solution.py as the log leaves it (turn 2): defines no ModelNew"
    )
    assert "attach the kernel, or upload the log as a transcript only" in message
    assert nothing_stored(media_root)


def test_an_unknown_task_is_refused(client, api_token, silu, media_root):
    response = upload_claude(client, api_token, task="no-such-task")
    assert response.status_code == 400
    assert error_of(response)["message"] == "task: unknown task 'no-such-task'"
    assert nothing_stored(media_root)


def test_a_kernel_named_in_the_log_that_it_never_wrote_is_refused(
    client, api_token, silu, media_root
):
    response = upload_claude(client, api_token, kernel=None, solution_path="kernel.py")
    assert response.status_code == 400
    assert (
        error_of(response)["message"] == "solution_path: kernel.py: the log never names this file"
    )
    response = upload_claude(client, api_token, kernel=None, solution_path="silu")
    assert error_of(response)["message"].endswith("the log names this file but never writes it")
    assert nothing_stored(media_root)


def test_a_second_upload_of_the_same_log_is_refused_naming_the_run(
    client, api_token, silu, media_root
):
    first = upload_claude(client, api_token)
    assert first.status_code == 201
    run_id = first.json()["run"]
    again = upload_claude(client, api_token, agent="Another Name")
    assert again.status_code == 409
    error = error_of(again)
    assert error["code"] == "duplicate"
    assert error["message"] == (
        f"file: this log was uploaded already: run #{run_id} (/runs/{run_id}/)"
    )
    assert Run.objects.count() == 1 and not Agent.objects.filter(name="Another Name").exists()
    assert len(stored_files(media_root)) == 2


def test_the_command_refuses_a_kernel_that_is_not_python(silu, tmp_path, media_root):
    log = tmp_path / "session.jsonl"
    log.write_bytes(claude_code_log())
    kernel = tmp_path / "kernel.cu"
    kernel.write_text("__global__ void k() {}\n")
    with pytest.raises(CommandError, match=r"^solution: kernel.cu: not Python"):
        call_command("upload_trajectory", str(log), agent="C", task="silu", solution=kernel)
    assert nothing_stored(media_root)


def test_a_graded_upload_brings_its_cost_to_the_board_and_the_cost_plot(client, api_token, silu):
    from django.utils import timezone

    from arena.lifecycle import run_finish
    from arena.run_scores import leaderboard_record
    from leaderboard import figures
    from leaderboard.selectors import ScoreFilters, leaderboard_rows
    from tests.leaderboard.factories import H200, grader_result

    submission = Submission.objects.get(pk=upload_claude(client, api_token).json()["submission"])
    # As a GPU worker stores its verdict.
    Evaluation.objects.filter(pk=submission.evaluation_id).update(
        status=Evaluation.Status.PASSED,
        device="cuda",
        ranked=True,
        reward=1.0,
        result=grader_result(speedup=2.0, gpu=H200),
        finished_at=timezone.now(),
    )
    run_finish(run_id=submission.run_id)
    score = leaderboard_record(submission_id=submission.pk)
    assert score is not None and score.cost_usd == pytest.approx(0.033)
    assert score.tokens == 2400 + 1600 + 6000
    (row,) = leaderboard_rows(filters=ScoreFilters(gpu=H200))
    assert row.score.cost_per_run_usd == pytest.approx(0.033)
    assert figures.cost_vs_score([(row.agent.name, row.score)]) is not None
