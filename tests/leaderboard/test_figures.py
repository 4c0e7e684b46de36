"""Figures are plotly specs built from the scores; nothing to draw gives None, never a bad spec.
Each is held to what makes it readable: its axes' ranges and types, no text printed over points,
names escaped, and a layout that fits a phone."""

import json
import math

import pytest

from leaderboard import figures
from leaderboard.head_to_head import Side, TaskDuel
from leaderboard.scores import AgentScore

TIMES = "\N{MULTIPLICATION SIGN}"


def score(fast_1: float, cost: float | None, runs: int = 4, agent: str = "x") -> AgentScore:
    return AgentScore(
        agent=agent,
        runs=runs,
        tasks_attempted=runs,
        compile_rate=1.0,
        correctness_rate=0.75,
        fast_p={0.0: 0.75, 1.0: fast_1, 1.5: 0.25, 2.0: 0.0},
        speedup_geomean_correct=1.2,
        speedup_geomean_all=1.1,
        roofline_mean=0.3,
        generalization_pass_rate=0.5,
        overfit_count=0,
        flagged=0,
        cost_per_run_usd=cost,
    )


def point(agent: str, task: str, speedup: float, run_id: int) -> dict:
    return {"agent": agent, "task": task, "speedup": speedup, "run_id": run_id}


POINTS = [
    point("slow", "add", 0.5, 1),
    point("slow", "matmul", 2.0, 2),
    point("fast", "add", 4.0, 3),
    point("fast", "matmul", 9.0, 4),
    point("fast", "softmax", 1.0, 5),
]
BINS = [
    {"agent": "a", "log2_low": 0.0, "n": 1},  # one run in [1x, 1.19x)
    {"agent": "a", "log2_low": 1.0, "n": 2},  # two in [2x, 2.38x)
]


def tick_labels(axis: dict) -> dict[float, str]:
    return dict(zip(axis["tickvals"], axis["ticktext"], strict=True))


def every_figure() -> dict[str, dict]:
    scored = [("a", score(0.5, 1.0)), ("b", score(0.25, 2.0))]
    return {
        "strip": figures.task_speedup_strip(POINTS),
        "histogram": figures.speedup_distribution(BINS),
        "fast_p": figures.fast_p_curve([("a", score(0.75, None))], BINS),
        "generalization": figures.seen_vs_unseen(scored),
        "cost": figures.cost_vs_score(scored),
        "roofline": figures.roofline_scatter(
            regime="memory",
            shape_labels=["N=1"],
            runs=[{"label": "#1 a", "run_id": 1, "values": [100.0]}],
            baselines=[],
            peak=None,
            peak_label="peak",
        ),
    }


# --- the per-task speedup strip ---------------------------------------------------------------


def rows_top_down(fig: dict) -> list[str]:
    yaxis = fig["layout"]["yaxis"]
    by_height = sorted(zip(yaxis["tickvals"], yaxis["ticktext"], strict=True), reverse=True)
    return [text for _, text in by_height]


def test_strip_has_a_row_per_agent_best_geometric_mean_on_top():
    fig = figures.task_speedup_strip(POINTS)
    assert rows_top_down(fig) == ["fast", "slow"]
    dots = {t["name"]: t for t in fig["data"] if t.get("customdata")}
    assert dots["fast"]["x"] == [4.0, 9.0, 1.0] and dots["fast"]["customdata"] == [3, 4, 5]
    assert dots["slow"]["text"] == ["add", "matmul"]  # task names, on hover only
    assert all(t["mode"] == "markers" for t in dots.values())
    # Each dot stays within its own row, and one task sits at the same height in every row.
    for trace in dots.values():
        row = round(sum(trace["y"]) / len(trace["y"]))
        assert all(abs(y - row) <= 0.25 for y in trace["y"])
    assert dots["fast"]["y"][0] - 1 == pytest.approx(dots["slow"]["y"][0])
    means = next(t for t in fig["data"] if t["name"].startswith("geometric mean"))
    assert means["x"] == [pytest.approx(36 ** (1 / 3)), pytest.approx(1.0)]


