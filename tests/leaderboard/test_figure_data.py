"""The figures' queries over RunScore rows made the way the write side makes them."""

from arena.models import RunScore
from leaderboard.figure_data import task_speedup_points
from tests.leaderboard.factories import make_agent, make_run, make_task


def test_best_ranked_timed_run_per_agent_and_task(db):
    alpha, beta = make_agent("alpha"), make_agent("beta")
    add, mul, div = make_task("add"), make_task("mul"), make_task("div")
    make_run(alpha, add, speedup=2.0)
    best = make_run(alpha, add, speedup=3.0)
    make_run(alpha, add, speedup=9.0, flags=("overfit",))  # faster, but not ranked
    make_run(alpha, mul, outcome="incorrect")  # no correct run on mul: no point
    make_run(alpha, div, speedup=0.5)  # slower than eager still counts
    beta_add = make_run(beta, add, speedup=1.5)
    points = task_speedup_points(scores=RunScore.objects.all())
    assert points == [
        {"agent": "alpha", "task": "add", "speedup": 3.0, "run_id": best.pk},
        {"agent": "alpha", "task": "div", "speedup": 0.5, "run_id": points[1]["run_id"]},
        {"agent": "beta", "task": "add", "speedup": 1.5, "run_id": beta_add.pk},
    ]


def test_a_tie_goes_to_the_newest_run(db):
    agent, task = make_agent("alpha"), make_task("add")
    make_run(agent, task, speedup=2.0)
    newer = make_run(agent, task, speedup=2.0)
    [only] = task_speedup_points(scores=RunScore.objects.all())
    assert only["run_id"] == newer.pk


def test_the_caller_s_filters_decide_which_runs_count(db):
    agent, task = make_agent("alpha"), make_task("add")
    make_run(agent, task, speedup=5.0, gpu="NVIDIA H100 80GB HBM3")
    on_h200 = make_run(agent, task, speedup=2.0)
    points = task_speedup_points(scores=RunScore.objects.filter(gpu="NVIDIA H200"))
    assert [(p["speedup"], p["run_id"]) for p in points] == [(2.0, on_h200.pk)]
    assert task_speedup_points(scores=RunScore.objects.filter(gpu="none")) == []
