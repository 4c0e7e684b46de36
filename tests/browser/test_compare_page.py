"""The compare page in Chromium, at a desktop and a phone width: no page-level sideways scroll,
shape rows lined up (unseen ones marked as matched by kind), a coloured diff, working links."""

import json

import pytest
from django.core.cache import cache

from arena.run_logs import trajectory_upload
from evaluator.models import Evaluation, EvaluationShape
from tests.browser.conftest import SCREENSHOTS
from tests.leaderboard.factories import make_agent, make_run, make_task

pytestmark = pytest.mark.django_db(transaction=True)

VISIBLE = [{"M": 4096, "N": 4096, "K": 4096}, {"M": 1024, "N": 8192, "K": 512}]
LONG_LINE = "    return torch.matmul(" + ", ".join(f"weight_{i}" for i in range(40)) + ")\n"
SOLUTION_A = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n"
SOLUTION_B = SOLUTION_A.replace("a, b", "a, b, c=None") + LONG_LINE


def with_unseen(run, shapes: list[dict], *, correct: bool) -> None:
    """Unseen rows as the grader stores them after the visible ones, and a long gate reason."""
    evaluation = Evaluation.objects.get(submission__run=run)
    start = evaluation.shapes.count()
    EvaluationShape.objects.bulk_create(
        EvaluationShape(
            evaluation=evaluation, index=start + i, shape=shape, seen=False, correct=correct
        )
        for i, shape in enumerate(shapes)
    )
    reason = "incorrect on 1 of 2 unseen shapes, e.g. " + "M=4097,N=31,K=129;" * 12
    evaluation.result["gates"]["generalization"] = {
        "passed": correct,
        "reason": reason,
        "detail": {"error": "AssertionError: " + "x" * 300},
    }
    evaluation.save()


@pytest.fixture
def runs(settings, tmp_path):
    cache.clear()
    settings.MEDIA_ROOT = tmp_path / "media"
    task = make_task("matmul-with-a-rather-long-task-slug-for-narrow-screens", category="hard")
    task.manifest = {**task.manifest, "visible_shapes": VISIBLE}
    task.save()
    a = make_run(make_agent("fast", name="Fast Agent"), task, speedup=2.4, code=SOLUTION_A)
    b = make_run(make_agent("slow", name="Slow Agent"), task, speedup=1.1, code=SOLUTION_B)
    with_unseen(a, [{"K": 64, "M": 17, "N": 8}, {"K": 8192, "M": 8192, "N": 4096}], correct=True)
    with_unseen(b, [{"K": 32, "M": 9, "N": 16}, {"K": 4096, "M": 8192, "N": 8192}], correct=False)
    log = [
        {"role": "user", "content": "Write the kernel."},
        {"role": "assistant", "content": "Ok."},
    ]
    for run in (a, b):
        trajectory_upload(data=json.dumps(log).encode(), filename="chat.json", run_id=run.pk)
    return a, b


def no_page_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("width", [1400, 390])
def test_compare_fits_the_window_and_lines_up_the_shapes(page, live_server, runs, width):
    a, b = runs
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/compare/?a={a.pk}&b={b.pk}")
    assert no_page_scroll(page), page.evaluate("document.documentElement.scrollWidth")
    rows = page.locator("table.compare-shapes tbody tr.shape-row")
    assert rows.count() == 4
    assert page.locator("td.a-correct").count() == page.locator("td.b-correct").count() == 4
    assert page.locator('tr[data-match="exact"]').count() == 2
    by_kind = page.locator('tr[data-match="kind"]')
    assert by_kind.count() == 2
    assert by_kind.locator(".by-kind").all_inner_texts() == ["matched by kind"] * 2
    assert page.locator("table.compare-gates tbody tr").count() == 4
    assert page.locator("pre.diff .diff-add").count() == 2
    assert page.locator("pre.diff .diff-del").count() == 1
    sides = page.locator("section.compare-side")
    first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
    if width >= 800:
        assert first["y"] == second["y"] and first["x"] < second["x"]  # side by side
    else:
        assert second["y"] >= first["y"] + first["height"]  # stacked
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"compare-{width}.png"), full_page=True)
    assert page.js_errors == []


def test_transcript_and_run_links_open_their_pages(page, live_server, runs):
    a, b = runs
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{live_server.url}/compare/?a={a.pk}&b={b.pk}")
    page.locator("#side-2 a.transcript-link").click()
    page.wait_for_url(f"**/runs/{b.pk}/transcript")
    page.go_back()
    page.locator("#side-1 a.run-link").click()
    page.wait_for_url(f"**/runs/{a.pk}/")
    page.go_back()
    page.locator("#side-2 a.solution-link").click()
    page.wait_for_url("**#solution-b")
    assert page.locator("#solution-b .highlight").is_visible()
