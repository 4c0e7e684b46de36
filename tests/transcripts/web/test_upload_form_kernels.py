"""The upload form in two steps: a log with its kernel is stored and graded at once; a log alone
is held while its uploader reads the kernel found in it (file, turn, tool, the code) and grades
it, attaches another, or stores the log alone. A held upload is its uploader's, taken once, and
gone after a while; a refusal stores nothing."""

from __future__ import annotations

import io
import os
import re
import time

import pytest
from django.core.cache import cache

from arena.models import Run, Submission
from tests.transcripts.web.agent_logs import SILU_EDITED, SILU_KERNEL, claude_code_log, codex_log
from tests.transcripts.web.conftest import stored_files
from transcripts.models import Trajectory
from transcripts.spool import work_root

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _write_budget_unspent():
    # The account's write budget is counted in the cache, across tests: these upload a lot.
    cache.clear()
    yield
    cache.clear()


FORM = "/trajectories/upload/"
CONFIRM = "/trajectories/upload/confirm/"
OTHER_KERNEL = SILU_KERNEL.replace("# draft", "# mine")


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


@pytest.fixture
def logged_in(client, uploader):
    client.force_login(uploader)
    return client


def named(name: str, data: bytes) -> io.BytesIO:
    upload = io.BytesIO(data)
    upload.name = name
    return upload


def step_one(client, *, log: bytes | None = None, kernel: bytes | None = None, **fields):
    body = {
        "file": named("session.jsonl", log or claude_code_log()),
        "agent": "Opus",
        "task": "silu",
    }
    if kernel is not None:
        body["solution"] = named("solution.py", kernel)
    return client.post(FORM, {**body, **fields})


def held_handle(response) -> str:
    found = re.search(r'name="held" value="([^"]+)"', response.content.decode())
    assert found is not None, response.content.decode()
    return found.group(1)


def held_folders() -> list:
    return list(work_root().glob("*")) if work_root().is_dir() else []


def nothing_stored(media_root) -> bool:
    return (
        not Run.objects.exists()
        and not Trajectory.objects.exists()
        and not stored_files(media_root)
    )


def test_a_log_with_its_kernel_is_stored_and_graded_at_once(logged_in, silu):
    response = step_one(logged_in, kernel=OTHER_KERNEL.encode())
    assert response.status_code == 302, response.content.decode()
    submission = Submission.objects.get()
    assert response["Location"] == f"/runs/{submission.run_id}/"
    assert submission.kernel_source == "attached"
    assert submission.evaluation.solution_code == OTHER_KERNEL


def test_a_log_alone_shows_the_kernel_found_in_it_and_stores_nothing_yet(
    logged_in, silu, media_root
):
    response = step_one(logged_in)
    assert response.status_code == 200
    page = response.content.decode()
    origin = re.sub(r"<[^>]+>", "", re.search(r'class="kernel-origin">(.*?)</p>', page).group(1))
    assert origin == "/workspace/solution.py, as the agent last wrote it at turn 2 by Edit."
    assert "# final" in page and 'id="confirm-kernel"' in page  # the code, highlighted
    assert "harness claude-code, model claude-sonnet-4-5" in page
    assert nothing_stored(media_root) and len(held_folders()) == 1


def test_confirming_grades_the_kernel_from_the_log(logged_in, silu):
    handle = held_handle(step_one(logged_in))
    response = logged_in.post(CONFIRM, {"held": handle, "action": "confirm"})
    assert response.status_code == 302, response.content.decode()
    submission = Submission.objects.get()
    assert response["Location"] == f"/runs/{submission.run_id}/"
    assert (submission.kernel_source, submission.kernel_turn, submission.kernel_tool) == (
        "log",
        2,
        "Edit",
    )
    assert submission.evaluation.solution_code == SILU_EDITED
    assert held_folders() == []
    # Taken once: a second press finds nothing held.
    again = logged_in.post(CONFIRM, {"held": handle, "action": "confirm"})
    assert again.status_code == 400 and b"no longer held" in again.content
    assert Run.objects.count() == 1


def test_another_kernel_can_be_graded_instead(logged_in, silu):
    handle = held_handle(step_one(logged_in))
    body = {
        "held": handle,
        "action": "replace",
        "solution": named("mine.py", OTHER_KERNEL.encode()),
    }
    assert logged_in.post(CONFIRM, body).status_code == 302
    submission = Submission.objects.get()
    assert submission.kernel_source == "attached"
    assert (submission.evaluation.solution_name, submission.evaluation.solution_code) == (
        "mine.py",
        OTHER_KERNEL,
    )


def test_a_replacement_that_is_not_python_is_refused_and_the_log_stays_held(
    logged_in, silu, media_root
):
    handle = held_handle(step_one(logged_in))
    bad = {"held": handle, "action": "replace", "solution": named("k.cu", b"__global__ void k();")}
    response = logged_in.post(CONFIRM, bad)
    assert response.status_code == 400
    errors = re.search(r'id="errors-solution">(.*?)</ul>', response.content.decode(), re.S)
    assert errors is not None and "k.cu: not Python" in errors.group(1)
    assert nothing_stored(media_root)
    assert logged_in.post(CONFIRM, {"held": handle, "action": "confirm"}).status_code == 302


