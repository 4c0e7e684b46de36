"""The public pages in Chromium at a desktop (1400 px) and a phone (390 px) width: no page-level
horizontal scroll, the ranking column in view, one click from a board row, a matrix cell or a
run row to its transcript and its solution, CPU gradings unranked and the stated tie order."""

import json

import pytest
from django.core.cache import cache

from arena.run_logs import trajectory_upload
from tests.leaderboard.factories import make_agent, make_run, make_task

pytestmark = pytest.mark.django_db(transaction=True)

WIDTHS = (1400, 390)


def chat_log(n: int) -> bytes:
    messages = [{"role": "user", "content": "Write a fast kernel."}]
    for i in range(n):
        messages += [
            {"role": "assistant", "content": f"Step {i}: trying a tiled version."},
            {"role": "user", "content": f"result {i}: ok"},
        ]
    return json.dumps(messages).encode()


@pytest.fixture
def board(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    cache.clear()  # the live server runs in this process and shares its cache
    tasks = [make_task(f"task-with-a-long-name-{i}") for i in range(6)]
    fast = make_agent("fast", name="Fast Agent With A Long Descriptive Name", model="model-x")
    slow = make_agent("slow", name="Slow Agent")
    twin = make_agent("twin", name="Twin Agent")
    broken = make_agent("aaa-broken", name="Aaa Broken")
    runs = {"fast": [make_run(fast, t, speedup=1.5 + i, cost_usd=0.3) for i, t in enumerate(tasks)]}
    # fast_1 ties at 0 for slow, twin and broken: correctness, then the speedup, then the name.
    runs["slow"] = [make_run(slow, tasks[0], speedup=0.5), make_run(slow, tasks[1], speedup=0.9)]
    runs["twin"] = [make_run(twin, tasks[0], speedup=0.5), make_run(twin, tasks[1], speedup=0.4)]
    runs["broken"] = [make_run(broken, tasks[0], outcome="no_compile")]
    runs["flagged"] = [make_run(slow, tasks[2], speedup=3.0, flags=("timing_anomaly",))]
    # A new agent whose one correct grading ran on the CPU: never ranked, shown apart.
    cpu_only = make_agent("cpu-only", name="Cpu Only")
    runs["cpu"] = [make_run(cpu_only, tasks[0], speedup=None, gpu="cpu")]
    best = runs["fast"][-1]  # its fastest: the row's best run
    trajectory_upload(data=chat_log(3), filename="best.json", run_id=best.pk)
    return {"runs": runs, "best": best, "tasks": tasks}


def public_pages(board) -> list[str]:
    best, other = board["best"].pk, board["runs"]["slow"][0].pk
    return [
        "/",
        "/runs/",
        "/agents/",
        "/agents/fast/",
        "/matrix/",
        "/scoring/",
        "/tasks/",
        f"/tasks/{board['tasks'][0].slug}/",
        f"/runs/{best}/",
        f"/runs/{best}/transcript",
        f"/compare/?a={best}&b={other}",
        "/compare/",
        "/compare/agents/?a=fast&b=slow",
        "/accounts/login/",
        "/api/docs/",
    ]


def page_overflow(page) -> int:
    """How far the page scrolls sideways, in CSS pixels (0: it fits)."""
    return page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth"
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_every_public_page_fits_without_horizontal_page_scroll(page, live_server, board, width):
    page.set_viewport_size({"width": width, "height": 900})
    too_wide = {}
    for path in public_pages(board):
        response = page.goto(live_server.url + path)
        assert response.status == 200, path
        page.wait_for_load_state("load")
        page.wait_for_timeout(150)  # plots draw after load
        overflow = page_overflow(page)
        if overflow > 0:
            too_wide[path] = overflow
    assert too_wide == {}, f"pages wider than {width} px (by px): {too_wide}"
    assert page.js_errors == []


def test_on_a_phone_the_ranking_scrolls_inside_its_card_with_the_agent_in_view(
    page, live_server, board
):
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(live_server.url + "/")
    wrap = page.locator(".table-wrap:has(#ranking)")
    assert wrap.evaluate("e => e.scrollWidth > e.clientWidth")  # the table is wider than the card
    wrap.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    page.wait_for_timeout(100)
    agent_cell = page.locator("#ranking tbody tr").first.locator("td.agent-col")
    box = agent_cell.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + 40 < 390
    assert page_overflow(page) <= 0


def test_one_click_from_a_board_row_to_the_transcript_and_the_solution(page, live_server, board):
    best = board["best"].pk
    page.goto(live_server.url + "/")
    row = page.locator("#ranking tbody tr", has_text="Fast Agent")
    row.locator("a.transcript-link").click()
    page.wait_for_url(f"**/runs/{best}/transcript")
    assert "tiled version" in page.content()
    page.goto(live_server.url + "/")
    page.locator("#ranking tbody tr", has_text="Fast Agent").locator("a.solution-link").click()
    page.wait_for_url(f"**/runs/{best}/#solution")
    assert page.locator("#solution").is_visible()
    assert page.locator("#solution").bounding_box()["y"] < 900  # landed on it


def test_one_click_from_a_matrix_cell_and_a_run_row(page, live_server, board):
    best = board["best"].pk
    page.goto(live_server.url + "/matrix/")
    page.locator(f'#matrix a.transcript-link[href="/runs/{best}/transcript"]').click()
    page.wait_for_url(f"**/runs/{best}/transcript")
    page.goto(live_server.url + "/runs/?transcript=yes")
    rows = page.locator("table.run-table tbody tr")
    assert rows.count() == 1
    rows.first.locator("a.transcript-link").click()
    page.wait_for_url(f"**/runs/{best}/transcript")
    page.goto(live_server.url + "/runs/?agent=slow")
    page.locator("table.run-table tbody tr").first.locator("a.solution-link").click()
    page.wait_for_url("**/#solution")
    assert page.locator("#solution").is_visible()
    assert page.js_errors == []


def test_cpu_gradings_are_unranked_and_ties_follow_the_stated_order(page, live_server, board):
    page.goto(live_server.url + "/")
    ranking = page.locator("#ranking tbody tr td.agent-col > a").all_inner_texts()
    # By the geometric-mean speedup: fast's six fast runs, twin's 0.5x and 0.4x (0.45x), slow's
    # 0.5x, 0.9x and a flagged run at the 0.01x floor (0.17x), broken's failure alone.
    assert ranking[0].startswith("Fast Agent")
    assert ranking.index("Twin Agent") < ranking.index("Slow Agent") < ranking.index("Aaa Broken")
    statement = page.locator("#board-gpu").inner_text()
    assert "Ranked by Speedup: the geometric mean" in statement
    assert "ties go to Correct, then fast₁, then the agent's name" in statement
    assert "Cpu Only" not in ranking
    unranked = page.locator("#cpu-unranked")
    assert "Cpu Only" in unranked.inner_text() and "not timed" in unranked.inner_text()
    assert page.locator("#board-gpu strong").first.inner_text() == "NVIDIA H200"
    headers = page.locator("#ranking thead th")
    tips = [
        headers.nth(i).evaluate("h => h.title || (h.querySelector('a') || {}).title || ''")
        for i in range(headers.count())
    ]
    assert all(tips), tips  # a tooltip on every column header
    page.locator("#ranking tbody tr", has_text="Slow Agent").locator(
        "details.hack-rate summary"
    ).click()
    page.locator("#ranking details.hack-rate a:has-text('timing_anomaly')").click()
    page.wait_for_url("**/runs/?agent=slow**flag=timing_anomaly**")
    assert page.locator("table.run-table tbody tr").count() == 1
    assert page.js_errors == []


def test_nav_links_the_api_docs_upload_and_login_and_the_site_has_an_icon(
    page, live_server, django_user_model
):
    page.goto(live_server.url + "/")
    nav = page.locator("header.site nav")
    for label, path in (("Runs", "/runs/"), ("Agents", "/agents/"), ("API docs", "/api/docs/")):
        assert nav.locator(f"a:has-text('{label}')").get_attribute("href") == path
    nav.locator("a:has-text('Upload')").click()
    page.wait_for_url("**/accounts/login/?next=/trajectories/upload/")
    django_user_model.objects.create_user("uploader", password="pw-of-the-nav-test-1")
    page.fill("form.stacked input[name=login]", "uploader")
    page.fill("form.stacked input[name=password]", "pw-of-the-nav-test-1")
    page.click("form.stacked button")
    page.wait_for_url("**/trajectories/upload/")
    assert page.locator("header.site #nav-user").inner_text() == "uploader"
    page.click("header.site button:has-text('Log out')")
    page.wait_for_url(live_server.url + "/")
    assert page.locator("header.site nav.account a:has-text('Log in')").is_visible()
    icon = page.locator("link[rel=icon]").get_attribute("href")
    assert page.request.get(live_server.url + icon).status == 200
    assert page.request.get(live_server.url + "/favicon.ico").status == 200
    assert page.request.get(live_server.url + "/transcripts/").url.endswith("/runs/?transcript=yes")
