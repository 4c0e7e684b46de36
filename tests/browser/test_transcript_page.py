"""The transcript page served by Django: a hostile log uploaded through the parsers runs
nothing, and the download button serves the offline export."""

from __future__ import annotations

import json

import pytest

from arena.run_logs import trajectory_upload
from tests.transcripts.render.injection import PAYLOADS


def hostile_chat_log() -> bytes:
    """An OpenAI chat message list carrying every payload in every field the format has."""
    messages: list[dict] = []
    for n, payload in enumerate(PAYLOADS):
        call_id = f"call_{n}"
        messages += [
            {"role": "user", "content": payload},
            {
                "role": "assistant",
                "content": payload,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": payload, "arguments": json.dumps({payload: payload})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": payload * 30},
        ]
    return json.dumps(messages).encode()


@pytest.fixture
def hostile_run(transactional_db, settings, tmp_path):
    from arena.models import Agent, Run
    from tasks.models import Task

    settings.MEDIA_ROOT = tmp_path / "media"
    task = Task.objects.create(
        slug=PAYLOADS[0],
        title=PAYLOADS[1],
        category="hard",
        suite="demo",
        dtype="fp32",
        regime="memory",
        folder="demo/x",
        version_hash="0" * 64,
    )
    agent = Agent.objects.create(slug="hostile", name=PAYLOADS[3])
    run = Run.objects.create(agent=agent, task=task, status=Run.Status.DONE)
    trajectory_upload(data=hostile_chat_log(), filename=PAYLOADS[4][:40] + ".json", run_id=run.pk)
    return run


def test_hostile_log_on_the_page_runs_nothing(page, live_server, hostile_run):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    violations: list[str] = []
    page.on(
        "console", lambda m: violations.append(m.text) if "Content Security" in m.text else None
    )
    response = page.goto(f"{live_server.url}/runs/{hostile_run.pk}/transcript")
    assert response.status == 200
    assert "script-src 'sha256-" in response.headers["content-security-policy"]
    page.click("#expand-all")
    page.wait_for_function("document.querySelectorAll('template.lazy').length === 0")
    page.fill("#search", "pwned")
    page.press("#search", "Enter")
    for tab in ["solution", "grader", "timeline"]:
        page.click(f"[data-tab={tab}]")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned === undefined")
    assert dialogs == [] and page.js_errors == []
    # Our own script and style ran under the policy: nothing of ours was refused.
    assert violations == []
    # The payloads reached the page, as text a reader can see.
    assert page.locator("text=<svg onload=window.__pwned=1;alert(1)>").count() >= 3


def test_download_button_serves_the_offline_export(page, live_server, hostile_run, tmp_path):
    page.goto(f"{live_server.url}/runs/{hostile_run.pk}/transcript")
    with page.expect_download() as info:
        page.click("#download")
    download = info.value
    assert download.suggested_filename == f"run-{hostile_run.pk}-transcript.html"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    html = saved.read_text()
    assert '<meta http-equiv="Content-Security-Policy"' in html

    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    page.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort(),
    )
    page.context.set_offline(True)
    page.goto(saved.as_uri())
    page.click("#expand-all")
    page.wait_for_function("document.querySelectorAll('template.lazy').length === 0")
    assert requests == [saved.as_uri()]
    assert page.evaluate("window.__pwned === undefined") and dialogs == []


@pytest.fixture
def screenshot_run(transactional_db, settings, tmp_path):
    """A Claude Code session whose prompt and tool result carry a screenshot, uploaded."""
    from arena.models import Agent, Run
    from tasks.models import Task
    from tests.transcripts.render.test_images import claude_code_log

    settings.MEDIA_ROOT = tmp_path / "media"
    task = Task.objects.create(
        slug="softmax",
        title="Softmax",
        category="hard",
        suite="demo",
        dtype="fp32",
        regime="memory",
        folder="demo/softmax",
        version_hash="0" * 64,
    )
    agent = Agent.objects.create(slug="claude-code", name="Claude Code")
    run = Run.objects.create(agent=agent, task=task, status=Run.Status.DONE)
    trajectory_upload(data=claude_code_log(), filename="s1.jsonl", run_id=run.pk)
    return run


def test_images_show_under_the_pages_policy_and_the_prompt_titles_it(
    page, live_server, screenshot_run
):
    violations: list[str] = []
    page.on(
        "console", lambda m: violations.append(m.text) if "Content Security" in m.text else None
    )
    response = page.goto(f"{live_server.url}/runs/{screenshot_run.pk}/transcript")
    assert "img-src data:" in response.headers["content-security-policy"]
    assert page.title() == f"What is this? \u00b7 Run #{screenshot_run.pk}: Claude Code on softmax"
    images = page.locator("[data-ev] img")
    assert images.count() == 2
    assert page.evaluate(
        "Array.from(document.querySelectorAll('[data-ev] img')).every(i => i.naturalWidth === 2)"
    )
    assert violations == [] and page.js_errors == []


@pytest.fixture
def copilot_run(transactional_db, settings, tmp_path):
    """A Copilot CLI session with a subagent, uploaded to a run."""
    from pathlib import Path

    from arena.models import Agent, Run
    from tasks.models import Task

    settings.MEDIA_ROOT = tmp_path / "media"
    log = Path(__file__).parents[1] / "transcripts/formats/fixtures/copilot_cli/events.jsonl"
    task = Task.objects.create(
        slug="softmax",
        title="Softmax",
        category="hard",
        suite="demo",
        dtype="fp32",
        regime="memory",
        folder="demo/softmax",
        version_hash="0" * 64,
    )
    agent = Agent.objects.create(slug="copilot", name="Copilot")
    run = Run.objects.create(agent=agent, task=task, status=Run.Status.DONE)
    trajectory_upload(data=log.read_bytes(), filename="events.jsonl", run_id=run.pk)
    return run


def test_tabs_work_at_every_width_and_the_turns_agree(page, live_server, copilot_run):
    from tests.browser.conftest import SCREENSHOTS

    url = f"{live_server.url}/runs/{copilot_run.pk}/transcript"
    for width in (1400, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(url)
        # The card counts the main conversation's turns, as the outline lists them (on a phone
        # both are folded: their text, not what is drawn).
        assert " ".join(page.text_content("#turn-count").split()) == "10 +2 in subagents"
        assert page.text_content("#outline-count") == "10"
        assert page.locator("#outline-list a.otl").count() == 10
        tabs = page.locator(".tabs").bounding_box()
        for tab in ("solution", "grader"):
            page.click(f"[data-tab={tab}]")
            assert not page.locator("[data-panel=timeline]").is_visible()
            top = page.locator(f"[data-panel={tab}]").bounding_box()["y"]
            assert top - (tabs["y"] + tabs["height"]) < 40, (width, tab, top)
            page.screenshot(path=str(SCREENSHOTS / f"transcript-page-{tab}-{width}.png"))
        page.click("[data-tab=timeline]")
        assert page.locator("[data-panel=timeline]").is_visible()
    assert page.js_errors == []
