"""What an upload makes of its log: the task chosen from a list, an agent described by the log
it arrived with, and a log with no events refused by the API, the form and the command alike."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from arena.agents.registry import ADAPTERS
from arena.models import Agent, Run
from arena.run_logs import HARNESS_BY_FORMAT, UPLOAD_ONLY_HARNESSES
from arena.services import agent_get_or_create
from tests.api.factories import error_of
from tests.transcripts.web.conftest import stored_files, zip_folder
from tests.transcripts.web.test_upload import post
from transcript_formats.detect import _parsers
from transcripts.models import Trajectory

pytestmark = pytest.mark.django_db

FORM = "/trajectories/upload/"
# A Claude Code stream-json run that stopped after its first line: 117 bytes, no events.
EMPTY_RUN = (
    b'{"type":"system","subtype":"init","session_id":"x","tools":[],'
    b'"model":"claude-sonnet-4","claude_code_version":"2.0"}\n'
)
EMPTY_REFUSAL = "empty.jsonl: read as claude-code-stream-json, but it holds no messages"


@pytest.fixture
def staff_client(client, django_user_model):
    user = django_user_model.objects.create_user("staff", password="pw-not-used-1", is_staff=True)
    client.force_login(user)
    return client


@pytest.fixture
def tasks(task):
    from tasks.models import Task

    def make(slug: str, suite: str, *, active: bool = True) -> Task:
        return Task.objects.create(
            slug=slug,
            title=slug.rsplit("/", 1)[-1].title(),
            category="torch2cuda",
            suite=suite,
            dtype="fp32",
            regime="compute",
            folder=slug,
            version_hash="0" * 64,
            is_active=active,
        )

    return [task, make("level1/matmul", "kernelbench"), make("old/gone", "demo", active=False)]


def named(name: str, data: bytes) -> io.BytesIO:
    upload = io.BytesIO(data)
    upload.name = name
    return upload


def nothing_stored(media_root) -> bool:
    return (
        not Trajectory.objects.exists()
        and not Run.objects.exists()
        and stored_files(media_root) == []
    )


# -- the task chooser --------------------------------------------------------------------------


def test_the_form_offers_the_active_tasks_grouped_by_suite(staff_client, tasks):
    html = staff_client.get(FORM).content.decode()
    select = re.search(r'<select name="task"[^>]*>(.*?)</select>', html, re.S)
    assert select is not None, html
    groups = re.findall(r'<optgroup label="([^"]*)">(.*?)</optgroup>', select.group(1), re.S)
    assert [(label, re.findall(r'value="([^"]*)"', options)) for label, options in groups] == [
        ("demo", ["demo/softmax"]),
        ("kernelbench", ["level1/matmul"]),
    ]
    assert "demo/softmax · Softmax" in select.group(1)
    assert 'value="old/gone"' not in html


KERNEL = b"import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n"


def test_the_form_makes_a_run_of_the_chosen_task(staff_client, tasks, codex_log):
    path, _ = codex_log
    body = {
        "file": named(path.name, path.read_bytes()),
        "solution": named("solution.py", KERNEL),
        "agent": "Codex",
        "task": "level1/matmul",
    }
    response = staff_client.post(FORM, body)
    assert response.status_code == 302, response.content.decode()
    run = Run.objects.get()
    assert run.task.slug == "level1/matmul" and run.agent.slug == "codex"
    assert response["Location"] == f"/runs/{run.pk}/"


@pytest.mark.parametrize("slug", ["no/such-task", "old/gone"])
def test_the_form_refuses_a_task_that_is_not_in_the_list(
    staff_client, tasks, codex_log, media_root, slug
):
    path, _ = codex_log
    body = {"file": named(path.name, path.read_bytes()), "agent": "Codex", "task": slug}
    response = staff_client.post(FORM, body)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="errors-task"' in html
    assert f"unknown task &#x27;{slug}&#x27;: choose one of the list" in html
    assert nothing_stored(media_root)


# -- the agent described by its log ------------------------------------------------------------


def test_the_api_describes_a_new_agent_from_its_codex_log(client, api_token, task, codex_log):
    path, _ = codex_log
    response = post(
        client, api_token, {"file": (path.name, path.read_bytes())}, agent="Codex", task=task.slug
    )
    assert response.status_code == 201, response.content
    agent = Run.objects.get(pk=response.json()["run"]).agent
    assert (agent.model, agent.harness, agent.cli_version) == ("gpt-5-codex", "codex", "0.58.0")


def test_the_form_describes_a_new_agent_from_its_claude_code_folder(
    staff_client, task, claude_folder
):
    folder, _ = claude_folder
    upload = named("session.zip", zip_folder(folder))
    kernel = named("solution.py", KERNEL)
    body = {"file": upload, "solution": kernel, "agent": "My Claude", "task": task.slug}
    response = staff_client.post(FORM, body)
    assert response.status_code == 302, response.content.decode()
    agent = Agent.objects.get(slug="my-claude")
    assert (agent.model, agent.harness, agent.cli_version) == (
        "claude-sonnet-4-5-20250929",
        "claude-code",
        "2.1.14",
    )


def test_the_command_describes_a_new_agent_from_its_log(task, codex_log):
    path, _ = codex_log
    call_command(
        "upload_trajectory", str(path), agent="Codex CLI", task=task.slug, stdout=io.StringIO()
    )
    agent = Agent.objects.get(slug="codex-cli")
    assert (agent.model, agent.harness, agent.cli_version) == ("gpt-5-codex", "codex", "0.58.0")


def test_an_existing_agent_keeps_what_it_has(client, api_token, uploader, task, codex_log):
    path, _ = codex_log
    # Its fields choose what the arena runs: a log changes neither the set nor the blank ones.
    agent_get_or_create(
        name="Codex",
        owner=uploader,
        defaults={"model": "o3", "harness": "command", "cli_version": ""},
    )
    response = post(
        client, api_token, {"file": (path.name, path.read_bytes())}, agent="Codex", task=task.slug
    )
    assert response.status_code == 201, response.content
    agent = Agent.objects.get(slug="codex")
    assert (agent.model, agent.harness, agent.cli_version) == ("o3", "command", "")


def test_a_chat_message_list_names_a_model_but_no_harness(client, api_token, task):
    messages = [
        {"role": "user", "content": "write a softmax kernel"},
        {"role": "assistant", "content": "here it is", "model": "gpt-4.1"},
    ]
    data = json.dumps({"model": "gpt-4.1", "messages": messages}).encode()
    response = post(client, api_token, {"file": ("chat.json", data)}, agent="Chat", task=task.slug)
    assert response.status_code == 201, response.content
    agent = Agent.objects.get(slug="chat")
    assert (agent.model, agent.harness, agent.cli_version) == ("gpt-4.1", "", "")


def test_every_cli_log_format_names_an_adapter_of_the_arena():
    cli_formats = set(_parsers()) - {"openai-chat-messages", "anthropic-messages"}
    assert set(HARNESS_BY_FORMAT) == cli_formats
    # Each harness is the arena's adapter of that CLI, or one declared upload-only.
    assert set(HARNESS_BY_FORMAT.values()) <= set(ADAPTERS) | UPLOAD_ONLY_HARNESSES
    assert not UPLOAD_ONLY_HARNESSES & set(ADAPTERS)


# -- a log with no events ----------------------------------------------------------------------


def test_the_api_refuses_a_log_with_no_events_naming_its_format(
    client, api_token, task, media_root
):
    assert len(EMPTY_RUN) == 117
    response = post(
        client, api_token, {"file": ("empty.jsonl", EMPTY_RUN)}, agent="Claude", task=task.slug
    )
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid"
    assert error["message"].startswith(f"file: {EMPTY_REFUSAL}")
    assert list(error["fields"]) == ["file"]
    assert nothing_stored(media_root) and not Agent.objects.exists()


def test_the_api_refuses_a_log_with_no_events_for_an_existing_run(
    client, api_token, run, media_root
):
    response = post(client, api_token, {"file": ("empty.jsonl", EMPTY_RUN)}, run=run.pk)
    assert response.status_code == 400
    assert EMPTY_REFUSAL in error_of(response)["fields"]["file"][0]
    run.refresh_from_db()
    assert run.trajectory is None and not Trajectory.objects.exists()
    assert stored_files(media_root) == []


def test_the_form_refuses_a_log_with_no_events_beside_the_file(staff_client, task, media_root):
    body = {"file": named("empty.jsonl", EMPTY_RUN), "agent": "Claude", "task": task.slug}
    response = staff_client.post(FORM, body)
    assert response.status_code == 400
    html = response.content.decode()
    errors = re.search(r'<ul class="errorlist" id="errors-file">(.*?)</ul>', html, re.S)
    assert errors is not None and EMPTY_REFUSAL in errors.group(1)
    assert nothing_stored(media_root) and not Agent.objects.exists()


def test_the_command_refuses_a_log_with_no_events(task, tmp_path, media_root):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(EMPTY_RUN)
    with pytest.raises(CommandError, match=f"^file: {re.escape(EMPTY_REFUSAL)}"):
        call_command("upload_trajectory", str(path), agent="Claude", task=task.slug)
    assert nothing_stored(media_root) and not Agent.objects.exists()