def test_strip_is_on_a_log_axis_with_1x_marked_and_links_to_runs():
    fig = figures.task_speedup_strip(POINTS)
    xaxis = fig["layout"]["xaxis"]
    assert xaxis["type"] == "log"
    low, high = xaxis["range"]  # in decades
    assert low < math.log10(0.5) and high > math.log10(9.0)
    assert tick_labels(xaxis)[1.0] == f"1{TIMES}"
    reference = fig["data"][0]
    assert reference["x"] == [1.0, 1.0] and "eager" in reference["name"]
    assert fig["run_links"] is True


def test_strip_keeps_1x_in_range_when_every_run_is_faster():
    fig = figures.task_speedup_strip([point("a", "t", 3.0, 1)])
    low, high = fig["layout"]["xaxis"]["range"]
    assert low < 0 < high and high > math.log10(3.0)


def test_strip_grows_with_its_agents():
    many = [point(f"agent-{i}", "t", 1.5, i) for i in range(10)]
    few = figures.task_speedup_strip(many[:2])["layout"]["height"]
    assert figures.task_speedup_strip(many)["layout"]["height"] >= few + 8 * 34


# --- the speedup histogram --------------------------------------------------------------------


def test_speedup_histogram_is_true_bars_whose_counts_start_at_0():
    fig = figures.speedup_distribution([{"agent": "a", "log2_low": 1.0, "n": 3}])
    bars = fig["data"][0]
    assert bars["type"] == "bar" and bars["width"] == 0.25
    assert bars["x"] == [pytest.approx(1.125)] and bars["y"] == [3]  # the bin's centre, in log2
    yaxis = fig["layout"]["yaxis"]
    assert yaxis["range"][0] == 0 and yaxis["rangemode"] == "tozero" and yaxis["range"][1] >= 3
    xaxis = fig["layout"]["xaxis"]
    assert xaxis["range"][0] <= 0 < 1.25 <= xaxis["range"][1]  # 1x and the bin in view
    assert tick_labels(xaxis)[0] == f"1{TIMES}"
    assert fig["layout"]["barmode"] == "stack"


def test_speedup_histogram_labels_slowdowns_as_fractions():
    fig = figures.speedup_distribution([{"agent": "a", "log2_low": -2.0, "n": 1}])
    ticks = tick_labels(fig["layout"]["xaxis"])
    assert ticks[-2] == f"1/4{TIMES}" and ticks[0] == f"1{TIMES}"


# --- fast_p -----------------------------------------------------------------------------------


def test_fast_p_curve_reads_the_histogram_at_bin_edges():
    fig = figures.fast_p_curve([("a", score(0.75, None))], BINS)
    curve = dict(zip(fig["data"][0]["x"], fig["data"][0]["y"], strict=True))
    assert curve[0.0] == 0.75  # fast_0 from the scores
    assert curve[1.0] == pytest.approx(3 / 4) and curve[2.0] == pytest.approx(2 / 4)
    assert curve[2**0.25] == pytest.approx(2 / 4) and curve[2**1.25] == 0.0


def test_fast_p_runs_from_0_to_just_past_the_fastest_run():
    fig = figures.fast_p_curve([("a", score(0.75, None))], BINS)
    low, high = fig["layout"]["xaxis"]["range"]
    assert low == 0 and 2**1.25 < high <= 2**1.25 * 1.2  # the fastest bin ends at 2.38x
    assert fig["data"][0]["x"][-1] == high  # the curve reaches the edge
    yaxis = fig["layout"]["yaxis"]
    assert yaxis["range"] == [0, 1] and yaxis["tickformat"] == ".0%"


def test_fast_p_shows_2x_at_least_and_far_more_when_a_run_reached_it():
    slow = figures.fast_p_curve([("a", score(0.75, None))], [BINS[0]])
    assert slow["layout"]["xaxis"]["range"] == [0, 2.0]
    assert figures.fast_p_curve([("a", score(0.0, None))], [])["layout"]["xaxis"]["range"] == [
        0,
        2.0,
    ]
    fast = [{"agent": "a", "log2_low": 4.0, "n": 1}]  # one run in [16x, 19x)
    high = figures.fast_p_curve([("a", score(0.75, None))], fast)["layout"]["xaxis"]["range"][1]
    assert 2**4.25 < high < 25


# --- seen versus unseen -----------------------------------------------------------------------


