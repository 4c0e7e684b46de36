"""Uploads within caps: bombs refused by the API and the command with nothing written, and
uploads read in chunks, never whole before they are checked."""

from __future__ import annotations

import gzip
import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command

from arena.models import Run
from bench.archive_bombs import gzip_bomb, with_declared_size, write_zip_bomb, zip_bomb
from tests.transcripts.web.conftest import stored_files
from transcript_formats.archives import CHUNK_BYTES
from transcripts.models import Trajectory
from transcripts.services import TrajectoryTooLarge, trajectory_prepare

pytestmark = pytest.mark.django_db

API = "/api/v1/trajectories"


def post(client, token: str, name: str, data: bytes, **fields):
    upload = io.BytesIO(data)
    upload.name = name
    body = {"file": upload, **{k: str(v) for k, v in fields.items()}}
    return client.post(API, body, HTTP_AUTHORIZATION=f"Token {token}")


def assert_nothing_written(media_root) -> None:
    assert not Trajectory.objects.exists()
    assert not Run.objects.exists()
    assert stored_files(media_root) == []


def test_api_refuses_a_zip_bomb_naming_the_entry_and_writes_nothing(
    client, api_token, task, media_root
):
    bomb = zip_bomb(expanded_bytes=50 << 20, member="a.jsonl")
    response = post(client, api_token, "bomb.zip", bomb, agent="Codex", task=task.slug)
    assert response.status_code == 413, response.content
    error = response.json()["error"]
    assert error["code"] == "too_large"
    [message] = error["fields"]["file"]
    assert message.startswith("bomb.zip: entry 'a.jsonl' says it expands to more than 100 times")
    assert_nothing_written(media_root)


def test_api_refuses_a_gzip_bomb_as_it_expands_and_writes_nothing(
    client, api_token, task, media_root
):
    response = post(
        client,
        api_token,
        "run.jsonl.gz",
        gzip_bomb(expanded_bytes=50 << 20),
        agent="Codex",
        task=task.slug,
    )
    assert response.status_code == 413, response.content
    assert "entry 'run.jsonl' expands to more than 100 times" in json.dumps(response.json())
    assert_nothing_written(media_root)


def test_api_refuses_a_zip_whose_headers_understate_an_entry(client, api_token, task, media_root):
    lying = with_declared_size(zip_bomb(expanded_bytes=5 << 20, member="a.jsonl"), 1_000)
    response = post(client, api_token, "lie.zip", lying, agent="Codex", task=task.slug)
    assert response.status_code == 400, response.content
    assert "lie.zip: entry 'a.jsonl' cannot be read" in json.dumps(response.json())
    assert_nothing_written(media_root)


def test_api_refuses_more_entries_than_the_setting_allows(
    client, api_token, task, media_root, settings
):
    settings.ARENA_ARCHIVE_MAX_MEMBERS = 3
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(4):
            archive.writestr(f"f{i}.jsonl", "{}")
    response = post(client, api_token, "many.zip", buffer.getvalue(), agent="Codex", task=task.slug)
    assert response.status_code == 400
    assert "many.zip: has 4 entries, more than the limit of 3" in json.dumps(response.json())
    assert_nothing_written(media_root)


def test_the_ratio_limit_is_a_setting(client, api_token, task, settings):
    bomb = gzip_bomb(expanded_bytes=5 << 20)
    response = post(client, api_token, "run.jsonl.gz", bomb, agent="Codex", task=task.slug)
    assert response.status_code == 413
    settings.ARENA_ARCHIVE_MAX_RATIO = 100_000  # the zeros now expand, and are no log
    response = post(client, api_token, "run.jsonl.gz", bomb, agent="Codex", task=task.slug)
    assert response.status_code == 400
    assert "not a log in any known format" in json.dumps(response.json())


def test_the_command_refuses_a_zip_bomb_and_writes_nothing(tmp_path, task, media_root):
    path = tmp_path / "bomb.zip"
    write_zip_bomb(path, expanded_bytes=50 << 20, member="a.jsonl")
    with pytest.raises(CommandError, match=r"file: bomb\.zip: entry 'a\.jsonl' says it expands"):
        call_command("upload_trajectory", str(path), agent="Codex", task=task.slug)
    assert_nothing_written(media_root)


class ReadsInChunks(io.BytesIO):
    """An uploaded file that fails any unbounded read: the service must ask for chunks."""

    def read(self, size: int | None = -1) -> bytes:
        assert size is not None and 0 <= size <= CHUNK_BYTES, f"read({size})"
        return super().read(size)


def test_a_plain_upload_is_read_in_chunks_and_refused_past_the_cap_as_it_streams(codex_log):
    path, expected = codex_log
    prepared = trajectory_prepare(file=ReadsInChunks(path.read_bytes()), filename=path.name)
    assert prepared.row.tool_call_count == expected.tool_calls
    with pytest.raises(TrajectoryTooLarge, match="larger than the 10,000-byte limit"):
        trajectory_prepare(
            file=ReadsInChunks(path.read_bytes()), filename=path.name, max_bytes=10_000
        )


def test_a_gzipped_upload_is_read_in_chunks(codex_log):
    path, expected = codex_log
    upload = ReadsInChunks(gzip.compress(path.read_bytes()))
    prepared = trajectory_prepare(file=upload, filename=path.name + ".gz")
    assert prepared.row.tool_call_count == expected.tool_calls
