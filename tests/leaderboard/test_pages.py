"""Every public page renders real rows, escapes what users wrote and never shows a hidden run."""

import re

import pytest
from django.core.cache import cache

from arena.models import Run
from tests.leaderboard.factories import make_agent, make_run, make_task

pytestmark = pytest.mark.django_db

HOSTILE = '# </pre><script>alert("x")</script>\nclass ModelNew: pass\n'


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


@pytest.fixture
def board():
    fast = make_agent("fast-agent", name="Fast", model="model-a")
    slow = make_agent("slow-agent", name='<img src=x onerror="alert(1)">')
    hidden = make_agent("hidden-agent", name="Hidden Agent")
    silu, gemm = make_task("silu"), make_task("gemm", category="hard")
    runs = {
        "fast_silu": make_run(fast, silu, speedup=2.5, unseen=(2, 2), tokens=5000, cost_usd=0.8),
        "fast_gemm": make_run(fast, gemm, speedup=1.2, tokens=7000, cost_usd=1.2),
        "slow_silu": make_run(slow, silu, outcome="incorrect", code=HOSTILE, cost_usd=0.1),
        "slow_gemm": make_run(slow, gemm, speedup=4.0, flags=("no_own_kernel",)),
        "hidden": make_run(hidden, silu, speedup=9.0),
        "queued": make_run(fast, silu, status="queued"),
    }
    Run.objects.filter(pk=runs["hidden"].pk).update(hidden=True, hidden_reason="spam")
    from arena.run_scores import leaderboard_invalidate

    leaderboard_invalidate()
    return runs


