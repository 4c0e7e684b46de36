"""Unseen shapes the reference can run, and the grader's own failures reported as its own."""

import textwrap
from pathlib import Path

import pytest

from grader import EvaluateOptions, evaluate
from grader.feasibility import (
    RESERVE_BYTES,
    accepted,
    budget_bytes,
    estimated_peak_bytes,
    merge_probe,
)

# A KernelBench problem with two scalable sizes; on CPU, dim is drawn from 16 to 64.
PROBLEM = """
import torch
import torch.nn as nn

batch_size = 16
dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
{guard}
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""

SOLUTION = """
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
"""


@pytest.fixture(autouse=True)
def private_probe_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_PROBE_CACHE", str(tmp_path / "probes.json"))


def grade(tmp_path: Path, guard: str):
    problem = tmp_path / "19_ReLU_like.py"
    problem.write_text(PROBLEM.format(guard=textwrap.indent(textwrap.dedent(guard), " " * 8)))
    solution = tmp_path / "solution.py"
    solution.write_text(SOLUTION)
    return evaluate(problem, solution, "cpu", EvaluateOptions(hidden_seed="feasibility-test"))


def test_shapes_the_reference_cannot_run_are_redrawn_not_counted(tmp_path):
    result = grade(
        tmp_path,
        # Each size alone and both at their lowest together run (what the rules are checked on
        # when they are made); about half of the other draws do not, and only drawing shows it.
        """
        batch, row = x.shape
        if batch < 16 and row < 64 and (batch + row) % 2:
            raise ValueError("a smaller batch needs an even sum of sizes")
        """,
    )
    unseen = [row for row in result.per_shape if not row.seen]
    gate = result.gates["generalization"]
    assert result.status == "passed", gate.reason
    assert gate.passed is True and len(unseen) == 5
    assert not any(
        row.shape["batch_size"] < 16
        and row.shape["dim"] < 64
        and (row.shape["batch_size"] + row.shape["dim"]) % 2
        for row in unseen
    )
    assert gate.detail["unseen_rejected"] >= 1
    assert "the reference cannot run it: ValueError" in gate.detail["unseen_rejected_example"]


def test_no_feasible_unseen_shape_is_said_by_the_gate_not_held_against_the_solution(tmp_path):
    result = grade(
        tmp_path,
        """
        if tuple(x.shape) != (16, 64):
            raise ValueError("only the visible shape")
        """,
    )
    gate = result.gates["generalization"]
    assert result.status == "passed"
    assert gate.passed is None
    # Said when the rules are made (nothing varies) or when every draw is refused.
    assert gate.reason.startswith(
        ("no unseen shapes: the problem has nothing to vary", "no unseen shape was graded: of ")
    ), gate.reason
    assert [row for row in result.per_shape if not row.seen] == []
    assert not any(flag.code == "overfit" for flag in result.flags)


def test_a_judge_out_of_memory_is_a_grader_error_not_a_failure(tmp_path):
    # Only real tensors run out: the probe's meta run passes, the judge's real run does not.
    result = grade(
        tmp_path,
        """
        if x.device.type != "meta":
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.00 GiB")
        """,
    )
    gate = result.gates["correctness"]
    assert result.status == "error"
    assert result.ranked is False
    assert gate.passed is None
    assert gate.reason == (
        "grader error: the reference ran out of device memory on shape "
        "{'batch_size': 16, 'dim': 64}: this is not the solution's failure"
    )
    assert "OutOfMemoryError" in gate.detail["error"]


def test_budget_leaves_a_reserve_and_room_for_three_copies():
    assert budget_bytes(80 * 2**30) == int((80 * 2**30 - RESERVE_BYTES) / 3)
    assert budget_bytes(RESERVE_BYTES // 2) == 0


def test_a_shape_is_accepted_while_its_estimated_peak_fits_the_budget():
    entry = merge_probe(
        None,
        {
            "visible_peak_bytes": 100,
            "visible_footprint_bytes": 50,
            "budget_bytes": 400,
            "shapes": [
                {"shape": {"N": 2}, "footprint_bytes": 200, "estimate": "meta", "rejected": None},
                {"shape": {"N": 3}, "footprint_bytes": 201, "estimate": "meta", "rejected": None},
                {"shape": {"N": 4}, "footprint_bytes": None, "rejected": "cannot run"},
            ],
        },
    )
    verdicts = list(entry["shapes"].values())
    assert (
        estimated_peak_bytes(
            visible_peak_bytes=100, footprint_bytes=201, visible_footprint_bytes=50
        )
        == 402
    )
    assert accepted(entry, verdicts[0]) == (True, "")
    assert accepted(entry, verdicts[1])[0] is False
    assert accepted(entry, verdicts[2]) == (False, "cannot run")
