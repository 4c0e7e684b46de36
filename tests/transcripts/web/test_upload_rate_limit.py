"""The upload form spends the account's write budget, the one the API's writes spend."""

from __future__ import annotations

import io

import pytest
from django.core.cache import cache

from arena.models import Run
from transcripts.models import Trajectory

pytestmark = pytest.mark.django_db

FORM = "/trajectories/upload/"
API = "/api/v1/trajectories"


@pytest.fixture(autouse=True)
def _no_rate_counts_left_over():
    cache.clear()  # the write-rate counts of the uploads other tests made this minute
    yield
    cache.clear()


KERNEL = b"import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n"


def _file(path, *, blank_lines: int = 0) -> io.BytesIO:
    # Blank lines at the end make another log (by its sha256) that reads the same.
    upload = io.BytesIO(path.read_bytes() + b"\n" * blank_lines)
    upload.name = path.name
    return upload


def _kernel() -> io.BytesIO:
    upload = io.BytesIO(KERNEL)
    upload.name = "solution.py"
    return upload


def _form_upload(client, task, codex_log, agent="Codex"):
    """A log and its kernel, stored at once: a new log each time (an upload of the same log
    again is refused)."""
    path, _ = codex_log
    body = {
        "file": _file(path, blank_lines=Trajectory.objects.count() + 1),
        "solution": _kernel(),
        "agent": agent,
        "task": task.slug,
    }
    return client.post(FORM, body)


def test_the_upload_past_the_rate_gets_429_and_stores_nothing(
    client, uploader, task, codex_log, settings
):
    settings.ARENA_WRITE_RATE = "3/min"
    client.force_login(uploader)
    assert [_form_upload(client, task, codex_log).status_code for _ in range(3)] == [302] * 3
    runs, trajectories = Run.objects.count(), Trajectory.objects.count()

    response = _form_upload(client, task, codex_log)
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    page = response.content.decode()
    assert f"Try again in {response['Retry-After']} s" in page
    assert "write budget (3/min)" in page and "Nothing was stored" in page
    assert (Run.objects.count(), Trajectory.objects.count()) == (runs, trajectories)


def test_the_form_and_the_api_spend_one_budget(
    client, uploader, api_token, run, task, codex_log, settings
):
    settings.ARENA_WRITE_RATE = "2/min"
    path, _ = codex_log
    api = client.post(
        API, {"file": _file(path), "run": run.pk}, HTTP_AUTHORIZATION=f"Token {api_token}"
    )
    assert api.status_code == 201, api.content
    client.force_login(uploader)
    assert _form_upload(client, task, codex_log).status_code == 302
    assert _form_upload(client, task, codex_log).status_code == 429
    again = client.post(
        API, {"file": _file(path), "run": run.pk}, HTTP_AUTHORIZATION=f"Token {api_token}"
    )
    assert again.status_code == 429


def test_showing_the_form_spends_nothing(client, uploader, settings):
    settings.ARENA_WRITE_RATE = "1/min"
    client.force_login(uploader)
    assert [client.get(FORM).status_code for _ in range(3)] == [200] * 3


def test_each_account_has_a_budget_of_its_own(
    client, uploader, task, codex_log, settings, django_user_model
):
    settings.ARENA_WRITE_RATE = "1/min"
    client.force_login(uploader)
    assert _form_upload(client, task, codex_log).status_code == 302
    assert _form_upload(client, task, codex_log).status_code == 429
    client.force_login(django_user_model.objects.create_user("another", password="pw-unused-2"))
    assert _form_upload(client, task, codex_log, agent="Another Codex").status_code == 302
