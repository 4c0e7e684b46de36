"""The step trace (EvaluateOptions.trace_steps, grader/steps.py): a profiled case reports the
profiler's start, the call, the profiler's stop and its events read as steps of their own, so
that a slow first call reads as the solution's call (its JIT) or as the profiler's."""

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


@pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")
def test_a_profiled_case_reports_the_profilers_steps_apart_from_the_call(monkeypatch):
    candidates: list[list[dict[str, Any]]] = []
    original = evaluate_module._Evaluation._launch

    def launch(self, job, workdir, *, sandboxed):
        outcome = original(self, job, workdir, sandboxed=sandboxed)
        if job["role"] == "candidate":
            candidates.append(outcome.messages)
        return outcome

    monkeypatch.setattr(evaluate_module._Evaluation, "_launch", launch)
    options = EvaluateOptions(
        trace_steps=True, timeout_s=180, unseen_count=1, hidden_seed="steps-trace-test"
    )
    result = evaluate("silu", HONEST, "cpu", options)
    assert result.status == "passed"
    (messages,) = candidates
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
