"""Uploading trajectories through the API, the form and the command; every bad input."""

from __future__ import annotations

import gzip
import io
import json
import stat
import zipfile

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from arena.models import Run
from tests.transcripts.web.conftest import stored_files, zip_folder
from transcripts.models import Trajectory

pytestmark = pytest.mark.django_db

API = "/api/v1/trajectories"
SECRET_KEY_VALUE = "sk-ant-api03-" + "Zx9" * 12
BEARER_VALUE = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.Zm9vYmFyYmF6"


def post(client, token, files: dict[str, tuple[str, bytes]], **fields):
    body = {name: _named(name_and_data) for name, name_and_data in files.items()}
    body.update({k: str(v) for k, v in fields.items()})
    headers = {"HTTP_AUTHORIZATION": f"Token {token}"} if token else {}
    return client.post(API, body, **headers)


def _named(name_and_data: tuple[str, bytes]) -> io.BytesIO:
    name, data = name_and_data
    upload = io.BytesIO(data)
    upload.name = name
    return upload


def zip_of(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# -- the API ---------------------------------------------------------------------------------


def test_api_attaches_a_log_to_a_run_and_sets_its_usage(client, api_token, run, codex_log):
    path, expected = codex_log
    response = post(client, api_token, {"file": (path.name, path.read_bytes())}, run=run.pk)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["run"] == run.pk and body["format"] == "codex-rollout"
    assert body["tool_calls"] == expected.tool_calls
    assert body["file_changes"] == expected.file_changes
    assert body["usage"] == {
        "input_tokens": expected.input_tokens,
        "output_tokens": expected.output_tokens,
        "cache_read_tokens": expected.cache_read_tokens,
        "cache_write_tokens": expected.cache_write_tokens,
    }
    assert body["transcript_url"] == f"/runs/{run.pk}/transcript"
    run.refresh_from_db()
    assert run.trajectory_id == body["id"]
    assert (run.input_tokens, run.output_tokens) == (expected.input_tokens, expected.output_tokens)
    assert run.cache_read_tokens == expected.cache_read_tokens
    assert run.cost_usd == body["cost_usd"] and run.cost_computed is body["cost_computed"]


def test_api_takes_a_zipped_session_folder_with_its_subagents(
    client, api_token, run, claude_folder
):
    folder, expected = claude_folder
    response = post(client, api_token, {"file": ("session.zip", zip_folder(folder))}, run=run.pk)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["format"] == "claude-code-jsonl"
    assert body["subagents"] == expected.subagents >= 1
    assert body["usage"]["output_tokens"] == expected.output_tokens
    trajectory = Trajectory.objects.get(pk=body["id"])
    with trajectory.raw_log.open("rb") as raw:
        names = zipfile.ZipFile(io.BytesIO(gzip.decompress(raw.read()))).namelist()
    assert "sess-demo.jsonl" in names
    assert any(name.endswith(".meta.json") for name in names)


def test_api_takes_a_gzipped_log(client, api_token, run, codex_log):
    path, expected = codex_log
    data = gzip.compress(path.read_bytes())
    response = post(client, api_token, {"file": (path.name + ".gz", data)}, run=run.pk)
    assert response.status_code == 201, response.content
    assert response.json()["tool_calls"] == expected.tool_calls


def test_api_creates_a_run_from_agent_and_task_without_a_submission(
    client, api_token, task, codex_log
):
    path, _ = codex_log
    response = post(
        client, api_token, {"file": (path.name, path.read_bytes())}, agent="Codex", task=task.slug
    )
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["run"])
    assert run.agent.slug == "codex" and run.task == task
    assert run.source == Run.Source.UPLOAD and not run.submissions.exists()


def test_api_needs_a_token(client, run, codex_log):
    path, _ = codex_log
    response = post(client, None, {"file": (path.name, path.read_bytes())}, run=run.pk)
    assert response.status_code == 401
    response = post(client, "wrong", {"file": (path.name, path.read_bytes())}, run=run.pk)
    assert response.status_code == 401
    assert not Trajectory.objects.exists()


def test_api_answers_413_for_a_file_over_the_limit(client, api_token, run, settings, codex_log):
    path, _ = codex_log
    settings.ARENA_TRAJECTORY_MAX_BYTES = 10_000
    response = post(client, api_token, {"file": (path.name, path.read_bytes())}, run=run.pk)
    assert response.status_code == 413
    assert "10,000-byte limit" in json.dumps(response.json())


def test_api_answers_413_for_a_zip_bomb(client, api_token, run, settings):
    settings.ARENA_TRAJECTORY_MAX_BYTES = 100_000
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.jsonl", b"\n" * 5_000_000)
    assert len(buffer.getvalue()) < 100_000
    response = post(client, api_token, {"file": ("bomb.zip", buffer.getvalue())}, run=run.pk)
    assert response.status_code == 413
    bomb = gzip.compress(b" " * 5_000_000)
    response = post(client, api_token, {"file": ("bomb.jsonl.gz", bomb)}, run=run.pk)
    assert response.status_code == 413


