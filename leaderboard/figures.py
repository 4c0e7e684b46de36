"""Plotly figures as plain JSON-ready dicts ({"data": [...], "layout": {...}}), drawn in the
browser by static/leaderboard/figures.js with plotly.js served from static/vendor/.

Each function returns None when it has nothing to draw, and the page says so instead.
Plain dicts rather than plotly.graph_objects: the same spec, without validating it on every
request.
"""

import math
from typing import Any

from leaderboard.scores import AgentScore
from leaderboard.selectors import SPEEDUP_BIN_LOG2

Figure = dict[str, Any]
_FONT = {"family": "system-ui, sans-serif", "size": 12}


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "font": _FONT,
        "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
        "height": 340,
        "paper_bgcolor": "#fff",
        "plot_bgcolor": "#fff",
        "legend": {"orientation": "h", "y": -0.25},
        **extra,
    }


def speedup_distribution(bins: list[dict[str, Any]]) -> Figure | None:
    """Per agent, how many ranked runs reached each speedup (bins in powers of two)."""
    if not bins:
        return None
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for b in bins:
        by_agent.setdefault(b["agent"], []).append(b)
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": agent,
            "x": [2 ** (b["log2_low"] + SPEEDUP_BIN_LOG2 / 2) for b in rows],
            "y": [b["n"] for b in rows],
            "hovertemplate": "%{y} runs near %{x:.2f}x<extra>" + agent + "</extra>",
        }
        for agent, rows in by_agent.items()
    ]
    xaxis = {"type": "log", "title": {"text": "speedup over eager (x)"}}
    return {
        "data": data,
        "layout": _layout(
            "Speedup distribution of ranked runs",
            xaxis=xaxis,
            yaxis={"title": {"text": "runs"}},
            shapes=[_vline(1.0)],
        ),
    }


def fast_p_curve(scores: list[tuple[str, AgentScore]], bins: list[dict[str, Any]]) -> Figure | None:
    """fast_p over p: p = 0 exactly, then p at every bin edge from the histogram (speedup >= p)."""
    if not scores:
        return None
    edges = [2 ** (k * SPEEDUP_BIN_LOG2) for k in range(-8, 13)]
    data = []
    for agent, score in scores:
        own = [b for b in bins if b["agent"] == agent]
        ys = [score.fast_p[0.0]]
        for p in edges:
            edge = math.log2(p)
            at_least = sum(b["n"] for b in own if b["log2_low"] >= edge - 1e-9)
            ys.append(at_least / score.runs)
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv"},
                "name": agent,
                "x": [0.0, *edges],
                "y": ys,
            }
        )
    return {
        "data": data,
        "layout": _layout(
            "fast_p: share of attempted tasks correct and at least p times faster",
            xaxis={"title": {"text": "p (speedup threshold)"}, "range": [0, 4]},
            yaxis={"title": {"text": "fast_p"}, "range": [0, 1.05], "tickformat": ".0%"},
        ),
    }


def seen_vs_unseen(scores: list[tuple[str, AgentScore]]) -> Figure | None:
    """Correct on the visible shapes against correct on unseen ones (given visible-correct)."""
    rows = [(a, s) for a, s in scores if s.runs]
    if not rows:
        return None
    agents = [a for a, _ in rows]
    unseen = [s.generalization_pass_rate for _, s in rows]
    data = [
        {
            "type": "bar",
            "name": "correct on seen shapes",
            "x": agents,
            "y": [s.correctness_rate for _, s in rows],
        },
        {
            "type": "bar",
            "name": "unseen shapes correct (of seen-correct)",
            "x": agents,
            "y": unseen,
        },
    ]
    return {
        "data": data,
        "layout": _layout(
            "Seen versus unseen correctness",
            barmode="group",
            yaxis={"range": [0, 1.05], "tickformat": ".0%"},
        ),
    }


def pareto_front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both: cheaper-or-equal and scoring higher-or-equal."""
    front: list[tuple[float, float]] = []
    for cost, score in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or score > front[-1][1]:
            front.append((cost, score))
    return front


def cost_vs_score(scores: list[tuple[str, AgentScore]]) -> Figure | None:
    """Mean cost per run against fast_1, with the Pareto front of the agents."""
    priced = [(a, s) for a, s in scores if s.cost_per_run_usd is not None]
    if not priced:
        return None
    points = [(s.cost_per_run_usd, s.fast_p[1.0]) for _, s in priced]
    front = pareto_front(points)
    data = [
        {
            "type": "scatter",
            "mode": "markers+text",
            "name": "agents",
            "x": [p[0] for p in points],
            "y": [p[1] for p in points],
            "text": [a for a, _ in priced],
            "textposition": "top center",
            "marker": {"size": 10},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": "Pareto front",
            "x": [p[0] for p in front],
            "y": [p[1] for p in front],
            "line": {"dash": "dot", "shape": "hv"},
        },
    ]
    return {
        "data": data,
        "layout": _layout(
            "Cost versus score",
            xaxis={"title": {"text": "mean cost per run (USD)"}, "rangemode": "tozero"},
            yaxis={"title": {"text": "fast_1"}, "range": [0, 1.05], "tickformat": ".0%"},
        ),
    }


def roofline_scatter(
    *,
    regime: str,
    shape_labels: list[str],
    runs: list[dict[str, Any]],
    baselines: list[dict[str, Any]],
    peak: float | None,
    peak_label: str,
) -> Figure | None:
    """Achieved TFLOP/s (compute-bound) or GB/s (memory-bound) per shape for every timed run,
    with the GPU's peak and the eager and SOTA baselines as lines.

    runs: {"label", "run_id", "values": [achieved or None per shape]}; baselines:
    {"name", "values": [...]} with the same shape order.
    """
    if not any(v is not None for r in runs for v in r["values"]):
        return None
    unit = "TFLOP/s" if regime == "compute" else "GB/s"
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": r["label"],
            "x": shape_labels,
            "y": r["values"],
            "customdata": [r["run_id"]] * len(shape_labels),
            "hovertemplate": "%{x}: %{y:.3g} " + unit + "<extra>run %{customdata}</extra>",
        }
        for r in runs
    ]
    data += [
        {
            "type": "scatter",
            "mode": "lines",
            "name": b["name"],
            "x": shape_labels,
            "y": b["values"],
            "line": {"dash": "dash"},
            "connectgaps": True,
        }
        for b in baselines
        if any(v is not None for v in b["values"])
    ]
    if peak:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": peak_label,
                "x": shape_labels,
                "y": [peak] * len(shape_labels),
                "line": {"color": "#b3261e"},
            }
        )
    return {
        "data": data,
        "layout": _layout(
            f"Achieved {unit} per shape",
            xaxis={"type": "category", "title": {"text": "shape"}},
            yaxis={"type": "log", "title": {"text": unit}},
            height=380,
        ),
    }


def _vline(x: float) -> dict[str, Any]:
    return {
        "type": "line",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "yref": "paper",
        "line": {"color": "#7a7f87", "dash": "dot"},
    }
