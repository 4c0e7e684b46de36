"""Plotly figures as plain JSON-ready dicts ({"data": [...], "layout": {...}}), drawn in the
browser by static/leaderboard/figures.js with plotly.js served from static/vendor/.

Each function returns None when it has nothing to draw, and the page says so instead.
Plain dicts rather than plotly.graph_objects: the same spec, without validating it on every
request.

Every figure takes the width it is given (autosize, no fixed width) and reads on a 390 px
phone: small margins that the axes widen as far as their labels need (automargin), legends in
a row under the plot, count axes from 0. An agent keeps one colour, marker, dash and pattern on
every figure of every page: `agent_styles` derives them from its id, and the pages pass them to
each figure (without them, a figure styles its agents by their order, for tests). A figure with
"run_links": true carries run ids as its points' customdata: figures.js opens the run's page
when one is clicked.

Agent and task names are escaped: plotly reads a few HTML tags in any text it draws.
"""

import html
import math
import zlib
from collections.abc import Mapping
from typing import Any

from leaderboard.scores import AgentScore
from leaderboard.selectors import SPEEDUP_BIN_LOG2

Figure = dict[str, Any]
_FONT = {"family": "system-ui, sans-serif", "size": 12}
# plotly's own ten colours; past ten agents the marker symbol tells them apart.
_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
PALETTE_SIZE = len(_COLORS)
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross")
# Past ten agents, lines and bars of one colour are told apart by these, as markers by symbol.
_DASHES = ("solid", "dot", "dash", "longdash", "dashdot")
_PATTERNS = ("", "/", "x", "-", ".")
Styles = Mapping[str, dict[str, Any]]
_GREY = "#7a7f87"
_TIMES = "\N{MULTIPLICATION SIGN}"  # after a speedup, as in "2x" typeset
_SPEEDUP_TITLE = "speedup over PyTorch eager"  # the ticks (1/4x, 1x, 4x) show the log
# Under the plot area, from the figure's bottom edge: the x axis's labels never run into it,
# and plotly grows the bottom margin to hold as many rows as the legend needs.
_LEGEND_BELOW = {
    "orientation": "h",
    "x": 0,
    "xanchor": "left",
    "y": 0,
    "yanchor": "bottom",
    "yref": "container",
    "traceorder": "normal",
    "font": {"size": 11},
}
_LEGEND_ROW_PX = 20
# A phone shows one long agent name per legend row: a figure is this much taller per entry, up
# to this many, past which the legend scrolls.
_LEGEND_ROWS_MAX = 12
_WRAP_CHARS = 18  # an agent name on the y axis, per line


def _layout(title: str, *, plot_px: int, legend_entries: int, **extra: Any) -> dict[str, Any]:
    """`plot_px` for the plot area with its axes and title, and a row for each legend entry."""
    return {
        "title": {"text": title, "font": {"size": 14}, "x": 0.01, "xanchor": "left"},
        "font": _FONT,
        "autosize": True,
        "height": plot_px + _LEGEND_ROW_PX * min(legend_entries, _LEGEND_ROWS_MAX),
        "margin": {"l": 8, "r": 24, "t": 40, "b": 8},
        "paper_bgcolor": "#fff",
        "plot_bgcolor": "#fff",
        "hovermode": "closest",
        "legend": _LEGEND_BELOW,
        **extra,
    }


def _axis(title: str, **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title}, "automargin": True, "zeroline": False, **extra}


def _count_axis(title: str, top: float) -> dict[str, Any]:
    # Whole steps while the counts are small, so no tick reads 0.5 runs.
    steps = {"dtick": 1} if top <= 8 else {}
    return _axis(title, range=[0, top * 1.08], rangemode="tozero", **steps)


def _share_axis(title: str, **extra: Any) -> dict[str, Any]:
    return _axis(title, range=[0, 1], tickformat=".0%", dtick=0.25, **extra)


def _plain(text: str) -> str:
    return html.escape(text, quote=False)