def test_the_log_alone_is_stored_as_a_transcript_only(logged_in, silu):
    handle = held_handle(step_one(logged_in))
    response = logged_in.post(CONFIRM, {"held": handle, "action": "transcript"})
    assert response.status_code == 302
    run = Run.objects.get()
    assert not run.submissions.exists() and run.trajectory is not None
    page = logged_in.get(response["Location"]).content.decode()
    assert "none: a transcript only" in page


def test_a_log_whose_kernel_cannot_be_graded_says_why_and_offers_the_rest(logged_in, silu):
    response = step_one(logged_in, log=claude_code_log(kernel="print('hi')  # draft\n"))
    page = response.content.decode()
    assert response.status_code == 200 and 'id="confirm-kernel"' not in page
    problem = re.search(r'id="kernel-problem">(.*?)</p>', page).group(1)
    assert (
        problem == "/workspace/solution.py as the log leaves it (turn 2): defines no ModelNew: "
        "the grader loads class ModelNew from the solution."
    )
    assert 'id="replace-kernel"' in page and 'id="transcript-only"' in page


def test_a_held_upload_is_its_uploaders_alone(logged_in, silu, client, django_user_model):
    handle = held_handle(step_one(logged_in))
    other = django_user_model.objects.create_user("other", password="pw-unused-3")
    client.force_login(other)
    response = client.post(CONFIRM, {"held": handle, "action": "confirm"})
    assert response.status_code == 400 and b"no longer held" in response.content
    assert not Run.objects.exists() and len(held_folders()) == 1


def test_a_held_upload_expires(logged_in, silu, settings):
    handle = held_handle(step_one(logged_in))
    long_ago = time.time() - settings.ARENA_ORPHAN_MAX_AGE_S
    os.utime(work_root() / handle / "held.json", (long_ago, long_ago))
    response = logged_in.post(CONFIRM, {"held": handle, "action": "confirm"})
    assert response.status_code == 400 and b"no longer held" in response.content
    assert not Run.objects.exists()


def test_a_codex_log_of_a_claude_code_agent_is_refused_at_the_first_step(
    logged_in, silu, media_root
):
    assert step_one(logged_in, kernel=SILU_KERNEL.encode()).status_code == 302
    response = step_one(logged_in, log=codex_log())
    assert response.status_code == 400
    errors = re.search(r'id="errors-agent">(.*?)</ul>', response.content.decode(), re.S)
    assert errors is not None and "make a second agent for it, e.g. &#x27;Opus (codex)&#x27;" in (
        errors.group(1)
    )
    assert Run.objects.count() == 1 and held_folders() == []


def test_a_second_upload_of_the_same_log_links_the_first(logged_in, silu):
    assert step_one(logged_in, kernel=SILU_KERNEL.encode()).status_code == 302
    run = Run.objects.get()
    response = step_one(logged_in, kernel=SILU_KERNEL.encode())
    assert response.status_code == 409
    page = response.content.decode()
    assert f"this log was uploaded already: run #{run.pk}" in page
    assert f'<a href="/runs/{run.pk}/" id="duplicate-run">' in page
    assert Run.objects.count() == 1


def test_an_attached_kernel_without_model_new_is_refused_beside_its_field(
    logged_in, silu, media_root
):
    response = step_one(logged_in, kernel=b"x = 1\n")
    assert response.status_code == 400
    errors = re.search(r'id="errors-solution">(.*?)</ul>', response.content.decode(), re.S)
    assert errors is not None and "solution.py: defines no ModelNew" in errors.group(1)
    assert nothing_stored(media_root) and held_folders() == []


def test_the_form_offers_the_accounts_agents_with_their_harness(logged_in, silu):
    assert step_one(logged_in, kernel=SILU_KERNEL.encode()).status_code == 302
    page = logged_in.get(FORM).content.decode()
    assert '<option value="Opus">claude-code · claude-sonnet-4-5</option>' in page


def test_another_file_the_log_wrote_can_be_named_and_one_it_never_wrote_is_refused(
    logged_in, silu, media_root
):
    response = step_one(logged_in, solution_path="kernel.py")
    assert response.status_code == 400
    errors = re.search(r'id="errors-solution_path">(.*?)</ul>', response.content.decode(), re.S)
    assert errors is not None and "kernel.py: the log never names this file" in errors.group(1)
    assert nothing_stored(media_root) and held_folders() == []
    named_one = step_one(logged_in, solution_path="/workspace/solution.py")
    assert named_one.status_code == 200 and b"as the agent last wrote it at turn 2" in (
        named_one.content
    )


def test_a_browser_holds_its_latest_uploads_and_lets_the_older_go(logged_in, silu):
    handles = [
        held_handle(step_one(logged_in, log=claude_code_log(session=f"s{n}"))) for n in range(6)
    ]
    assert sorted(p.name for p in held_folders()) == sorted(handles[1:])
    assert logged_in.post(CONFIRM, {"held": handles[0], "action": "confirm"}).status_code == 400
    assert logged_in.post(CONFIRM, {"held": handles[5], "action": "confirm"}).status_code == 302
