"""A Claude Code session file uploaded without its subagents' folder: the upload says so."""

from __future__ import annotations

import io

import pytest
from django.core.cache import cache

from tests.transcripts.web.conftest import zip_folder

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_rate_counts_left_over():
    cache.clear()  # the write-rate counts of the uploads other tests made this minute


API = "/api/v1/trajectories"
ADVICE = "whose files were not uploaded: upload the session folder as a .zip"


def _spawned(count: int) -> str:
    return f"This session spawned {count} subagent{'' if count == 1 else 's'} {ADVICE}"


def _file(name: str, data: bytes) -> io.BytesIO:
    upload = io.BytesIO(data)
    upload.name = name
    return upload


def test_the_api_names_the_subagents_a_lone_session_file_left_behind(
    client, api_token, run, claude_folder
):
    folder, expected = claude_folder
    main = (folder / "sess-demo.jsonl").read_bytes()
    response = client.post(
        API,
        {"file": _file("sess-demo.jsonl", main), "run": str(run.pk)},
        HTTP_AUTHORIZATION=f"Token {api_token}",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["subagents"] == 0
    assert body["notes"][0] == (
        f"{_spawned(expected.subagents)} (the session's .jsonl with its folder of the same "
        "name, or the agent-*.jsonl files beside it) to see them."
    )


def test_the_api_says_nothing_of_the_kind_for_the_zipped_folder(
    client, api_token, run, claude_folder
):
    folder, expected = claude_folder
    response = client.post(
        API,
        {"file": _file("session.zip", zip_folder(folder)), "run": str(run.pk)},
        HTTP_AUTHORIZATION=f"Token {api_token}",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["subagents"] == expected.subagents
    assert not any(ADVICE in note for note in body["notes"])


def test_the_form_lands_on_a_page_that_says_so(client, django_user_model, run, claude_folder):
    staff = django_user_model.objects.create_user("staff", password="pw-not-used-1", is_staff=True)
    client.force_login(staff)
    folder, expected = claude_folder
    main = (folder / "sess-demo.jsonl").read_bytes()
    response = client.post(
        "/trajectories/upload/", {"file": _file("sess-demo.jsonl", main), "run": run.pk}
    )
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert _spawned(expected.subagents) in page.content.decode()