def _wrap(name: str, width: int = _WRAP_CHARS) -> str:
    """An escaped tick label broken after hyphens or underscores into lines of about `width`;
    a short last piece ("5" of "gpt-5") stays on the line before."""
    return "<br>".join(_plain(line) for line in _wrapped_lines(name, width))


def _wrapped_lines(name: str, width: int = _WRAP_CHARS) -> list[str]:
    lines, line = [], ""
    for piece in name.replace("-", "-\0").replace("_", "_\0").split("\0"):
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        line += piece
    if lines and len(line) <= 3:
        return [*lines[:-1], lines[-1] + line]
    return [*lines, line]


def agent_styles(agent_ids: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """Each agent's style (colour, marker symbol, dash, bar pattern), by slug, from its id: the
    same agent looks the same on every figure and page, and agents made one after the other
    differ in colour."""
    return {slug: _style(agent_style_index(pk)) for slug, pk in agent_ids.items()}


def agent_style_index(agent_id: int) -> int:
    """The agent's place in the styles: its colour is _COLORS[index % 10], which the pages'
    swatches (the agent-color-<n> classes of arena.css) repeat."""
    return max(agent_id - 1, 0)


def _style(index: int) -> dict[str, Any]:
    variant = (index // len(_COLORS)) % len(_SYMBOLS)
    return {
        "color": _COLORS[index % len(_COLORS)],
        "symbol": _SYMBOLS[variant],
        "dash": _DASHES[variant],
        "pattern": _PATTERNS[variant],
    }


def _agent_styles(agents: list[str], styles: Styles | None = None) -> Styles:
    """`styles` where the page gave them, else by the agents' order (tests, lone figures)."""
    if styles is not None and all(agent in styles for agent in agents):
        return styles
    return {agent: _style(i) for i, agent in enumerate(sorted(set(agents)))}


def _marker(style: Mapping[str, Any]) -> dict[str, Any]:
    return {"color": style["color"], "symbol": style["symbol"]}


def _log_axis(
    title: str, values: list[float], *, prefix: str = "", suffix: str = "", with_one: bool = False
) -> dict[str, Any]:
    """A log axis around `values` (and 1 `with_one`) with ticks at 1, 2 and 5 times the powers
    of ten, only the powers when those would crowd a phone; no unlabelled minor ticks."""
    values = [*values, 1.0] if with_one else values
    low, high = math.log10(min(values)), math.log10(max(values))
    # At least half a decade, so that one tick at least falls inside.
    pad = max(0.25, (high - low) * 0.05)
    low, high = low - pad, high + pad
    ticks = _log_ticks(low, high, (1, 2, 5))
    if len(ticks) > 7:
        ticks = _log_ticks(low, high, (1,))
    return _axis(
        title,
        type="log",
        range=[low, high],  # plotly takes a log axis's range in decades
        tickmode="array",
        tickvals=ticks,
        ticktext=[f"{prefix}{t:g}{suffix}" for t in ticks],
    )


def _log_ticks(low: float, high: float, mantissas: tuple[int, ...]) -> list[float]:
    return [
        m * 10.0**k
        for k in range(math.floor(low), math.ceil(high) + 1)
        for m in mantissas
        if low <= math.log10(m * 10.0**k) <= high
    ]


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _jitter(task: str) -> float:
    # The same task sits at the same height in every agent's row; crc32, not hash(), so the
    # figure is the same in every process.
    return (zlib.crc32(task.encode()) % 1001 / 1000 - 0.5) * 0.5


def task_speedup_strip(
    points: list[dict[str, Any]], *, styles: Styles | None = None
) -> Figure | None:
    """Each agent's best speedup on every task, from `figure_data.task_speedup_points`: one row
    per agent, highest geometric mean on top, one dot per task (named on hover, a click opens
    the run), on a log axis with 1x (PyTorch eager) marked and each row's geometric mean."""
    if not points:
        return None
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for point in points:
        by_agent.setdefault(point["agent"], []).append(point)
    means = {agent: _geomean([p["speedup"] for p in rows]) for agent, rows in by_agent.items()}
    top_down = sorted(by_agent, key=lambda agent: (-means[agent], agent))
    row_of = {agent: len(top_down) - 1 - i for i, agent in enumerate(top_down)}
    styles = _agent_styles(top_down, styles)
    data: list[dict[str, Any]] = [
        _reference_line(
            x=[1.0, 1.0], y=[-0.5, len(top_down) - 0.5], name=f"1{_TIMES} = PyTorch eager"
        ),
        {
            "type": "scatter",
            "mode": "markers",
            "name": "geometric mean of the agent",
            "x": [means[agent] for agent in top_down],
            "y": [row_of[agent] for agent in top_down],
            "text": [_plain(agent) for agent in top_down],
            "marker": {"symbol": "line-ns", "size": 24, "line": {"width": 3, "color": "#222"}},
            "hovertemplate": f"%{{text}}: geometric mean %{{x:.2f}}{_TIMES}<extra></extra>",
        },
    ]
    for agent in top_down:
        rows = by_agent[agent]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": _plain(agent),
                "showlegend": False,
                "x": [p["speedup"] for p in rows],
                "y": [row_of[agent] + _jitter(p["task"]) for p in rows],
                "text": [_plain(p["task"]) for p in rows],
                "customdata": [p["run_id"] for p in rows],
                "marker": {
                    **_marker(styles[agent]),
                    "size": 8,
                    "opacity": 0.75,
                    "line": {"width": 0.5, "color": "#fff"},
                },
                # No <b> or other markup in hover text: plotly writes it as a style attribute,
                # which the site's Content-Security-Policy refuses (config/settings.py).
                "hovertemplate": (
                    f"%{{text}}<br>%{{x:.2f}}{_TIMES} eager, run %{{customdata}}"
                    "<extra>%{fullData.name}</extra>"
                ),
            }
        )
    lines = max(len(_wrapped_lines(agent)) for agent in top_down)
    row_px = max(34, 15 * lines + 10)
    return {
        "data": data,
        "run_links": True,
        "layout": _layout(
            "Best speedup per task",
            plot_px=120 + row_px * len(top_down),
            legend_entries=2,
            xaxis=_log_axis(
                _SPEEDUP_TITLE, [p["speedup"] for p in points], suffix=_TIMES, with_one=True
            ),
            yaxis=_axis(
                "",
                tickmode="array",
                tickvals=[row_of[agent] for agent in top_down],
                ticktext=[_wrap(agent) for agent in top_down],
                range=[-0.6, len(top_down) - 0.4],
                gridcolor="#eef0f3",
            ),
        ),
    }


