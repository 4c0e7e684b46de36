"""side_stream_work, library time and the decoy test measured on a real GPU.

python -m pytest --noconftest -m gpu tests/evaluator/gpu/test_flags_gpu.py
"""

from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from grader import EvaluateOptions, evaluate
from grader.timing import side_stream_check, time_interleaved

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

HERE = Path(__file__).resolve().parent
TASKS = HERE.parent / "tasks"
ADVERSARIAL = HERE.parent / "adversarial" / "solutions"


@triton.jit
def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1.0, mask=mask)


def check(call):
    """The child's sequence: interleaved stream timing, then the drained check."""
    with torch.no_grad():
        timings = time_interleaved({"candidate": call}, input_sets=3, device="cuda")
        return side_stream_check(call, input_sets=3, stream_ms=timings.ms["candidate"])


def test_a_torch_op_left_running_on_a_side_stream_is_caught():
    # Inputs from the CPU generator: a failed graph capture (as of this side stream) can leave
    # the CUDA generator unusable for the rest of the process.
    x = torch.randn(1 << 26).cuda()
    side = torch.cuda.Stream()

    def call(k):
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            return torch.sin(x) * 2.0

    report = check(call)
    assert report is not None
    assert report.current_stream is not None
    assert any(s != report.current_stream for s in report.kernel_streams)


def test_tiny_triton_kernel_and_torch_op_on_the_default_stream_are_not_flagged():
    x = torch.randn(4096).cuda()

    def call(k):
        y = torch.empty_like(x)
        add_one[(4,)](x, y, x.numel(), BLOCK=1024)
        return y * 2.0

    assert check(call) is None


def test_raw_launch_on_the_legacy_default_stream_is_not_flagged():
    cupy = pytest.importorskip("cupy")
    kernel = cupy.RawKernel(
        r"""extern "C" __global__ void add_two(const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = x[i] + 2.0f;
        }""",
        "add_two",
    )
    x = torch.randn(4096).cuda()

    def call(k):
        y = torch.zeros_like(x)
        # cupy's default stream is the legacy null stream, as a plain <<<>>> launch's is.
        kernel((4,), (1024,), (x.data_ptr(), y.data_ptr(), 4096))
        return y

    assert check(call) is None


def test_default_stream_extension_of_a_few_microseconds_is_ranked():
    result = evaluate(
        TASKS / "kb_add_small.py",
        HERE / "solutions" / "add_inline_default_stream.py",
        "cuda",
        EvaluateOptions(compile_baseline=False),
    )
    assert result.status == "passed", (result.gates, result.log[-3000:])
    codes = {flag.code for flag in result.flags}
    assert not codes & {"side_stream_work", "library_work", "no_own_kernel"}, result.flags


def test_matmul_with_a_decoy_kernel_is_a_decoy_on_gpu():
    result = evaluate(
        TASKS / "matmul_plain",
        ADVERSARIAL / "matmul_beside_decoy_kernel.py",
        "cuda",
        EvaluateOptions(compile_baseline=False),
    )
    assert result.status == "passed", result.gates
    assert {flag.code for flag in result.flags} == {"decoy_kernel"}, result.flags
    assert result.ranked is False


@pytest.mark.parametrize(
    ("solution", "codes"),
    [
        ("gemm_fused_epilogue.py", set()),
        ("gemm_epilogue_cuda.py", set()),
        ("gemm_epilogue_beside_decoy.py", {"decoy_kernel"}),
        ("gemm_epilogue_cuda_token.py", {"decoy_kernel"}),
    ],
)
def test_library_gemm_beside_kernels_the_output_needs_ranks_and_decoys_do_not(solution, codes):
    result = evaluate(
        TASKS / "kb_gemm_epilogue.py",
        HERE.parent / "decoys" / "solutions" / solution,
        "cuda",
        EvaluateOptions(compile_baseline=False),
    )
    assert result.status == "passed", (result.gates, result.log[-3000:])
    assert {flag.code for flag in result.flags} == codes, result.flags
    assert result.summary["library_share"] is not None
    assert result.ranked is (not codes)
