"""Honest solutions (Triton, run under the interpreter on CPU) must pass unflagged: all that
keeps them off the ranking is the CPU, where nothing is timed."""

from pathlib import Path

import pytest

from grader import EvaluateOptions, evaluate

HERE = Path(__file__).resolve().parent
TASKS = HERE.parent / "tasks"
SOLUTIONS = HERE / "solutions"

HONEST = [
    ("silu", HERE.parent / "solutions" / "silu_triton.py"),
    ("silu", SOLUTIONS / "silu_sigmoid_small_block.py"),
    ("silu", SOLUTIONS / "silu_persistent.py"),
    (TASKS / "relu_nonneg", SOLUTIONS / "relu_triton.py"),
    (TASKS / "softmax_wide", SOLUTIONS / "softmax_triton.py"),
    (TASKS / "softmax_wide", SOLUTIONS / "softmax_single_block.py"),
    (TASKS / "rmsnorm", SOLUTIONS / "rmsnorm_triton.py"),
    (TASKS / "embedding", SOLUTIONS / "embedding_triton.py"),
    (TASKS / "silu_loose", SOLUTIONS / "silu_loose_fp32.py"),
    (TASKS / "kb_relu.py", SOLUTIONS / "relu_2d_kernelbench.py"),
]


@pytest.mark.parametrize(("task", "solution"), HONEST, ids=[s.stem for _, s in HONEST])
def test_honest_solution_passes_every_gate_it_can_run(task, solution):
    result = evaluate(task, solution, "cpu", EvaluateOptions(timeout_s=180))
    assert result.status == "passed", (result.gates, result.log[-2000:])
    assert result.flags == []
    assert result.gates["performance"].reason == "CPU timings are not ranked"
    assert (result.ranked, result.reward) == (False, None)
    assert result.gates["compile"].passed is True
    assert result.gates["correctness"].passed is True
    assert result.gates["generalization"].passed in (True, None)
    assert all(row.correct for row in result.per_shape)


def test_reference_weights_are_loaded_into_model_new():
    result = evaluate(TASKS / "rmsnorm", SOLUTIONS / "rmsnorm_triton.py", "cpu")
    assert result.gates["correctness"].detail["weights"] == ["reference"]


def test_integer_inputs_keep_their_dtype():
    result = evaluate(TASKS / "embedding", SOLUTIONS / "embedding_triton.py", "cpu")
    assert result.status == "passed"
    assert result.gates["generalization"].passed is None
