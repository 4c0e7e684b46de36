"""The public read API: shapes, pagination, filters, validation and hidden-run exclusion."""

import pytest
from django.core.cache import cache

from arena.models import Run
from arena.run_scores import leaderboard_invalidate
from tests.leaderboard.factories import make_agent, make_run, make_task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


@pytest.fixture
def board():
    fast, slow, ghost = make_agent("fast"), make_agent("slow"), make_agent("ghost")
    t1, t2 = make_task("t1"), make_task("t2", category="hard")
    runs = [
        make_run(fast, t1, speedup=2.0, cost_usd=1.0),
        make_run(fast, t2, speedup=1.5, gpu="NVIDIA H100 80GB HBM3"),
        make_run(slow, t1, outcome="incorrect"),
        make_run(slow, t2, speedup=3.0, flags=("overfit",), unseen=(1, 4)),
        make_run(ghost, t1, speedup=50.0, hidden=True),
        make_run(fast, t1, status="queued"),
    ]
    leaderboard_invalidate()
    return runs


def get(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.content[:300])
    return response.json()


def test_leaderboard_ranks_agents_and_paginates(client, board):
    body = get(client, "/api/v1/leaderboard")
    assert body["count"] == 2
    first, second = body["results"]
    # The default board is the GPU with the most gradings; fast's H100 run is on another.
    assert (first["rank"], first["agent"]["slug"], first["gpu"]) == (1, "fast", "NVIDIA H200")
    # fast's one ranked run against slow's failure and flag: the intervals do not meet.
    assert (first["rank_best"], first["rank_worst"]) == (1, 1)
    assert (second["score"]["ranked_runs"], second["score"]["unranked_runs"]) == (0, 2)
    assert first["score"]["runs"] == 1
    assert first["score"]["fast_p"] == {"p0": 1.0, "p1": 1.0, "p1_5": 1.0, "p2": 0.0}
    assert first["score"]["cost_per_run_usd"] == 1.0
    assert first["score"]["fast_1_repeats"] == {"mean": 1.0, "spread": 0.0}
    assert first["score"]["intervals"]["fast_1"] == [1.0, 1.0]
    assert first["score"]["preliminary"] is True
    assert second["score"]["flagged"] == 1 and second["score"]["overfit_count"] == 1
    assert second["score"]["flag_counts"] == {"overfit": 1}
    assert second["score"]["flagged_share"] == 0.5
    assert second["score"]["intervals"]["fast_1"] == [0.0, 0.0]
    page = get(client, "/api/v1/leaderboard?limit=1&offset=1")
    assert [r["agent"]["slug"] for r in page["results"]] == ["slow"]
    assert page["previous"] and page["next"] is None


def test_leaderboard_filters_and_sorts(client, board):
    h100 = get(client, "/api/v1/leaderboard?gpu=NVIDIA%20H100%2080GB%20HBM3")
    assert [r["agent"]["slug"] for r in h100["results"]] == ["fast"]
    hard = get(client, "/api/v1/leaderboard?category=hard&sort=runs")
    assert {r["agent"]["slug"] for r in hard["results"]} == {"slow"}  # on the H200
    hard_h100 = get(client, "/api/v1/leaderboard?category=hard&gpu=NVIDIA%20H100%2080GB%20HBM3")
    assert {r["agent"]["slug"] for r in hard_h100["results"]} == {"fast"}
    assert get(client, "/api/v1/leaderboard?suite=core@nothing")["count"] == 0


def test_bad_query_parameters_name_the_field(client, board):
    body = get(client, "/api/v1/leaderboard?category=gpu-magic", 400)
    assert "category" in str(body)
    assert "sort" in str(get(client, "/api/v1/leaderboard?sort=drop", 400))
    assert "limit" in str(get(client, "/api/v1/runs?limit=0", 400))
    assert "status" in str(get(client, "/api/v1/runs?status=sleeping", 400))


def test_agents_list_and_detail(client, board):
    body = get(client, "/api/v1/agents")
    assert [a["slug"] for a in body["results"]] == ["fast", "slow"]
    detail = get(client, "/api/v1/agents/fast")
    assert detail["gpu"] == "NVIDIA H200" and detail["score"]["runs"] == 1
    assert {c["category"] for c in detail["categories"]} == {"torch2triton"}
    assert {t["task"]: t["best_speedup"] for t in detail["tasks"]} == {"t1": 2.0, "t2": 1.5}
    ghost = get(client, "/api/v1/agents/ghost")
    assert ghost["score"] is None and ghost["tasks"] == []
    get(client, "/api/v1/agents/nobody", 404)


