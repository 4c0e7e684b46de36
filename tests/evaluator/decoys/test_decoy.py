"""The decoy test on the CPU (Triton under the interpreter): a solution whose own kernels the
output does not need is flagged decoy_kernel; a library GEMM beside a fused epilogue of its own
passes, as KernelBench allows. The same solutions run on a GPU in tests/evaluator/gpu."""

import types
from pathlib import Path

import pytest
import torch

from grader import EvaluateOptions, evaluate
from grader.decoy import Silencer, silenced

HERE = Path(__file__).resolve().parent
TASKS = HERE.parent / "tasks"
SOLUTIONS = HERE / "solutions"
ADVERSARIAL = HERE.parent / "adversarial" / "solutions"
GEMM_EPILOGUE = TASKS / "kb_gemm_epilogue.py"


def grade(task, solution):
    return evaluate(task, solution, "cpu", EvaluateOptions(timeout_s=180, decoy_test=True))


@pytest.mark.parametrize("name", ["gemm_fused_epilogue", "gemm_inplace_epilogue"])
def test_a_library_gemm_beside_an_epilogue_the_output_needs_passes_unflagged(name):
    result = grade(GEMM_EPILOGUE, SOLUTIONS / f"{name}.py")
    assert result.status == "passed", (result.gates, result.log[-2000:])
    assert result.flags == []
    assert "decoy" in result.phases  # the silenced run took place
    assert result.summary["library_share"] is None  # a figure of GPU device time only


def test_a_kernel_beside_torch_doing_all_the_work_is_a_decoy():
    result = grade(GEMM_EPILOGUE, SOLUTIONS / "gemm_epilogue_beside_decoy.py")
    assert result.status == "passed"
    assert [flag.code for flag in result.flags] == ["decoy_kernel"]
    message = result.flags[0].message
    assert "its own kernels did nothing the output needs" in message
    assert "1 launches and calls skipped" in message
    assert result.ranked is False


def test_the_forbidden_library_op_beside_a_token_kernel_stays_no_own_kernel():
    result = grade(TASKS / "matmul_forbidden", ADVERSARIAL / "matmul_token_epilogue.py")
    assert result.status == "passed"
    codes = {flag.code: flag.message for flag in result.flags}
    assert set(codes) == {"forbidden_op", "no_own_kernel", "decoy_kernel"}
    assert codes["no_own_kernel"].startswith("forward() called aten::mm, the library op the task")


def test_silenced_extension_calls_stand_in_without_running():
    calls = []

    def scale_(y):
        calls.append("scale_")
        return y.mul_(2.0)

    def doubled(y):
        calls.append("doubled")
        return torch.stack([y * 2.0, y * 3.0]).long()

    def transposed_(y):
        calls.append("transposed_")
        return y.mul_(2.0).t()

    extension = types.ModuleType("fake_extension")
    extension.scale_, extension.doubled = scale_, doubled
    extension.transposed_ = transposed_
    silencer = Silencer()
    module = silencer._wrap_loader(lambda: extension)()
    y = torch.ones(3, 4)
    module.scale_(y)
    module.doubled(y)
    module.transposed_(y)
    assert calls == ["scale_", "doubled", "transposed_"]
    y = torch.ones(3, 4)
    with silenced(silencer):
        same = module.scale_(y)
        fresh = module.doubled(y)
        view = module.transposed_(y)
    assert calls == ["scale_", "doubled", "transposed_"]  # nothing ran silenced
    assert view.shape == (4, 3) and view.data_ptr() == y.data_ptr()
    assert same is y and bool((y == 1.0).all())  # the argument handed back, untouched
    assert fresh.shape == (2, 3, 4) and fresh.dtype == torch.int64
    assert bool((fresh == torch.iinfo(torch.int64).max).all())
    assert silencer.skipped == 3
