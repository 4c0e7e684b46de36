"""The step trace (EvaluateOptions.trace_steps, grader/steps.py): a profiled case reports the
profiler's start, the call, the profiler's stop and its events read as steps of their own, so
that a slow first call reads as the solution's call (its JIT) or as the profiler's; the probe
reports its own steps (CUDA's context, the reference's import, the visible shapes' measured
peaks, the unseen shapes' runs on the meta device)."""

import importlib
from pathlib import Path
from typing import Any

import pytest

from grader import EvaluateOptions, evaluate
from sandboxes.backends import bwrap_usable

# The module, which the package's `evaluate` (the function) hides.
evaluate_module = importlib.import_module("grader.evaluate")

HONEST = Path(__file__).resolve().parent / "solutions" / "silu_triton.py"
PROFILED = ["watch", "profiler_start", "profiled_call", "profiler_stop", "profile_events"]
needs_bwrap = pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")


@pytest.fixture
def launched(monkeypatch):
    """Each child's messages by its role, in launch order."""
    seen: dict[str, list[list[dict[str, Any]]]] = {}
    original = evaluate_module._Evaluation._launch

    def launch(self, job, workdir, *, sandboxed):
        outcome = original(self, job, workdir, sandboxed=sandboxed)
        seen.setdefault(job["role"], []).append(outcome.messages)
        return outcome

    monkeypatch.setattr(evaluate_module._Evaluation, "_launch", launch)
    return seen


@needs_bwrap
def test_a_profiled_case_reports_the_profilers_steps_apart_from_the_call(launched):
    options = EvaluateOptions(
        trace_steps=True, timeout_s=180, unseen_count=1, hidden_seed="steps-trace-test"
    )
    result = evaluate("silu", HONEST, "cpu", options)
    assert result.status == "passed"
    (messages,) = launched["candidate"]
    cases = {
        (m["shape"], m["case"]): list(m["seconds"])
        for m in messages
        if m["event"] == "steps" and m.get("case") is not None
    }
    # Each shape's first case is profiled, its others are plain calls.
    assert {shape for shape, case in cases if case == 0} == set(range(len(result.per_shape)))
    for (shape, case), steps in cases.items():
        assert steps[:3] == ["inputs", "pristine", "poison"], (shape, case)
        if case == 0:
            assert [s for s in steps if s in PROFILED] == PROFILED
            assert "call" not in steps
        else:
            assert "call" in steps and not set(PROFILED[1:]) & set(steps)
    assert (0, 1) in cases


@needs_bwrap
def test_the_probe_reports_its_steps(launched, tmp_path):
    # The probe runs where its cache lacks the task: a cache of this test's own.
    options = EvaluateOptions(
        trace_steps=True,
        timeout_s=180,
        unseen_count=1,
        hidden_seed="steps-trace-test",
        probe_cache=str(tmp_path / "probes.json"),
    )
    result = evaluate("silu", HONEST, "cpu", options)
    assert result.status == "passed", result.gates
    (messages,) = launched.pop("probe")
    (steps,) = [m for m in messages if m["event"] == "steps"]
    assert steps["stage"] == "probe"
    # Every step of a probe that measures the visible shapes, each a time of its own.
    assert list(steps["seconds"]) == [
        "pause",
        "reference_import",
        "visible_meta",
        "visible_peak",
        "release",
        "unseen_meta",
    ], steps
    assert all(seconds >= 0 for seconds in steps["seconds"].values())
    # Untraced, the probe sends none.
    plain = EvaluateOptions(
        timeout_s=180,
        unseen_count=1,
        hidden_seed="steps-trace-test",
        probe_cache=str(tmp_path / "plain-probes.json"),
    )
    assert evaluate("silu", HONEST, "cpu", plain).status == "passed"
    (messages,) = launched["probe"]
    assert [m for m in messages if m["event"] == "steps"] == []
    assert [m for m in messages if m["event"] == "probe"]