def speedup_distribution(
    bins: list[dict[str, Any]], *, styles: Styles | None = None
) -> Figure | None:
    """A histogram of ranked runs' speedups, stacked by agent (bins from
    `selectors.speedup_histogram`, SPEEDUP_BIN_LOG2 wide in log2). Drawn on a linear axis of
    log2(speedup) labelled as speedups: every bar keeps its true width, the counts start at 0."""
    if not bins:
        return None
    styles = _agent_styles([b["agent"] for b in bins], styles)
    data = [
        {
            "type": "bar",
            "name": _plain(agent),
            "x": [b["log2_low"] + SPEEDUP_BIN_LOG2 / 2 for b in rows],
            "y": [b["n"] for b in rows],
            "width": SPEEDUP_BIN_LOG2,
            "customdata": [_bin_label(b["log2_low"]) for b in rows],
            "marker": {
                "color": styles[agent]["color"],
                # Stripes over the agent's colour: "replace", plotly's default, drops the colour.
                "pattern": {
                    "shape": styles[agent]["pattern"],
                    "fillmode": "overlay",
                    "fgcolor": "#fff",
                    "fgopacity": 0.7,
                },
                "line": {"width": 0.5, "color": "#fff"},
            },
            "hovertemplate": "%{customdata}: %{y} runs<extra>%{fullData.name}</extra>",
        }
        for agent, rows in _by_agent(bins).items()
    ]
    totals: dict[float, int] = {}
    for b in bins:
        totals[b["log2_low"]] = totals.get(b["log2_low"], 0) + b["n"]
    low = math.floor(min(0.0, *totals))
    high = math.ceil(max(0.0, *(k + SPEEDUP_BIN_LOG2 for k in totals)))
    step = 1 if high - low <= 6 else 2
    ticks = list(range(low - low % step, high + 1, step))
    return {
        "data": data,
        "layout": _layout(
            "Speedups of ranked runs",
            plot_px=300,
            legend_entries=len(data),
            barmode="stack",
            bargap=0,
            xaxis=_axis(
                _SPEEDUP_TITLE,
                range=[low, high],
                tickmode="array",
                tickvals=ticks,
                ticktext=[_power_of_two(k) for k in ticks],
            ),
            yaxis=_count_axis("ranked runs", max(totals.values())),
            shapes=[_vline(0.0)],
        ),
    }


