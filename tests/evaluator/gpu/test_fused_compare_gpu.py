"""The fused comparison on a GPU: the same verdicts as the chunked path (the check of
test_fused_compare.py, on CUDA tensors past one block), and compare_outputs takes it there."""

import pytest
import torch

from grader import compare
from tests.processes import REPO, repo_python

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def test_the_fused_passes_reach_the_chunked_verdicts_on_the_gpu():
    done = repo_python(str(REPO / "tests/evaluator/fused_compare_check.py"), "cuda", "1000003")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("same verdict:") == 24


def test_compare_outputs_takes_the_fused_passes_on_cuda_and_finds_one_wrong_element():
    from grader.fused_compare import FUSED_MIN_ELEMENTS

    small = torch.randn(1000, device="cuda")
    assert compare._fused_module(small, small.clone()) is None  # the chunked path: no compile
    want = torch.randn(80_000_000, device="cuda")
    assert want.numel() >= FUSED_MIN_ELEMENTS
    got = want.clone()
    assert compare._fused_module(want, got) is not None
    assert compare.compare_outputs([want], [got], atol=1e-4, rtol=1e-4).correct
    got[12_345_678] += 1.0
    verdict = compare.compare_outputs([want], [got], atol=1e-4, rtol=1e-4)
    assert not verdict.correct
    assert "1 of 80000000 elements" in verdict.reason
