"""An uploader's whole journey in Chromium at a desktop (1400 px) and a phone (390 px) width:
sign up, make an API token, upload a Claude Code log with its kernel through the form and a
Codex log through the API with its kernel taken from the log, and see both graded by a real
worker (on the CPU here: listed as unranked CPU gradings) with the transcript and the solution
one click away; a log alone, whose kernel the form shows, stored as a transcript only; refused
uploads leaving no row and no file. Every page fits the width and keeps its CSP."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from django.core.cache import cache

from arena.models import Run, Submission
from evaluator.models import Evaluation
from tests.transcripts.web.agent_logs import claude_code_log, codex_log
from tests.waiting import wait_for
from transcripts.models import Trajectory
from transcripts.spool import work_root

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

WIDTHS = (1400, 390)
PASSWORD = "a-long-enough-password-42"
SHOTS = Path(os.environ.get("ARENA_UPLOAD_SCREENSHOTS", "/tmp/arena-upload-journey"))
SOLUTIONS = Path(__file__).resolve().parents[1] / "evaluator" / "solutions"
# The grader's own correct Triton SiLU, as the agents leave it: a comment each log changes.
KERNEL = (SOLUTIONS / "silu_triton.py").read_text().replace("return y\n", "return y  # draft\n")
GRADED_S = 420  # two CPU gradings in one worker, beside other tests on a shared machine


@pytest.fixture
def watched(page, settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path / "data"  # the uploads' work folders
    cache.clear()  # the live server shares this process's cache: no sign-ups counted yet
    page.refused = []
    page.on(
        "console",
        lambda m: page.refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    return page


def shot(page, name: str, width: int) -> None:
    overflow = page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth"
    )
    assert overflow <= 0, f"{name} scrolls sideways by {overflow} px at {width} px"
    page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)


def stored(settings) -> tuple[int, int, int, int, int]:
    """Rows and files an upload leaves: runs, trajectories, gradings, media files, work folders."""
    media = [p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()]
    work = list(work_root().glob("*")) if work_root().is_dir() else []
    counts = (Run.objects.count(), Trajectory.objects.count(), Evaluation.objects.count())
    return (*counts, len(media), len(work))


def text_of(page, selector: str) -> str:
    return " ".join(page.locator(selector).inner_text().split())


def sign_up(page, base: str, name: str, width: int) -> str:
    """A new account and an API token's secret."""
    page.goto(base + "/")
    page.locator("header.site nav.account a:has-text('Sign up')").click()
    page.wait_for_url("**/accounts/signup/")
    page.fill("#id_username", name)
    page.fill("#id_email", f"{name}@example.org")
    page.fill("#id_password1", PASSWORD)
    page.click("form.account-form button[type=submit]")
    page.wait_for_url("**/accounts/tokens/")
    page.fill("#id_name", "uploads")
    page.click("#token-create button[type=submit]")
    # The form posts and the page is replaced: measured once the new one shows the secret.
    page.locator("#new-token-secret").wait_for()
    shot(page, "journey-token", width)
    return page.locator("#new-token-secret").inner_text().strip()


def upload_form(page, base: str, *, log: bytes, agent: str, kernel: bytes | None, **fields):
    page.goto(base + "/trajectories/upload/")
    page.set_input_files(
        "#id_file", {"name": "session.jsonl", "mimeType": "application/json", "buffer": log}
    )
    if kernel is not None:
        page.set_input_files(
            "#id_solution", {"name": "solution.py", "mimeType": "text/x-python", "buffer": kernel}
        )
    page.fill("#id_agent", agent)
    for name, value in fields.items():
        page.fill(f"#id_{name}", value)
    page.select_option("#id_task", "silu")
    page.click("#upload-form button[type=submit]")


