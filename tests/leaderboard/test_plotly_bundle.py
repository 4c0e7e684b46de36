"""The pages load plotly.js's basic bundle (static/vendor/README.md), which draws scatter, bar and
pie traces only: a figure of another type would be left blank in the browser, so none is made."""

import ast
from pathlib import Path

import pytest

LEADERBOARD = Path(__file__).resolve().parents[2] / "leaderboard"
BUNDLE_TRACES = {"scatter", "bar", "pie"}


def trace_types(source: str) -> set[str]:
    """The `type` of every dict literal that reads as a trace (it has x, y or values)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        keys = {
            k.value: v
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None and isinstance(k, ast.Constant)
        }
        kind = keys.get("type")
        if isinstance(kind, ast.Constant) and {"x", "y", "values"} & keys.keys():
            found.add(kind.value)
    return found


@pytest.mark.parametrize("module", sorted(LEADERBOARD.glob("*.py")), ids=lambda p: p.name)
def test_every_trace_the_leaderboard_draws_is_in_the_vendored_bundle(module):
    assert trace_types(module.read_text()) <= BUNDLE_TRACES


def test_the_figures_module_is_seen_to_draw_traces():
    assert trace_types((LEADERBOARD / "figures.py").read_text()) == {"scatter", "bar"}
