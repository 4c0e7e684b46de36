"""Solutions written to cheat or that are subtly broken, each with its exact verdict.

All run on CPU, with Triton under the interpreter, through the same sandboxed children as on a
GPU host. None may be ranked.
"""

from pathlib import Path

import pytest

from grader import EvaluateOptions, evaluate

HERE = Path(__file__).resolve().parent
TASKS = HERE.parent / "tasks"
SOLUTIONS = HERE / "solutions"

RELU_NONNEG = TASKS / "relu_nonneg"
SILU_LOOSE = TASKS / "silu_loose"
SOFTMAX_WIDE = TASKS / "softmax_wide"
MATMUL_PLAIN = TASKS / "matmul_plain"
TRANSPOSE_VIEW = TASKS / "transpose_view"

# (solution, task, status, gate, gate passed, reason prefix, flag codes)
FAILING = [
    (
        "identity_on_nonnegative",
        RELU_NONNEG,
        "correctness",
        "incorrect on shape {'N': 8192}: seed 3 (normal inputs): output 0: ",
    ),
    (
        "caches_output",
        "silu",
        "correctness",
        "incorrect on shape {'N': 4096}: seed 1 (problem inputs): output 0: ",
    ),
    (
        "aliases_input",
        RELU_NONNEG,
        "correctness",
        "incorrect on shape {'N': 8192}: seed 0 (problem inputs): output 0 aliases input 0",
    ),
    (
        "transpose_returns_view",
        TRANSPOSE_VIEW,
        "correctness",
        # Shape {'M': 1, 'N': 48} passes: there the reference's output is a view too.
        "incorrect on shape {'M': 16, 'N': 24}: seed 100 (problem inputs): "
        "output 0 aliases input 0",
    ),
    (
        "modifies_input",
        "silu",
        "correctness",
        "incorrect on shape {'N': 4096}: seed 0 (problem inputs): input 0 was modified in place",
    ),
    (
        "unwritten_tail",
        "silu",
        "correctness",
        "incorrect on shape {'N': 262147}: seed 200 (problem inputs): output 0: ",
    ),
    (
        "zeros_for_tiny_outputs",
        SOFTMAX_WIDE,
        "correctness",
        "incorrect on shape {'B': 4, 'V': 32768}: seed 0 (problem inputs): output 0: ",
    ),
    (
        "returns_wrong_dtype",
        "silu",
        "correctness",
        "incorrect on shape {'N': 4096}: seed 0 (problem inputs): output 0 has dtype "
        "torch.float64, expected torch.float32",
    ),
    (
        "hard_codes_visible_shapes",
        "silu",
        "generalization",
        "incorrect on 5 of 5 unseen shapes, e.g. ",
    ),
]

# Correct outputs, caught by an anti-cheat flag: (solution, task, flag codes, message part)
FLAGGED = [
    ("patches_comparison", "silu", {"tampering"}, "torch.allclose, torch.testing.assert_close"),
    ("patches_timer", "silu", {"tampering"}, "torch.cuda.Event.elapsed_time"),
    (
        "falls_back_to_torch",
        "silu",
        # Its launch raises every time: no kernel of its own ever ran.
        {"exception_fallback", "forbidden_op", "no_own_kernel"},
        "aten::silu",
    ),
    ("torch_only_forbidden", "silu", {"forbidden_op", "no_own_kernel"}, "aten::sigmoid"),
    ("torch_only_composite", "silu", {"no_own_kernel"}, "no kernel of its own"),
    ("leaves_thread_running", "silu", {"background_thread"}, "still running"),
    ("reads_outside_files", "silu", {"file_access"}, "/root/.ssh/id_rsa"),
    ("opens_network", "silu", {"network"}, "socket"),
    ("computes_in_fp16", SILU_LOOSE, {"precision_downgrade"}, "lower precision"),
    # No forbidden ops on this task: library kernels are allowed beside kernels of its own, and
    # the decoy test (its kernels silenced, the output still right) is the guard.
    ("matmul_beside_decoy_kernel", MATMUL_PLAIN, {"decoy_kernel"}, "nothing the output needs"),
    ("matmul_token_epilogue", MATMUL_PLAIN, {"decoy_kernel"}, "nothing the output needs"),
]


def grade(task, name: str):
    return evaluate(
        task, SOLUTIONS / f"{name}.py", "cpu", EvaluateOptions(timeout_s=120, decoy_test=True)
    )


@pytest.mark.parametrize(("name", "task", "gate", "reason"), FAILING, ids=[c[0] for c in FAILING])
def test_cheat_fails_its_gate_with_the_exact_reason(name, task, gate, reason):
    result = grade(task, name)
    assert result.status == "failed"
    assert result.reward == -2.0
    assert result.gates[gate].passed is False
    assert result.gates[gate].reason.startswith(reason), result.gates[gate].reason
    assert result.ranked is False


def test_shape_hard_coding_is_flagged_overfit_not_just_failed():
    result = grade("silu", "hard_codes_visible_shapes")
    assert result.gates["correctness"].passed is True
    assert [flag.code for flag in result.flags] == ["overfit"]
    assert result.summary["generalization_pass_rate"] == 0.0


@pytest.mark.parametrize(("name", "task", "codes", "message"), FLAGGED, ids=[c[0] for c in FLAGGED])
def test_cheat_with_correct_outputs_is_flagged_and_not_ranked(name, task, codes, message):
    result = grade(task, name)
    assert result.status == "passed"
    assert {flag.code for flag in result.flags} == codes
    assert any(message in flag.message for flag in result.flags), result.flags
    assert result.ranked is False