def symlink_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("link.jsonl")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("notes.jsonl", b'{"hello": "world"}\n{"x": 1}\n', "not a log in any known format"),
        ("empty.jsonl", b"  \n", "the file is empty"),
        ("broken.zip", b"PK\x03\x04 not really a zip", "not a readable zip file"),
        ("broken.jsonl.gz", b"\x1f\x8b\x08 truncated", "not a readable gzip file"),
        ("up.zip", zip_of({"../../etc/evil.jsonl": b"{}"}), "points outside the folder"),
        ("abs.zip", zip_of({"/etc/evil.jsonl": b"{}"}), "points outside the folder"),
        ("win.zip", zip_of({"..\\evil.jsonl": b"{}"}), "points outside the folder"),
        ("link.zip", symlink_zip(), "is a symbolic link"),
        ("dirs.zip", zip_of({"folder/": b""}), "holds no files"),
    ],
)
def test_api_rejects_bad_files_naming_the_field(client, api_token, run, name, data, message):
    response = post(client, api_token, {"file": (name, data)}, run=run.pk)
    assert response.status_code == 400, response.content
    assert message in json.dumps(response.json())
    assert "file" in json.dumps(response.json())
    assert not Trajectory.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"run": 999_999}, "run", "no run with id 999999"),
        ({"agent": "Codex"}, "task", "required"),
        ({"task": "demo/softmax"}, "agent", "required"),
        ({"agent": "Codex", "task": "no/such-task"}, "task", "unknown task"),
        ({"agent": "!!!", "task": "demo/softmax"}, "agent", "letters or digits"),
        ({"run": 0}, "run", "greater than or equal to 1"),
    ],
)
def test_api_rejects_bad_run_fields(client, api_token, task, codex_log, fields, field, message):
    path, _ = codex_log
    response = post(client, api_token, {"file": (path.name, path.read_bytes())}, **fields)
    assert response.status_code == 400, response.content
    text = json.dumps(response.json())
    assert field in text and message in text
    assert not Trajectory.objects.exists() and not Run.objects.exists()


def test_api_refuses_a_second_log_for_the_same_run(client, api_token, run, codex_log):
    path, _ = codex_log
    assert (
        post(client, api_token, {"file": (path.name, path.read_bytes())}, run=run.pk).status_code
        == 201
    )
    again = post(client, api_token, {"file": (path.name, path.read_bytes())}, run=run.pk)
    assert again.status_code == 400
    assert "already has a trajectory" in json.dumps(again.json())
    assert Trajectory.objects.count() == 1


def test_api_reports_malformed_lines_with_their_numbers(client, api_token, run, codex_log):
    path, expected = codex_log
    lines = path.read_bytes().split(b"\n")
    lines.insert(3, b'{"type": "response_item", "payload": {broken')
    response = post(client, api_token, {"file": (path.name, b"\n".join(lines))}, run=run.pk)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["malformed_lines"] == 1
    assert body["malformed"][0]["line"] == 4
    assert body["tool_calls"] == expected.tool_calls


# -- all or nothing ----------------------------------------------------------------------------


def test_a_failure_after_the_files_are_written_leaves_no_rows_and_no_files(
    client, api_token, task, codex_log, media_root, monkeypatch
):
    from arena import log_uploads

    def fail(run, trajectory):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(log_uploads, "run_spend_set", fail)
    path, _ = codex_log
    with pytest.raises(RuntimeError):
        log_uploads.log_upload(
            user=None,
            data=path.read_bytes(),
            filename=path.name,
            agent_name="Codex",
            task_slug=task.slug,
        )
    assert not Trajectory.objects.exists() and not Run.objects.exists()
    assert stored_files(media_root) == []


def test_a_rejected_upload_creates_no_run(client, api_token, task, media_root):
    response = post(
        client, api_token, {"file": ("x.jsonl", b"not json at all\n")}, agent="A", task=task.slug
    )
    assert response.status_code == 400
    assert not Run.objects.exists() and stored_files(media_root) == []


# -- redaction ---------------------------------------------------------------------------------


