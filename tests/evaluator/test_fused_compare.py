"""The fused comparison (grader/fused_compare.py) reaches compare.py's verdicts: run under
Triton's interpreter on the CPU, in a process of its own (the interpreter is chosen when Triton
is imported). On a GPU, tests/evaluator/gpu/test_fused_compare_gpu.py runs the same check."""

import os
import subprocess
import sys
from pathlib import Path

import torch

from grader import compare

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "tests/evaluator/fused_compare_check.py"
DTYPES = ("float64", "float32", "float16", "bfloat16")
CASES = (
    "same",
    "noisy",
    "nan and inf where the reference has them",
    "an inf of the other sign",
    "nan where the reference is finite",
    "tiny outputs",
)


def test_the_fused_passes_reach_the_chunked_verdicts_in_every_dtype():
    done = subprocess.run(
        [sys.executable, str(CHECK), "cpu", "10001"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("same verdict:")]
    assert len(lines) == len(DTYPES) * len(CASES)
    for case in CASES:
        assert sum(f": {case} " in line for line in lines) == len(DTYPES), case
    placements = {line.rsplit(" ", 1)[1] for line in lines}
    assert placements == {"None", "special", "finite"}


def test_the_fused_passes_are_taken_only_for_contiguous_cuda_outputs_of_one_dtype():
    want = torch.randn(8)
    assert compare._fused_module(want, want.clone()) is None  # the CPU: the chunked path
    from grader import fused_compare

    meta = torch.empty(8, device="meta")
    assert not fused_compare.applies(meta, meta)
    assert not fused_compare.applies(want, want.clone())