def test_tasks_list_and_detail(client, board):
    body = get(client, "/api/v1/tasks?category=hard")
    assert [t["slug"] for t in body["results"]] == ["t2"]
    detail = get(client, "/api/v1/tasks/t1")
    assert detail["visible_shapes"] == [{"N": 1 << 20}] and detail["bytes"] == "8 * N"
    get(client, "/api/v1/tasks/nope", 404)


def test_runs_list_filters_and_hides(client, board):
    body = get(client, "/api/v1/runs")
    ids = [r["id"] for r in body["results"]]
    assert board[4].pk not in ids and len(ids) == 5
    assert ids == sorted(ids, reverse=True)
    queued = next(r for r in body["results"] if r["id"] == board[5].pk)
    assert queued["verdict"] == "pending" and queued["grading_status"] is None
    assert queued["status"] == "evaluating"
    verdicts = {
        r["id"]: (r["verdict"], r["verdict_flags"], r["verdict_gate"]) for r in body["results"]
    }
    assert verdicts[board[0].pk] == ("ranked", [], "")
    assert verdicts[board[2].pk] == ("failed", [], "correctness")
    assert verdicts[board[3].pk] == ("flagged", ["overfit"], "")
    assert {r["verdict_label"] for r in body["results"]} == {
        "ranked",
        "failed",
        "flagged",
        "pending",
    }
    assert get(client, "/api/v1/runs?agent=slow&task=t2")["results"][0]["flagged"] is True
    assert get(client, "/api/v1/runs?category=hard")["count"] == 2
    assert get(client, "/api/v1/runs?status=evaluating")["count"] == 1
    assert get(client, "/api/v1/runs?gpu=NVIDIA%20H100%2080GB%20HBM3")["count"] == 1
    assert get(client, "/api/v1/runs?agent=ghost")["count"] == 0
    assert get(client, "/api/v1/runs?flag=overfit")["results"][0]["id"] == board[3].pk
    assert get(client, "/api/v1/runs?status=flagged")["count"] == 1  # the older name
    assert get(client, "/api/v1/runs?verdict=flagged")["count"] == 1
    assert get(client, "/api/v1/runs?verdict=ranked")["count"] == 2
    assert get(client, "/api/v1/runs?verdict=failed")["count"] == 1
    assert get(client, "/api/v1/runs?verdict=pending")["count"] == 1
    assert get(client, "/api/v1/runs?transcript=yes")["count"] == 0
    assert get(client, "/api/v1/runs?suite=core")["count"] == 5
    page = get(client, "/api/v1/runs?limit=2&offset=2")
    assert [r["id"] for r in page["results"]] == ids[2:4]


def test_run_detail_and_hidden_runs(client, board):
    body = get(client, f"/api/v1/runs/{board[0].pk}")
    assert body["agent"]["slug"] == "fast"
    evaluation = body["evaluations"][0]
    assert evaluation["status"] == "passed" and evaluation["summary"]["speedup_vs_eager"] == 2.0
    assert (body["verdict"], evaluation["verdict"], evaluation["verdict_label"]) == (
        "ranked",
        "ranked",
        "ranked",
    )
    flagged = get(client, f"/api/v1/runs/{board[3].pk}")
    assert flagged["verdict"] == "flagged"
    assert flagged["evaluations"][0]["verdict_flags"] == ["overfit"]
    assert get(client, f"/api/v1/runs/{board[5].pk}")["verdict"] == "pending"
    assert evaluation["gates"]["compile"]["passed"] is True
    get(client, f"/api/v1/runs/{board[4].pk}", 404)
    Run.objects.filter(pk=board[0].pk).update(hidden=True)
    leaderboard_invalidate()
    get(client, f"/api/v1/runs/{board[0].pk}", 404)
    ranking = get(client, "/api/v1/leaderboard")["results"]
    assert [(r["agent"]["slug"], r["score"]["runs"]) for r in ranking] == [("slow", 2)]


def test_read_endpoints_need_no_token_and_bounded_queries(
    client, board, django_assert_max_num_queries
):
    for i in range(10):
        make_run(make_agent(f"a{i}"), board[0].task, speedup=1 + i)
    get(client, "/api/v1/leaderboard")
    with django_assert_max_num_queries(2):
        get(client, "/api/v1/leaderboard")
    with django_assert_max_num_queries(3):  # count, page
        get(client, "/api/v1/runs?limit=20")
    with django_assert_max_num_queries(6):
        get(client, f"/api/v1/runs/{board[0].pk}")


def test_schema_describes_the_read_endpoints(client, db):
    response = client.get("/api/v1/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    text = response.content.decode()
    for path in ("/api/v1/leaderboard", "/api/v1/agents/{slug}", "/api/v1/runs/{run_id}"):
        assert path in text
    assert "fast_1_repeats" in text and "p1_5" in text
