"""Figures are plotly specs built from the scores; nothing to draw gives None, never a bad spec."""

import json

import pytest

from leaderboard import figures
from leaderboard.scores import AgentScore


def score(fast_1: float, cost: float | None, runs: int = 4) -> AgentScore:
    return AgentScore(
        agent="x",
        runs=runs,
        tasks_attempted=runs,
        compile_rate=1.0,
        correctness_rate=0.75,
        fast_p={0.0: 0.75, 1.0: fast_1, 1.5: 0.25, 2.0: 0.0},
        speedup_geomean_correct=1.2,
        speedup_geomean_all=1.1,
        roofline_geomean=0.3,
        generalization_pass_rate=0.5,
        overfit_count=0,
        flagged=0,
        cost_per_run_usd=cost,
    )


def test_pareto_front_by_hand():
    points = [(1.0, 0.2), (2.0, 0.5), (1.5, 0.1), (3.0, 0.5), (4.0, 0.9), (0.5, 0.0)]
    assert figures.pareto_front(points) == [(0.5, 0.0), (1.0, 0.2), (2.0, 0.5), (4.0, 0.9)]
    assert figures.pareto_front([]) == []


def test_cost_figure_marks_the_front_and_skips_unpriced_agents():
    fig = figures.cost_vs_score(
        [("a", score(0.5, 1.0)), ("b", score(0.25, 2.0)), ("c", score(0.9, None))]
    )
    agents, front = fig["data"]
    assert agents["text"] == ["a", "b"] and front["x"] == [1.0] and front["y"] == [0.5]
    assert figures.cost_vs_score([("c", score(0.9, None))]) is None


def test_fast_p_curve_reads_the_histogram_at_bin_edges():
    bins = [
        {"agent": "a", "log2_low": 0.0, "n": 1},  # one run in [1x, 1.19x)
        {"agent": "a", "log2_low": 1.0, "n": 2},  # two in [2x, 2.38x)
    ]
    fig = figures.fast_p_curve([("a", score(0.75, None))], bins)
    curve = dict(zip(fig["data"][0]["x"], fig["data"][0]["y"], strict=True))
    assert curve[0.0] == 0.75  # fast_0 from the scores
    assert curve[1.0] == pytest.approx(3 / 4) and curve[2.0] == pytest.approx(2 / 4)
    assert curve[2**0.25] == pytest.approx(2 / 4) and curve[4.0] == 0.0


def test_speedup_distribution_places_bins_at_their_centres():
    fig = figures.speedup_distribution([{"agent": "a", "log2_low": 1.0, "n": 3}])
    assert fig["data"][0]["x"] == [pytest.approx(2**1.125)] and fig["data"][0]["y"] == [3]
    assert fig["layout"]["xaxis"]["type"] == "log"


def test_empty_inputs_draw_nothing():
    assert figures.speedup_distribution([]) is None
    assert figures.fast_p_curve([], []) is None
    assert figures.seen_vs_unseen([]) is None
    none_timed = figures.roofline_scatter(
        regime="memory",
        shape_labels=["N=1"],
        runs=[{"label": "#1", "run_id": 1, "values": [None]}],
        baselines=[],
        peak=4800.0,
        peak_label="peak",
    )
    assert none_timed is None


def test_roofline_has_runs_baselines_and_peak_and_is_json():
    fig = figures.roofline_scatter(
        regime="compute",
        shape_labels=["M=1", "M=2"],
        runs=[{"label": "#7 a", "run_id": 7, "values": [10.0, None]}],
        baselines=[
            {"name": "eager on H200", "values": [5.0, 6.0]},
            {"name": "SOTA", "values": [None, None]},
        ],
        peak=989.0,
        peak_label="peak of H200",
    )
    names = [trace["name"] for trace in fig["data"]]
    assert names == ["#7 a", "eager on H200", "peak of H200"]  # an empty SOTA line is left out
    assert fig["data"][-1]["y"] == [989.0, 989.0]
    assert "TFLOP/s" in fig["layout"]["yaxis"]["title"]["text"]
    json.dumps(fig, allow_nan=False)
