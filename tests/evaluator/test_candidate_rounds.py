"""Two candidate rounds (EvaluateOptions.candidate_rounds, caseplan.two_rounds): the visible
shapes in one candidate process, judged, then the unseen shapes in a second, judged in turn.
The verdicts are those of one round; the second round runs the solution as it was submitted."""

import importlib
from pathlib import Path
from typing import Any

import pytest

from grader import (
    EvaluateOptions,
    EvaluationStopped,
    caseplan,
    evaluate,
    feasibility,
    generalization,
)
from sandboxes.backends import bwrap_usable

HERE = Path(__file__).resolve().parent
HONEST = HERE / "solutions" / "silu_triton.py"
OPTIONS = {"timeout_s": 180, "unseen_count": 2, "hidden_seed": "candidate-rounds-test"}

# The module, which the package's `evaluate` (the function) hides.
evaluate_module = importlib.import_module("grader.evaluate")
needs_bwrap = pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")


def test_two_rounds_where_the_plan_passes_the_device_budget_and_each_half_fits_it():
    gib = 2**30
    entry = {
        "visible_output_bytes": gib,
        "shapes": {feasibility.shape_key({"n": 2}): {"output_bytes": 2 * gib}},
    }
    shapes = [
        {"shape": {"n": 1}, "seen": True, "cases": [{}] * 6},
        {"shape": {"n": 2}, "seen": False, "cases": [{}] * 2},
    ]

    # 6 GiB visible and 4 GiB unseen: 10 GiB planned.
    def budget(device_gib):
        return caseplan.Budget(gib, 12 * gib, 10 * gib, 0, device_gib * gib)

    assert caseplan.two_rounds(entry, shapes, budget(8)) is True
    # The device holds the whole plan: one round keeps every case on it.
    assert caseplan.two_rounds(entry, shapes, budget(10)) is False
    # The visible shapes alone pass it: a second round would not keep them on the device.
    assert caseplan.two_rounds(entry, shapes, budget(5)) is False
    # Outputs through host memory (no device budget), or no probe's entry: one round.
    assert caseplan.two_rounds(entry, shapes, caseplan.Budget(gib, 12 * gib, 10 * gib, 0)) is False
    assert caseplan.two_rounds(None, shapes, budget(8)) is False
    # No unseen shape: nothing for a second round.
    assert caseplan.two_rounds(entry, shapes[:1], budget(5)) is False


def test_the_option_takes_off_auto_or_always():
    assert EvaluateOptions().candidate_rounds == "auto"
    with pytest.raises(ValueError, match="candidate_rounds"):
        EvaluateOptions(candidate_rounds="twice")


@pytest.fixture
def jobs(monkeypatch):
    """Each child's job, in launch order."""
    seen: list[dict[str, Any]] = []
    original = evaluate_module._Evaluation._launch

    def launch(self, job, workdir, *, sandboxed):
        seen.append(dict(job))
        return original(self, job, workdir, sandboxed=sandboxed)

    monkeypatch.setattr(evaluate_module._Evaluation, "_launch", launch)
    return seen


def verdict(result):
    gates = {name: (gate.passed, gate.reason) for name, gate in result.gates.items()}
    rows = [(r.shape, r.seen, r.correct) for r in result.per_shape]
    return result.status, gates, rows, sorted(f.code for f in result.flags)


@needs_bwrap
def test_two_rounds_grade_every_shape_once_with_one_rounds_verdicts(jobs):
    one = evaluate("silu", HONEST, "cpu", EvaluateOptions(**OPTIONS))
    jobs.clear()
    two = evaluate("silu", HONEST, "cpu", EvaluateOptions(candidate_rounds="always", **OPTIONS))
    assert two.status == "passed"
    assert verdict(two) == verdict(one)
    assert one.gates["correctness"].detail["candidate_rounds"] == 1
    assert two.gates["correctness"].detail["candidate_rounds"] == 2
    seen = [i for i, r in enumerate(two.per_shape) if r.seen]
    unseen = [i for i, r in enumerate(two.per_shape) if not r.seen]
    assert seen and unseen
    # The candidate, its judge, then the second candidate and its judge, each on its shapes.
    rounds = [(j["role"], j.get("run_shapes")) for j in jobs if j["role"] != "probe"]
    assert rounds == [
        ("candidate", seen),
        ("judge", seen),
        ("candidate", unseen),
        ("judge", unseen),
    ]


