"""What a browser downloads for the board, measured in Chromium as bench/page_weight.py does:
at most 600 kB cold, static files compressed and named by their content's hash, and a returning
visitor fetching the page alone."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache

from bench.page_weight import BUDGET_BYTES, page_load
from tests.browser.conftest import SCREENSHOTS
from tests.leaderboard.factories import make_agent, make_run, make_task

pytestmark = pytest.mark.django_db(transaction=True)

HASHED = re.compile(r"^/static/.+\.[0-9a-f]{12}\.\w+$")


@pytest.fixture
def board():
    """Eight agents over six tasks: every figure of the board has something to draw."""
    cache.clear()  # the live server runs in this process and shares its cache
    tasks = [make_task(f"task-{n}") for n in range(6)]
    for a in range(8):
        agent = make_agent(f"agent-{a}", name=f"Agent {a}", model=f"model-{a % 3}")
        for t, task in enumerate(tasks):
            make_run(agent, task, speedup=0.5 + (a * 7 + t * 3) % 11 / 3, cost_usd=0.1 * (a + 1))


def test_the_board_weighs_under_600_kb_cold_and_its_assets_are_cached_for_good(
    page, live_server, board
):
    page.set_viewport_size({"width": 1400, "height": 900})
    cold = page_load(page.context, live_server.url + "/", "#plot-speedup svg.main-svg")
    report = "\n".join(
        f"{r.get('bytes', 0):>9,} {r['encoding']:<3} {r['url']}" for r in cold["resources"]
    )
    assert cold["bytes"] <= BUDGET_BYTES, f"{cold['bytes']:,} bytes:\n{report}"

    assets = [r for r in cold["resources"] if r["url"].startswith("/static/")]
    assert any("plotly-basic" in r["url"] for r in assets), report
    for asset in assets:
        assert HASHED.match(asset["url"]), asset
        assert (
            "immutable" in asset["cache_control"] and "max-age=315360000" in asset["cache_control"]
        )
        if asset["url"].endswith((".js", ".css")):
            assert asset["encoding"] == "br", asset

    # A returning visitor: the page again, every static file from the browser's cache.
    warm = page_load(page.context, live_server.url + "/", "#plot-speedup svg.main-svg")
    fetched = [r for r in warm["resources"] if r["url"].startswith("/static/") and r.get("bytes")]
    assert fetched == [], fetched
    page.goto(live_server.url + "/")
    page.wait_for_selector("#plot-speedup svg.main-svg")
    page.screenshot(path=str(SCREENSHOTS / "board-light-1400.png"), full_page=True)