def test_secrets_are_redacted_in_the_stored_raw_log_and_on_the_page(
    client, api_token, run, codex_log
):
    path, _ = codex_log
    lines = path.read_text().split("\n")
    leaky = json.loads(lines[2])
    leaky_text = (
        f"export ANTHROPIC_API_KEY={SECRET_KEY_VALUE}\\nAuthorization: Bearer {BEARER_VALUE}"
    )
    lines.insert(
        3,
        json.dumps(
            {
                "timestamp": leaky.get("timestamp"),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": leaky_text}],
                },
            }
        ),
    )
    response = post(client, api_token, {"file": (path.name, "\n".join(lines).encode())}, run=run.pk)
    assert response.status_code == 201, response.content
    trajectory = Trajectory.objects.get(pk=response.json()["id"])
    with trajectory.raw_log.open("rb") as raw:
        stored = gzip.decompress(raw.read()).decode()
    with trajectory.normalized.open("rb") as normalized:
        document = gzip.decompress(normalized.read()).decode()
    page = client.get(reverse("transcript", args=[run.pk])).content.decode()
    for text in (stored, document, page):
        assert SECRET_KEY_VALUE not in text and BEARER_VALUE not in text
    assert "[REDACTED]" in stored and "[REDACTED]" in page


# -- the form ----------------------------------------------------------------------------------


def test_the_upload_form_needs_a_login(client):
    response = client.get("/trajectories/upload/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.fixture
def staff_client(client, django_user_model):
    user = django_user_model.objects.create_user("staff", password="pw-not-used-1", is_staff=True)
    client.force_login(user)
    return client


def test_the_upload_form_imports_and_opens_the_transcript(staff_client, run, codex_log):
    path, _ = codex_log
    page = staff_client.get("/trajectories/upload/")
    assert page.status_code == 200 and b'enctype="multipart/form-data"' in page.content
    response = staff_client.post(
        "/trajectories/upload/", {"file": _named((path.name, path.read_bytes())), "run": run.pk}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run.pk}/transcript"
    run.refresh_from_db()
    assert run.trajectory is not None


def test_the_upload_form_shows_errors_beside_their_field(staff_client, run, settings):
    response = staff_client.post(
        "/trajectories/upload/", {"file": _named(("x.zip", b"PK\x03\x04 junk")), "run": run.pk}
    )
    assert response.status_code == 400
    assert (
        b'id="errors-file"' in response.content and b"not a readable zip file" in response.content
    )
    response = staff_client.post("/trajectories/upload/", {"file": _named(("x.jsonl", b"{}"))})
    assert (
        response.status_code == 400 and b"Give a run id, or an agent and a task" in response.content
    )
    settings.ARENA_TRAJECTORY_MAX_BYTES = 1024
    big = _named(("big.jsonl", b"{}\n" * 2000))
    response = staff_client.post("/trajectories/upload/", {"file": big, "run": run.pk})
    assert response.status_code == 413 and b"1,024-byte limit" in response.content
    assert not Trajectory.objects.exists()


# -- the command -------------------------------------------------------------------------------


def test_the_command_imports_a_folder_for_a_new_run(task, claude_folder):
    folder, expected = claude_folder
    out = io.StringIO()
    call_command("upload_trajectory", str(folder), agent="Claude Code", task=task.slug, stdout=out)
    trajectory = Trajectory.objects.get()
    assert f"trajectory {trajectory.pk} for run {trajectory.run.pk}" in out.getvalue()
    assert trajectory.subagent_count == expected.subagents
    assert trajectory.run.output_tokens == expected.output_tokens


def test_the_command_reports_bad_input_naming_the_field(run, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    with pytest.raises(CommandError, match=r"file: .*not a log in any known format"):
        call_command("upload_trajectory", str(bad), run=run.pk)
    with pytest.raises(CommandError, match="give --agent NAME and --task SLUG, or --run N"):
        call_command("upload_trajectory", str(bad))
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("upload_trajectory", str(tmp_path / "missing"), run=run.pk)


def test_a_long_hostile_file_name_is_stored_under_a_safe_name(client, api_token, run, codex_log):
    path, _ = codex_log
    name = "../../" + "<img src=x onerror=alert(1)>" * 10 + "x" * 200 + ".jsonl"
    response = post(client, api_token, {"file": (name, path.read_bytes())}, run=run.pk)
    assert response.status_code == 201, response.content
    trajectory = Trajectory.objects.get(pk=response.json()["id"])
    assert len(trajectory.raw_log.name) <= 100 and ".." not in trajectory.raw_log.name
    assert "<" not in trajectory.filename and "/" not in trajectory.filename


def test_a_folder_import_leaves_out_links_to_files_elsewhere(run, claude_folder, tmp_path):
    from arena.run_logs import run_trajectory_attach

    folder, expected = claude_folder
    outside = tmp_path / "host-secret.jsonl"
    outside.write_text('{"type": "user", "uuid": "x", "sessionId": "s"}\n')
    (folder / "linked.jsonl").symlink_to(outside)
    trajectory = run_trajectory_attach(run=run, path=folder)
    assert trajectory.filename == "claude.zip"
    assert trajectory.subagent_count == expected.subagents
    with trajectory.raw_log.open("rb") as raw:
        names = zipfile.ZipFile(io.BytesIO(gzip.decompress(raw.read()))).namelist()
    assert "linked.jsonl" not in names and "sess-demo.jsonl" in names