@needs_bwrap
def test_a_failure_on_the_unseen_shapes_alone_reads_the_same_in_two_rounds(monkeypatch):
    # Wrong past 4096 elements, with the index limit lowered below the visible shapes: wrong on
    # unseen shapes only, right on every visible one (test_index_limit.py): overfit.
    monkeypatch.setattr(generalization, "INDEX_LIMIT_ELEMENTS", 2048)
    task, solution = HERE / "tasks" / "relu_sized", HERE / "solutions" / "relu_32bit_offsets.py"
    options = {"timeout_s": 180, "hidden_seed": "index-limit-test"}
    one = evaluate(task, solution, "cpu", EvaluateOptions(**options))
    two = evaluate(task, solution, "cpu", EvaluateOptions(candidate_rounds="always", **options))
    assert two.gates["generalization"].passed is False
    assert "overfit" in {f.code for f in two.flags}
    assert verdict(two) == verdict(one)


REWRITES_ITSELF = """
import pathlib
import torch
import torch.nn.functional as F

HERE = pathlib.Path(__file__)
# Imported once, it leaves a solution that is wrong on every shape for any later import.
HERE.write_text("import torch\\nclass ModelNew(torch.nn.Module):\\n"
                "    def forward(self, x):\\n        return x * 0\\n")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return F.silu(x)
"""


@needs_bwrap
def test_the_second_round_runs_the_solution_as_submitted_not_as_the_first_left_it(tmp_path):
    solution = tmp_path / "rewrites_itself.py"
    solution.write_text(REWRITES_ITSELF)
    two = evaluate("silu", solution, "cpu", EvaluateOptions(candidate_rounds="always", **OPTIONS))
    assert two.gates["correctness"].passed is True, two.gates["correctness"].reason
    assert two.gates["generalization"].passed is True, two.gates["generalization"].reason


@pytest.fixture
def starts(monkeypatch):
    """Each child started ahead of its job, and whether the second round's was started when
    the evaluation came to the GPU's room (_fit_room)."""
    seen: dict[str, Any] = {"started": [], "before_room": []}
    start = evaluate_module.Launcher.start

    def started(self, role, workdir):
        running = start(self, role, workdir)
        seen["started"].append(running)
        return running

    def fit_room(self, on_device):
        seen["before_room"].append(self.second_child is not None)
        if seen.get("stop"):
            raise EvaluationStopped("stopped while waiting for the room")

    monkeypatch.setattr(evaluate_module.Launcher, "start", started)
    monkeypatch.setattr(evaluate_module._Evaluation, "_fit_room", fit_room)
    return seen


SHARED = {**OPTIONS, "candidate_rounds": "always", "evaluations_per_gpu": 2}


@needs_bwrap
def test_the_second_rounds_child_starts_before_the_wait_for_the_room(starts, tmp_path):
    # Its imports overlap the wait for the GPU's room rather than only the first round's run.
    options = EvaluateOptions(gpu_share_root=str(tmp_path), **SHARED)
    two = evaluate("silu", HONEST, "cpu", options)
    assert two.status == "passed", two.gates
    assert two.gates["correctness"].detail["candidate_rounds"] == 2
    assert starts["before_room"] == [True]
    (second,) = starts["started"]
    assert second.proc.poll() is not None  # it ran the second round and is gone


@needs_bwrap
def test_an_evaluation_stopped_while_waiting_for_the_room_leaves_no_second_child(starts, tmp_path):
    starts["stop"] = True
    options = EvaluateOptions(gpu_share_root=str(tmp_path), **SHARED)
    with pytest.raises(EvaluationStopped):
        evaluate("silu", HONEST, "cpu", options)
    (second,) = starts["started"]
    assert second.proc.poll() is not None, "the second round's child outlived its evaluation"
