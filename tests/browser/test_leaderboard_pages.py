"""The leaderboard in Chromium: rows and plotly figures render, sorting and filters work, the
run, matrix, compare and task pages open, a queued run's page follows its grading, and no page
raises a JavaScript error."""

import pytest
from django.core.cache import cache

from arena.models import Run
from tests.leaderboard.factories import make_agent, make_run, make_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def board():
    cache.clear()  # the live server runs in this process and shares its cache
    fast = make_agent("fast-agent", name="Fast Agent")
    slow = make_agent("slow-agent", name="Slow Agent")
    t1, t2 = make_task("t1"), make_task("t2", category="hard")
    return {
        "fast_t1": make_run(fast, t1, speedup=2.0, unseen=(2, 2), tokens=9000, cost_usd=1.0),
        "fast_t2": make_run(fast, t2, speedup=1.3, tokens=9000, cost_usd=1.5),
        "slow_t1": make_run(slow, t1, outcome="incorrect", tokens=100, cost_usd=0.2),
        "slow_t2": make_run(slow, t2, speedup=3.0, flags=("overfit",), unseen=(0, 2)),
    }


def ranking_agents(page) -> list[str]:
    return page.locator("#ranking tbody tr td:nth-child(2) a").all_inner_texts()


def test_leaderboard_renders_rows_and_plots(page, live_server, board):
    page.goto(live_server.url + "/")
    assert ranking_agents(page) == ["Fast Agent", "Slow Agent"]
    for plot in ("plot-speedup", "plot-fast-p", "plot-generalization", "plot-cost"):
        page.wait_for_selector(f"#{plot} svg.main-svg", timeout=15000)
    page.locator("#ranking tbody tr").first.locator("a").first.click()
    page.wait_for_url("**/agents/fast-agent/")
    assert "Fast Agent" in page.locator("h1").inner_text()
    assert page.js_errors == []


def test_sorting_client_and_server_side(page, live_server, board):
    page.goto(live_server.url + "/")
    page.locator('a.sort[data-sort="tokens"]').click()  # most tokens first, then toggles
    assert ranking_agents(page) == ["Fast Agent", "Slow Agent"]
    page.locator('a.sort[data-sort="tokens"]').click()
    assert ranking_agents(page) == ["Slow Agent", "Fast Agent"]
    page.goto(live_server.url + "/?sort=cost")  # the server sorts cheapest first
    assert ranking_agents(page) == ["Slow Agent", "Fast Agent"]
    assert page.js_errors == []


def test_filters_narrow_the_ranking(page, live_server, board):
    page.goto(live_server.url + "/")
    page.select_option("select[name=category]", "hard")
    page.click("form.filters button")
    page.wait_for_url("**category=hard**")
    rows = page.locator("#ranking tbody tr")
    assert rows.count() == 2
    # Slow Agent's only hard run is flagged: attempted, but not correct.
    slow = rows.filter(has_text="Slow Agent")
    assert slow.locator("td").nth(3).inner_text() == "0%"  # Correct
    assert "no ranked run" in slow.locator("td.speedup-cell").inner_text()
    page.select_option("select[name=gpu]", "NVIDIA H200")
    page.select_option("select[name=category]", "cuda2cuda")
    page.click("form.filters button")
    page.wait_for_selector("#no-ranked")
    assert page.locator("figure.plot").count() == 0  # no empty panels
    assert page.js_errors == []


def test_empty_leaderboard_has_no_js_errors(page, live_server, db):
    cache.clear()
    page.goto(live_server.url + "/")
    page.wait_for_load_state("load")
    assert "No runs graded on a GPU yet" in page.content()
    assert page.locator("svg.main-svg").count() == 0
    assert page.js_errors == []


def test_run_matrix_and_compare_pages_open(page, live_server, board):
    page.goto(live_server.url + "/matrix/")
    texts = page.locator("#matrix td.cell > a:first-child").all_inner_texts()
    assert len(texts) == 4
    assert "✗ failed" in texts and "⚑ flagged" in texts and sum(t.endswith("x") for t in texts) == 2
    assert page.locator("#matrix td.cell-flagged").count() == 1
    page.locator("#matrix td.cell-failed > a:first-child").click()
    page.wait_for_url(f"**/runs/{board['slow_t1'].pk}/")
    assert "values differ" in page.content()
    assert page.locator(".highlight").count() == 1
    page.fill("input[name=b]", str(board["fast_t1"].pk))
    page.click("form.compare-form button")
    page.wait_for_url("**/compare/**")
    assert page.locator("section.side").count() == 2
    page.goto(live_server.url + "/compare/?a=1&b=zzz")
    assert "b: give a run id" in page.locator("#message").inner_text()
    assert page.js_errors == []


def test_task_page_draws_the_roofline(page, live_server, catalog_tasks):
    from tasks.models import Task

    cache.clear()
    run = make_run(make_agent("roof"), Task.objects.get(slug="silu"), speedup=1.4)
    page.goto(live_server.url + "/tasks/silu/")
    page.wait_for_selector("#plot-roofline svg.main-svg", timeout=15000)
    assert page.locator(f'#task-runs a[href="/runs/{run.pk}/"]').count() == 1
    assert page.js_errors == []


def test_run_page_follows_a_queued_evaluation(page, live_server, board):
    run = make_run(make_agent("waiting"), board["fast_t1"].task, status="queued")
    page.goto(live_server.url + f"/runs/{run.pk}/")
    assert "Grading is queued" in page.content()
    evaluation = run.submissions.get().evaluation
    evaluation.status = "passed"
    evaluation.ranked = True
    evaluation.result = {"gates": {"compile": {"passed": True, "reason": "imported"}}}
    evaluation.save()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE)
    # The page polls its status endpoint and reloads itself once the verdict is in.
    page.wait_for_selector("#live-status[data-finished='1']", timeout=15000)
    assert "Grading is queued" not in page.content()
    assert page.js_errors == []