def _by_agent(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["agent"], []).append(row)
    return grouped


def _power_of_two(k: int) -> str:
    return f"{2**k}{_TIMES}" if k >= 0 else f"1/{2**-k}{_TIMES}"


def _bin_label(log2_low: float) -> str:
    return f"{2**log2_low:.3g} to {2 ** (log2_low + SPEEDUP_BIN_LOG2):.3g}{_TIMES}"


def fast_p_curve(
    scores: list[tuple[str, AgentScore]],
    bins: list[dict[str, Any]],
    *,
    styles: Styles | None = None,
) -> Figure | None:
    """fast_p over p: p = 0 exactly, then p at every bin edge from the histogram (speedup >= p),
    up to the fastest bin. The x axis runs from 0 to just past the fastest run (2x at least)."""
    if not scores:
        return None
    lows = [round(b["log2_low"] / SPEEDUP_BIN_LOG2) for b in bins]
    first, last = min([-8, *lows]), max([0, *lows]) + 1
    edges = [2 ** (k * SPEEDUP_BIN_LOG2) for k in range(first, last + 1)]
    x_max = max(2.0, edges[-1] * 1.1)
    styles = _agent_styles([agent for agent, _ in scores], styles)
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
                "line": {
                    "shape": "hv",
                    "width": 2,
                    "color": styles[agent]["color"],
                    "dash": styles[agent]["dash"],
                },
                "name": _plain(agent),
                "x": [0.0, *edges, x_max],
                "y": [*ys, ys[-1]],
                "hovertemplate": "fast_%{x:.2f} = %{y:.0%}<extra>%{fullData.name}</extra>",
            }
        )
    return {
        "data": data,
        "layout": _layout(
            f"fast_p: share correct and faster than p{_TIMES}",
            plot_px=300,
            legend_entries=len(data),
            xaxis=_axis("p (speedup over PyTorch eager)", range=[0, x_max], ticksuffix=_TIMES),
            yaxis=_share_axis("share of attempted tasks"),
            shapes=[_vline(1.0)],
        ),
    }


def seen_vs_unseen(
    scores: list[tuple[str, AgentScore]], *, styles: Styles | None = None
) -> Figure | None:
    """Per agent, on its own row in its own colour: an open marker at the share of attempted
    runs correct on the visible shapes, a filled one at the share correct on those and on every
    unseen shape too (`generalization_pass_rate`), joined by a line: its length is what unseen
    shapes took away. The two kinds of marker are named in the legend, in grey, so no colour
    stands for anything but an agent. Names read on the y axis, whole or wrapped."""
    rows = [(a, s) for a, s in scores if s.runs]
    if not rows:
        return None
    agents = [_plain(a) for a, _ in rows]
    styles = _agent_styles([a for a, _ in rows], styles)
    data: list[dict[str, Any]] = [
        _legend_marker("circle-open", "correct on seen shapes"),
        _legend_marker("circle", "correct on seen and unseen shapes"),
    ]
    for (agent, score), label in zip(rows, agents, strict=True):
        general = score.generalization_pass_rate or 0.0
        color = styles[agent]["color"]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": label,
                "showlegend": False,
                "x": [score.correctness_rate, general],
                "y": [label, label],
                "customdata": ["seen shapes", "seen and unseen shapes"],
                "line": {"color": color, "width": 3},
                "marker": {
                    "symbol": ["circle-open", "circle"],
                    "size": 12,
                    "color": color,
                    "line": {"width": 2, "color": color},
                },
                "cliponaxis": False,  # 0% and 100% are drawn whole on the axis
                "hovertemplate": "%{customdata}: %{x:.0%}<extra>%{fullData.name}</extra>",
            }
        )
    return {
        "data": data,
        "layout": _layout(
            "Seen versus unseen correctness",
            plot_px=110 + 40 * len(rows),
            legend_entries=2,
            xaxis=_share_axis("share of attempted runs"),
            yaxis=_axis(
                "",
                type="category",
                autorange="reversed",  # the ranking's order, top down
                tickmode="array",
                tickvals=agents,
                ticktext=[_wrap(a) for a, _ in rows],
            ),
        ),
    }