def html(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def test_leaderboard_ranks_agents_with_links_and_figures(client, board):
    page = html(client, "/")
    assert page.index("/agents/fast-agent/") < page.index("/agents/slow-agent/")
    assert "hidden-agent" not in page and "Hidden Agent" not in page
    assert 'onerror="alert(1)"' not in page and "&lt;img src=x" in page
    for figure in ("plot-speedup", "plot-fast-p", "plot-generalization", "plot-cost"):
        assert f'id="{figure}-figure" type="application/json"' in page
    # plotly's partial bundle, by the name that holds its content's hash (cached for good).
    assert re.search(r'<script src="/static/vendor/plotly-basic\.min\.[0-9a-f]{12}\.js"', page)
    assert "https://" not in page and "http://" not in page.replace("http://testserver", "")
    assert f'href="/runs/{board["queued"].pk}/"' in page  # in the queue


def test_leaderboard_sorts_and_filters_server_side(client, board):
    by_tokens = html(client, "/?sort=tokens")  # fewest tokens first
    assert (
        "Tokens ▼" in by_tokens and 'Ranked by <strong id="sort-key">Tokens</strong>' in by_tokens
    )
    assert by_tokens.index("/agents/slow-agent/") < by_tokens.index("/agents/fast-agent/")
    hard = html(client, "/?category=hard&sort=speedup")
    assert hard.index("/agents/fast-agent/") < hard.index("/agents/slow-agent/")
    # A GPU with no gradings is no board: the default one (most gradings) is shown.
    unknown = html(client, "/?gpu=NVIDIA+A100")
    assert "Board: <strong>NVIDIA H200</strong>" in unknown
    nothing = html(client, "/?category=cuda2cuda")
    assert "No graded runs on NVIDIA H200 match yet." in nothing
    assert 'class="plots"' not in nothing  # no empty panels
    assert "/agents/fast-agent/" not in nothing.split("Latest graded runs")[0]
    unknown_sort = html(client, "/?sort=<script>")  # an unknown sort falls back to Speedup
    assert 'Ranked by <strong id="sort-key">Speedup</strong>' in unknown_sort


def test_leaderboard_with_no_runs_has_readable_empty_states(client, db):
    page = html(client, "/")
    assert "No runs graded on a GPU yet" in page
    assert 'class="plots"' not in page and "plot-speedup" not in page  # no empty panels


def test_agent_page_shows_categories_tasks_and_runs(client, board):
    page = html(client, "/agents/fast-agent/")
    assert "model-a" in page and "hard" in page and "torch2triton" in page
    assert f'href="/runs/{board["fast_silu"].pk}/"' in page
    assert "2.50x" in page
    html(client, "/agents/no-such-agent/", 404)


def test_hidden_agent_page_shows_no_hidden_runs(client, board):
    page = html(client, "/agents/hidden-agent/")
    assert f"/runs/{board['hidden'].pk}/" not in page
    assert "No runs graded on a GPU yet." in page


def test_matrix_cells_link_to_runs(client, board):
    page = html(client, "/matrix/")
    assert f'href="/runs/{board["fast_silu"].pk}/"' in page
    assert 'data-verdict="flagged"' in page and "⚑ flagged" in page
    assert 'data-verdict="failed"' in page and "✗ failed" in page
    assert 'class="cell cell-ranked speed-p2"' in page  # fast's 2.5x on silu
    assert 'id="matrix-legend"' in page and "Hidden Agent" not in page


def test_run_page_shows_verdict_shapes_and_escaped_solution(client, board):
    page = html(client, f"/runs/{board['slow_silu'].pk}/")
    assert "shape N=1048576 seed 0: values differ" in page  # the row's reason, as a title
    assert "5.00e-01" in page
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert 'class="highlight"' in page
    assert 'data-verdict="failed"' in page and "correctness" in page.split("</h2>")[0]
    flagged = html(client, f"/runs/{board['slow_gemm'].pk}/")
    headline = flagged.split('class="verdict-head')[1].split("</h2>")[0]
    assert 'data-verdict="flagged"' in headline and "verdict-pass" not in headline
    assert 'href="/scoring/#flag-no_own_kernel"' in headline
    assert "counted as attempted, never as correct or fast" in flagged
    passed = html(client, f"/runs/{board['fast_silu'].pk}/")
    assert 'data-verdict="ranked"' in passed and "verdict-pass" in passed
    assert "2.50x" in passed and "<dd>1.500" in passed and "unseen" in passed


def test_run_page_shows_the_library_share_as_a_figure_only_where_measured(client, board):
    run = board["fast_silu"]
    evaluation = run.submissions.get().evaluation
    evaluation.result["summary"]["library_share"] = 0.87
    evaluation.save(update_fields=["result"])
    page = html(client, f"/runs/{run.pk}/")
    assert "<dt>Library share</dt><dd>87.0%" in page
    assert "a figure, not a verdict" in page
    assert 'data-verdict="ranked"' in page  # a share of library time flags nothing
    assert "Library share" not in html(client, f"/runs/{board['slow_silu'].pk}/")


def test_hidden_and_unknown_runs_are_404(client, board):
    html(client, f"/runs/{board['hidden'].pk}/", 404)
    html(client, "/runs/999999/", 404)
    assert client.get(f"/runs/{board['hidden'].pk}/status.json").status_code == 404


def test_run_page_links_the_transcript_only_when_there_is_one(client, board):
    page = html(client, f"/runs/{board['fast_silu'].pk}/")
    assert "none uploaded" in page and 'id="transcript-link"' not in page


def test_status_endpoint_follows_a_queued_evaluation(client, board):
    run = board["queued"]
    queued = client.get(f"/runs/{run.pk}/status.json").json()
    assert queued["status"] == "evaluating" and queued["finished"] is False
    assert [e["status"] for e in queued["evaluations"]] == ["queued"]
    page = html(client, f"/runs/{run.pk}/")
    assert 'data-finished="0"' in page and "/static/leaderboard/run_status." in page
    evaluation = run.submissions.get().evaluation
    evaluation.status = "passed"
    evaluation.save()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE)
    done = client.get(f"/runs/{run.pk}/status.json").json()
    assert done["status"] == "done" and done["finished"] is True
    assert 'data-finished="1"' in html(client, f"/runs/{run.pk}/")