def test_seen_vs_unseen_names_agents_on_an_axis_that_makes_room_for_them():
    long = "claude-code-opus-4-1-high-effort"
    fig = figures.seen_vs_unseen([(long, score(0.5, None)), ("b", score(0.2, None))])
    seen_key, unseen_key, first, second = fig["data"]
    # The legend names the two markers in grey; each agent's row is drawn in its own colour.
    assert (seen_key["name"], unseen_key["name"]) == (
        "correct on seen shapes",
        "correct on seen and unseen shapes",
    )
    assert seen_key["marker"]["color"] == unseen_key["marker"]["color"] == figures._GREY
    assert first["x"] == [0.75, 0.5] and first["y"] == [long, long]
    assert first["marker"]["symbol"] == ["circle-open", "circle"]
    assert first["line"]["color"] != second["line"]["color"]
    assert first["showlegend"] is False
    yaxis = fig["layout"]["yaxis"]
    assert yaxis["automargin"] is True and yaxis["autorange"] == "reversed"
    wrapped = yaxis["ticktext"][0]
    assert "<br>" in wrapped and wrapped.replace("<br>", "") == long
    assert max(len(line) for line in wrapped.split("<br>")) <= 20
    assert fig["layout"]["xaxis"]["range"] == [0, 1]
    legend = fig["layout"]["legend"]
    assert legend["orientation"] == "h" and legend["yref"] == "container" and legend["y"] == 0


def test_wrapping_keeps_a_short_tail_on_its_line():
    assert figures._wrap("agent-codex-gpt-5") == "agent-codex-gpt-5"
    assert figures._wrap("a-b", width=1) == "a-b"


# --- cost versus score ------------------------------------------------------------------------


def test_cost_figure_has_a_trace_per_priced_agent_and_the_front():
    fig = figures.cost_vs_score(
        [
            ("a", score(0.5, 1.0)),
            ("b", score(0.25, 2.0)),
            ("c", score(0.9, None)),
            ("free", score(0.9, 0.0)),  # a log axis has no 0
        ]
    )
    front, *agents = fig["data"]
    assert front["name"] == "Pareto front" and front["x"] == [1.0] and front["y"] == [0.5]
    assert [t["name"] for t in agents] == ["a", "b"]
    assert [(t["x"], t["y"]) for t in agents] == [([1.0], [0.5]), ([2.0], [0.25])]
    xaxis, yaxis = fig["layout"]["xaxis"], fig["layout"]["yaxis"]
    assert xaxis["type"] == "log" and xaxis["range"][0] < 0 < math.log10(2.0) < xaxis["range"][1]
    assert yaxis.get("type", "linear") == "linear" and yaxis["range"] == [0, 1]


def test_cost_figure_prints_no_text_on_the_plot():
    scored = [(f"agent-{i}", score(0.5, 1.0)) for i in range(12)]  # twelve at one spot
    fig = figures.cost_vs_score(scored)
    for trace in fig["data"]:
        assert "text" not in trace and "texttemplate" not in trace
        assert "text" not in trace["mode"]
    assert not fig["layout"].get("annotations")
    styles = {(t["marker"]["color"], t["marker"]["symbol"]) for t in fig["data"][1:]}
    assert len(styles) == 12  # told apart in the legend past ten colours


def test_cost_figure_is_none_without_a_known_cost():
    assert figures.cost_vs_score([("c", score(0.9, None))]) is None
    assert figures.cost_vs_score([("c", score(0.9, None)), ("d", score(0.5, 0.0))]) is None
    assert figures.cost_vs_score([]) is None


def test_pareto_front_by_hand():
    points = [(1.0, 0.2), (2.0, 0.5), (1.5, 0.1), (3.0, 0.5), (4.0, 0.9), (0.5, 0.0)]
    assert figures.pareto_front(points) == [(0.5, 0.0), (1.0, 0.2), (2.0, 0.5), (4.0, 0.9)]
    assert figures.pareto_front([]) == []


# --- every figure -----------------------------------------------------------------------------


def test_empty_inputs_draw_nothing():
    assert figures.task_speedup_strip([]) is None
    assert figures.speedup_distribution([]) is None
    assert figures.fast_p_curve([], []) is None
    assert figures.seen_vs_unseen([]) is None
    assert figures.seen_vs_unseen([("a", score(0.0, None, runs=0))]) is None
    assert figures.cost_vs_score([]) is None
    none_timed = figures.roofline_scatter(
        regime="memory",
        shape_labels=["N=1"],
        runs=[{"label": "#1", "run_id": 1, "values": [None]}],
        baselines=[],
        peak=4800.0,
        peak_label="peak",
    )
    assert none_timed is None