def _legend_marker(symbol: str, name: str) -> dict[str, Any]:
    """A legend entry for a kind of marker, drawing nothing on the plot."""
    return {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        "x": [None],
        "y": [None],
        "marker": {"symbol": symbol, "size": 11, "color": _GREY, "line": {"width": 2}},
        "hoverinfo": "skip",
    }


def pareto_front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both: cheaper-or-equal and scoring higher-or-equal."""
    front: list[tuple[float, float]] = []
    for cost, score in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or score > front[-1][1]:
            front.append((cost, score))
    return front


def cost_vs_score(
    scores: list[tuple[str, AgentScore]], *, styles: Styles | None = None
) -> Figure | None:
    """Mean cost per run on a log axis against fast_1, one trace per agent (named in the legend
    and on hover, no text on the plot, so nothing overlaps), with the agents' Pareto front.

    fast_1 stays linear from 0 to 100%: it is a share, and an agent with no fast run sits at 0,
    which a log axis cannot show. Agents of unknown or zero cost are left out, as a log axis
    has no 0; None when no agent is left.
    """
    priced = [(a, s.cost_per_run_usd, s.fast_p[1.0]) for a, s in scores if s.cost_per_run_usd]
    if not priced:
        return None
    front = pareto_front([(cost, fast_1) for _, cost, fast_1 in priced])
    styles = _agent_styles([a for a, _, _ in priced], styles)
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "name": "Pareto front",
            "legendrank": 1001,  # listed after the agents, drawn under them
            # A ring around each agent on the front: a front of one agent is still seen.
            "mode": "lines+markers",
            "x": [p[0] for p in front],
            "y": [p[1] for p in front],
            "line": {"dash": "dot", "shape": "hv", "color": _GREY},
            "marker": {"symbol": "circle-open", "size": 20, "color": _GREY},
            "cliponaxis": False,
            "hoverinfo": "skip",
        }
    ]
    data += [
        {
            "type": "scatter",
            "mode": "markers",
            "name": _plain(agent),
            "x": [cost],
            "y": [fast_1],
            "marker": {**_marker(styles[agent]), "size": 12, "line": {"width": 1, "color": "#fff"}},
            "cliponaxis": False,  # an agent at 0% or 100% is drawn whole on the axis
            "hovertemplate": "$%{x:.3g} per run, fast_1 %{y:.0%}<extra>%{fullData.name}</extra>",
        }
        for agent, cost, fast_1 in priced
    ]
    costs = [cost for _, cost, _ in priced]
    return {
        "data": data,
        "layout": _layout(
            "Cost versus fast_1",
            plot_px=300,
            legend_entries=len(data),
            xaxis=_log_axis("mean cost per run (USD, log scale)", costs, prefix="$"),
            yaxis=_share_axis("fast_1"),
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
    styles: Styles | None = None,
) -> Figure | None:
    """Achieved TFLOP/s (compute-bound) or GB/s (memory-bound) per shape for every timed run,
    in its agent's style, with the GPU's peak and the eager and SOTA baselines as lines in
    greys and red that no agent has. A click opens the run.

    runs: {"label", "run_id", "agent" (slug), "values": [achieved or None per shape]};
    baselines: {"name", "values": [...]} with the same shape order.
    """
    if not any(v is not None for r in runs for v in r["values"]):
        return None
    unit = "TFLOP/s" if regime == "compute" else "GB/s"
    styles = _agent_styles([r.get("agent", r["label"]) for r in runs], styles)
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": _plain(r["label"]),
            "x": shape_labels,
            "y": r["values"],
            "customdata": [r["run_id"]] * len(shape_labels),
            "marker": {**_marker(styles[r.get("agent", r["label"])]), "size": 9},
            "hovertemplate": "%{x}: %{y:.3g} " + unit + "<extra>run %{customdata}</extra>",
        }
        for r in runs
    ]
    data += [
        {
            "type": "scatter",
            "mode": "lines",
            "name": _plain(b["name"]),
            "x": shape_labels,
            "y": b["values"],
            "line": {"dash": "dash" if i == 0 else "dot", "color": "#3b4250"},
            "connectgaps": True,
        }
        for i, b in enumerate(baselines)
        if any(v is not None for v in b["values"])
    ]
    if peak:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": _plain(peak_label),
                "x": shape_labels,
                "y": [peak] * len(shape_labels),
                "line": {"color": "#b3261e"},
            }
        )
    return {
        "data": data,
        "run_links": True,
        "layout": _layout(
            f"Achieved {unit} per shape",
            xaxis=_axis("shape", type="category"),
            yaxis=_axis(unit, type="log"),
            plot_px=340,
            legend_entries=len(data),
        ),
    }


def _reference_line(*, x: list[float], y: list[float], name: str) -> dict[str, Any]:
    # A trace rather than a shape: it is named in the legend, and sits in data coordinates on a
    # log axis as on a linear one.
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": x,
        "y": y,
        "line": {"color": _GREY, "dash": "dot", "width": 1.5},
        "hoverinfo": "skip",
    }


def _vline(x: float) -> dict[str, Any]:
    return {
        "type": "line",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "yref": "paper",
        "line": {"color": _GREY, "dash": "dot"},
    }


def head_to_head_scatter(
    duels: list[Any], *, a: str, b: str, styles: Styles | None = None
) -> Figure | None:
    """Per task both agents have a ranked run on (head_to_head.TaskDuel): A's best speedup
    across, B's up, on log axes, with the diagonal where they are equal; a task is drawn in its
    winner's colour (grey for a tie), so the side of the diagonal and the colour agree."""
    both = [d for d in duels if d.ratio is not None]
    if not both:
        return None
    styles = _agent_styles([a, b], styles)
    colors = {"a": styles[a]["color"], "b": styles[b]["color"], "tie": _GREY}
    values = [d.a.best for d in both] + [d.b.best for d in both]
    axis = _log_axis("", values, suffix=_TIMES, with_one=True)
    low, high = 10 ** axis["range"][0], 10 ** axis["range"][1]
    data: list[dict[str, Any]] = [
        _reference_line(x=[low, high], y=[low, high], name="equal speedups"),
        {
            "type": "scatter",
            "mode": "markers",
            "name": "a task (colour: its winner)",
            "x": [d.a.best for d in both],
            "y": [d.b.best for d in both],
            "text": [_plain(d.task) for d in both],
            "marker": {
                "size": 11,
                "color": [colors[d.outcome] for d in both],
                "line": {"width": 1, "color": "#fff"},
            },
            "hovertemplate": (
                f"%{{text}}<br>{_plain(a)} %{{x:.2f}}{_TIMES}, "
                f"{_plain(b)} %{{y:.2f}}{_TIMES}<extra></extra>"
            ),
        },
    ]
    title = f"best speedup of {_plain(a)}"
    return {
        "data": data,
        "layout": _layout(
            "Best speedup per task, one against the other",
            plot_px=380,
            legend_entries=2,
            xaxis={**axis, "title": {"text": title}},
            yaxis={**axis, "title": {"text": f"best speedup of {_plain(b)}"}},
        ),
    }