def test_compare_puts_two_runs_side_by_side(client, board):
    a, b = board["fast_silu"].pk, board["slow_silu"].pk
    page = html(client, f"/compare/?a={a}&b={b}")
    assert f"Run #{a} versus run #{b}" in page
    assert 'id="side-1"' in page and 'id="side-2"' in page
    assert "values differ" in page


def test_compare_rejects_bad_ids_and_offers_a_chooser_for_missing_ones(client, board):
    bad = html(client, "/compare/?a=1&b=<x>", 400)
    assert "b: give a run id" in bad and "&lt;x&gt;" in bad
    chooser = html(client, "/compare/")
    assert 'id="choose-agents"' in chooser and 'id="choose-runs"' in chooser
    assert 'name="a" inputmode="numeric" size="8" value="1"' not in chooser
    one = html(client, "/compare/?b=1")
    assert 'name="b" inputmode="numeric" size="8" value="1"' in one
    html(client, f"/compare/?a={board['fast_silu'].pk}&b=999999", 404)
    html(client, f"/compare/?a={board['hidden'].pk}&b={board['fast_silu'].pk}", 404)


def test_task_page_lists_runs_and_draws_the_roofline(client, catalog_tasks):
    from tasks.models import Task

    silu = Task.objects.get(slug="silu")
    empty = html(client, "/tasks/silu/")
    assert "No timed runs yet" in empty and "No graded runs yet." in empty
    agent = make_agent("roof-agent")
    run = make_run(agent, silu, speedup=1.5)
    hidden = make_run(agent, silu, speedup=3.0, hidden=True)
    page = html(client, "/tasks/silu/")
    assert f'href="/runs/{run.pk}/"' in page and f'href="/runs/{hidden.pk}/"' not in page
    assert 'id="plot-roofline-figure" type="application/json">{' in page
    assert "eager on NVIDIA H200" in page and "peak of NVIDIA H200" in page


def test_pages_cost_a_bounded_number_of_queries(client, board, django_assert_max_num_queries):
    for i in range(15):
        agent = make_agent(f"more-{i}")
        make_run(agent, board["fast_silu"].task, speedup=1 + i / 5, cost_usd=0.1 * i)
    cache.clear()
    with django_assert_max_num_queries(27):  # cold: the same count for 2 agents or 2,000
        html(client, "/")
    # Warm: generation checks, the latest runs and the queue; the scores come from the cache.
    a, b = board["fast_silu"].pk, board["slow_silu"].pk
    budgets = {"/": 6, "/agents/fast-agent/": 7, "/matrix/": 3, f"/compare/?a={a}&b={b}": 9}
    budgets[f"/runs/{a}/"] = 8
    for url, budget in budgets.items():
        html(client, url)
        with django_assert_max_num_queries(budget):
            html(client, url)


def test_transcript_link_is_reversed_when_the_run_has_a_trajectory():
    from leaderboard.views import transcript_url

    assert transcript_url(Run(pk=5, trajectory_id=7)) == "/runs/5/transcript"
    assert transcript_url(Run(pk=5)) is None


def test_a_grader_error_is_shown_as_the_graders_not_scored_against_the_agent(client, board):
    errored = make_run(board["fast_silu"].agent, board["fast_silu"].task, outcome="error")
    page = html(client, f"/runs/{errored.pk}/")
    assert "the grader failed, not the solution: not counted against the agent" in page
    assert 'data-verdict="grader_error"' in page
    assert "Reward" not in page  # the grader's -7 is no reward the agent earned


def test_the_task_list_and_the_board_choose_a_suite(client, board):
    from tests.leaderboard.factories import make_task

    make_task("hard-gemm", suite="kernelbench-hard")
    tasks = html(client, "/tasks/?suite=kernelbench-hard")
    assert "hard-gemm" in tasks and "/tasks/silu/" not in tasks
    assert '<option value="kernelbench-hard" selected>' in tasks
    page = html(client, "/?suite=core")
    assert '<optgroup label="core">' in page and "/agents/fast-agent/" in page
    assert "/agents/fast-agent/" not in html(client, "/?suite=kernelbench-hard").split("Latest")[0]