@pytest.mark.parametrize("name", sorted(every_figure()))
def test_every_figure_fits_the_width_it_is_given(name):
    fig = every_figure()[name]
    layout = fig["layout"]
    assert "width" not in layout and layout["autosize"] is True
    margin = layout["margin"]
    assert max(margin["l"], margin["r"], margin["b"]) <= 24  # the axes grow them as needed
    assert layout["xaxis"]["automargin"] is True and layout["yaxis"]["automargin"] is True
    assert layout["legend"]["orientation"] == "h"
    json.dumps(fig, allow_nan=False)


def test_names_are_escaped_for_plotly():
    hostile = '<a href="x">evil</a>'
    strip = figures.task_speedup_strip([point(hostile, hostile, 2.0, 1)])
    cost = figures.cost_vs_score([(hostile, score(0.5, 1.0))])
    seen = figures.seen_vs_unseen([(hostile, score(0.5, None))])
    drawn = json.dumps([strip["data"], strip["layout"], cost["data"], seen["layout"]])
    assert "<a " not in drawn and "&lt;a href=" in drawn


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
    assert fig["data"][0]["customdata"] == [7, 7] and fig["run_links"] is True
    json.dumps(fig, allow_nan=False)


# --- one colour per agent ---------------------------------------------------------------------


def test_an_agent_has_one_colour_on_every_figure_given_its_styles():
    """starter (id 1) and weak (id 3) keep their colours whatever other agents a figure has."""
    styles = figures.agent_styles({"starter": 1, "reference": 2, "weak": 3})
    assert styles["starter"]["color"] == figures._COLORS[0]
    assert styles["weak"]["color"] == figures._COLORS[2]
    scores = [("weak", score(0.5, 1.0)), ("starter", score(0.2, 2.0))]
    bins = [
        {"agent": "weak", "log2_low": 0.0, "n": 1},
        {"agent": "starter", "log2_low": -1.0, "n": 1},
    ]
    points = [{"agent": "weak", "task": "t", "speedup": 1.2, "run_id": 1}]
    colours = {
        "fast_p": {
            t["name"]: t["line"]["color"]
            for t in figures.fast_p_curve(scores, bins, styles=styles)["data"]
        },
        "histogram": {
            t["name"]: t["marker"]["color"]
            for t in figures.speedup_distribution(bins, styles=styles)["data"]
        },
        "cost": {
            t["name"]: t["marker"]["color"]
            for t in figures.cost_vs_score(scores, styles=styles)["data"][1:]
        },
        "seen": {
            t["name"]: t["line"]["color"]
            for t in figures.seen_vs_unseen(scores, styles=styles)["data"][2:]
        },
        "strip": {
            t["name"]: t["marker"]["color"]
            for t in figures.task_speedup_strip(points, styles=styles)["data"][2:]
        },
    }
    for name, by_agent in colours.items():
        assert by_agent["weak"] == figures._COLORS[2], name
        if "starter" in by_agent:
            assert by_agent["starter"] == figures._COLORS[0], name


def test_agents_past_the_palette_differ_by_marker_dash_and_pattern():
    styles = figures.agent_styles({"first": 1, "eleventh": 11})
    assert styles["first"]["color"] == styles["eleventh"]["color"]
    for key in ("symbol", "dash", "pattern"):
        assert styles["first"][key] != styles["eleventh"][key]


def test_head_to_head_scatter_colours_each_task_by_its_winner():
    duels = [
        TaskDuel("t1", Side(1, 1, 2.0), Side(1, 1, 1.0)),
        TaskDuel("t2", Side(1, 1, 1.0), Side(1, 1, 3.0)),
        TaskDuel("t3", Side(1), Side(1, 1, 3.0)),  # A has no ranked run: not drawn
    ]
    styles = figures.agent_styles({"a": 1, "b": 2})
    fig = figures.head_to_head_scatter(duels, a="a", b="b", styles=styles)
    diagonal, tasks = fig["data"]
    assert diagonal["name"] == "equal speedups"
    assert tasks["x"] == [2.0, 1.0] and tasks["y"] == [1.0, 3.0]
    assert tasks["marker"]["color"] == [figures._COLORS[0], figures._COLORS[1]]
    assert figures.head_to_head_scatter(duels[2:], a="a", b="b") is None