def api_upload(page, base: str, secret: str, *, log: bytes, **fields):
    multipart = {
        "file": {
            "name": "rollout-2026-01-05T11-00-00-0199-codex.jsonl",
            "mimeType": "application/json",
            "buffer": log,
        },
        **fields,
    }
    return page.request.post(
        base + "/api/v1/trajectories",
        headers={"Authorization": f"Token {secret}"},
        multipart=multipart,
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_sign_up_upload_two_logs_and_see_them_graded(
    watched, live_server, celery_worker, catalog_tasks, settings, width
):
    page, base = watched, live_server.url
    page.set_viewport_size({"width": width, "height": 900})
    started = time.monotonic()
    secret = sign_up(page, base, f"journey{width}", width)
    claude_agent, codex_agent = f"Claude Opus {width}", f"Codex {width}"

    # A Claude Code log with its kernel, through the form: stored and sent to grading at once.
    upload_form(
        page,
        base,
        log=claude_code_log(kernel=KERNEL, session=f"c-{width}"),
        agent=claude_agent,
        kernel=KERNEL.replace("# draft", "# mine").encode(),
        model="claude-opus-4-1",
    )
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))
    form_run = int(page.url.rstrip("/").rsplit("/", 1)[1])
    assert "attached beside the log by its uploader" in text_of(page, "#kernel-provenance")
    shot(page, "journey-form-run-queued", width)

    # A Codex log through the API, its kernel the last one it wrote.
    response = api_upload(
        page,
        base,
        secret,
        agent=codex_agent,
        task="silu",
        log=codex_log(kernel=KERNEL, session=f"x-{width}"),
    )
    assert response.status == 201, response.text()
    body = response.json()
    api_run = body["run"]
    assert body["kernel"]["source"] == "log" and body["kernel"]["tool"] == "apply_patch"
    assert (body["harness"], body["model"], body["transcript_only"]) == (
        "codex",
        "gpt-5-codex",
        False,
    )

    # A log alone: the form shows the kernel found in it; stored as a transcript only.
    upload_form(
        page,
        base,
        log=claude_code_log(kernel=KERNEL, session=f"t-{width}"),
        agent=claude_agent,
        kernel=None,
    )
    page.wait_for_selector("#found-kernel")
    assert text_of(page, ".kernel-origin") == (
        "/workspace/solution.py, as the agent last wrote it at turn 2 by Edit."
    )
    assert "# final" in page.locator(".kernel-preview").inner_text()
    shot(page, "journey-confirm-kernel", width)
    page.click("#transcript-only")
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))
    assert "none: a transcript only" in text_of(page, "#kernel-provenance")
    assert page.locator("[data-verdict=transcript_only]").count() >= 1
    assert "graded again" not in page.locator("main").inner_text()
    shot(page, "journey-transcript-only", width)

    # Refusals: a clear error each, and no row, no file, no work folder left.
    before = stored(settings)
    upload_form(
        page,
        base,
        log=claude_code_log(kernel=KERNEL, session=f"r-{width}"),
        agent=claude_agent,
        kernel=b"__global__ void silu(float* x) { }\n",
    )
    page.wait_for_selector("#errors-solution")
    assert "solution.py: not Python" in page.locator("#errors-solution").inner_text()
    shot(page, "journey-refused-kernel", width)
    refusals = {
        "unknown task": api_upload(
            page,
            base,
            secret,
            agent=codex_agent,
            task="no-such-task",
            log=codex_log(kernel=KERNEL, session=f"u-{width}"),
        ),
        "same log again": api_upload(
            page,
            base,
            secret,
            agent=codex_agent,
            task="silu",
            log=codex_log(kernel=KERNEL, session=f"x-{width}"),
        ),
        "another harness": api_upload(
            page,
            base,
            secret,
            agent=claude_agent,
            task="silu",
            log=codex_log(kernel=KERNEL, session=f"h-{width}"),
        ),
    }
    assert {why: r.status for why, r in refusals.items()} == {
        "unknown task": 400,
        "same log again": 409,
        "another harness": 400,
    }
    assert f"run #{api_run} (/runs/{api_run}/)" in refusals["same log again"].text()
    assert f"e.g. '{claude_agent} (codex)'" in refusals["another harness"].text()
    upload_form(
        page,
        base,
        log=codex_log(kernel=KERNEL, session=f"x-{width}"),
        agent=codex_agent,
        kernel=KERNEL.encode(),
    )
    page.wait_for_selector("#duplicate-run")
    shot(page, "journey-refused-duplicate", width)
    assert stored(settings) == before

    # Both graded by the real worker, on the CPU.
    def graded():
        runs = Run.objects.filter(pk__in=[form_run, api_run], status=Run.Status.DONE)
        return runs.count() == 2

    wait_for(graded, timeout_s=GRADED_S, what="both uploads to be graded")
    elapsed_s = time.monotonic() - started
    (SHOTS / f"journey-timing-{width}.txt").write_text(
        f"sign-up to both uploads graded at {width} px: {elapsed_s:.1f} s\n"
    )
    for submission in Submission.objects.filter(run_id__in=[form_run, api_run]):
        assert (submission.evaluation.status, submission.evaluation.device) == ("passed", "cpu")

    page.goto(f"{base}/runs/{api_run}/")
    assert page.locator("h2 [data-verdict=unranked_cpu]").count() == 1
    provenance = text_of(page, "#kernel-provenance")
    assert "written at turn 2 of the log by apply_patch (solution.py)" in provenance
    shot(page, "journey-api-run-graded", width)
    page.click("#kernel-turn-link")
    page.wait_for_url(re.compile(rf".*/runs/{api_run}/transcript#t-main-2$"))
    shot(page, "journey-transcript-at-the-kernel", width)

    # The agent's runs: a model column, the transcript and the solution one click away.
    page.goto(f"{base}/runs/?gpu=cpu")
    rows = page.locator("table.run-table tbody tr")
    assert rows.count() == 2
    listed = page.locator("table.run-table").inner_text()
    assert "claude-sonnet-4-5" in listed and "gpt-5-codex" in listed
    assert listed.count("unranked (CPU)") == 2
    shot(page, "journey-run-list", width)
    row = page.locator(f"table.run-table tr:has(a[href='/runs/{form_run}/'])")
    row.locator("a.transcript-link").click()
    page.wait_for_url(f"**/runs/{form_run}/transcript")
    page.go_back()
    page.locator(f"table.run-table tr:has(a[href='/runs/{form_run}/']) a.solution-link").click()
    page.wait_for_url(f"**/runs/{form_run}/#solution")
    assert "# mine" in page.locator("section.evaluation .highlight").inner_text()
    shot(page, "journey-form-run-graded", width)

    # The board lists them apart, as CPU gradings: never ranked.
    page.goto(base + "/")
    assert claude_agent in page.locator("#cpu-unranked").inner_text()
    assert codex_agent in page.locator("#cpu-unranked").inner_text()
    shot(page, "journey-board", width)
    page.goto(f"{base}/agents/{Run.objects.get(pk=api_run).agent.slug}/")
    shot(page, "journey-agent", width)
    assert page.refused == [] and page.js_errors == []
