"""The grader on a real GPU. Run through bench/gpu_check.sh on a lent machine.

python -m pytest --noconftest -m gpu tests/evaluator/gpu
"""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from grader import EvaluateOptions, evaluate

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

HERE = Path(__file__).resolve().parent
SOLUTIONS = HERE / "solutions"
SILU_TRITON = HERE.parent / "solutions" / "silu_triton.py"


def grade(solution: Path, **options):
    # Children started ahead, as a GPU worker starts them (ARENA_GRADER_PREPARED).
    return evaluate("silu", solution, "cuda", EvaluateOptions(**{"prepared": True, **options}))


def test_triton_solution_is_timed_scored_and_ranked():
    result = grade(SILU_TRITON)
    assert result.status == "passed", result.gates
    assert result.flags == [], result.flags
    assert result.gates["performance"].passed is not None
    seen = [row for row in result.per_shape if row.seen]
    for row in seen:
        assert row.candidate_ms is not None and row.candidate_ms.median > 0
        assert row.eager_ms is not None and row.eager_ms > 0
        assert row.gbps is not None and row.gbps > 100
        assert row.roofline_fraction is not None and 0.05 < row.roofline_fraction <= 1.05
    assert result.summary["speedup_vs_eager"] > 0.5
    assert result.summary["speedup_vs_compile"] is not None
    assert result.summary["speedup_vs_sota"] is not None
    assert all(row.sota_ms and row.compile_ms for row in seen)
    assert result.reward == pytest.approx(result.summary["speedup_vs_eager"] - 1.0)
    assert result.environment["gpu"]


def test_the_candidates_prepared_child_makes_its_cuda_context_before_its_job():
    # A second evaluation takes a slot started ahead: its candidate's child made CUDA's context
    # while it waited (child._device_ahead), after its imports, before it said it was ready.
    grade(SILU_TRITON, unseen_count=1)
    result = grade(SILU_TRITON, unseen_count=1)
    assert result.status == "passed", result.gates
    start = result.environment["child_start"]["candidate"]
    assert start["profiler"] <= start["device"] <= start["ready"], start
    # And it compiled a kernel of the grader's for this GPU: Triton's compiler has started.
    assert start["device"] <= start["triton_compiler"] <= start["ready"], start
    # Off, the job makes it: the child says neither step.
    off = grade(SILU_TRITON, unseen_count=1, device_ahead=False)
    assert off.status == "passed", off.gates
    assert not {"device", "triton_compiler"} & set(off.environment["child_start"]["candidate"])


def test_cuda_load_inline_solution_passes_with_its_own_kernel():
    result = grade(SOLUTIONS / "silu_cuda_inline.py")
    assert result.status == "passed", (result.gates, result.log[-3000:])
    assert result.flags == []


def test_side_stream_work_is_counted_and_flagged():
    honest = grade(SILU_TRITON)
    cheat = grade(SOLUTIONS / "side_stream_silu.py")
    assert "side_stream_work" in {flag.code for flag in cheat.flags}
    honest_ms = [r.candidate_ms.median for r in honest.per_shape if r.seen]
    cheat_ms = [r.candidate_ms.median for r in cheat.per_shape if r.seen]
    # Twenty launches of the same kernel, drained: far slower than one, never faster.
    assert all(c > 5 * h for c, h in zip(cheat_ms, honest_ms, strict=True))
    assert cheat.ranked is False


def test_illegal_address_fails_the_run_and_the_next_evaluation_is_correct():
    crashed = grade(SOLUTIONS / "illegal_address.py")
    assert (crashed.status, crashed.reward) == ("failed", -3.0)
    assert crashed.gates["correctness"].reason == "failed while running"
    after = grade(SILU_TRITON)
    assert after.status == "passed" and after.flags == []


def test_patched_timer_is_flagged_on_gpu():
    cheat = HERE.parent / "adversarial" / "solutions" / "patches_timer.py"
    result = grade(cheat)
    codes = {flag.code for flag in result.flags}
    assert "tampering" in codes
    assert result.ranked is False


SCRATCH_SILU = """
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        scratch = torch.empty({nbytes}, dtype=torch.uint8, device=x.device)
        del scratch
        return torch.nn.functional.silu(x)
"""


def scratch_solution(tmp_path: Path, gib: int) -> Path:
    path = tmp_path / f"scratch_{gib}_gib.py"
    path.write_text(SCRATCH_SILU.format(nbytes=gib * 2**30))
    return path


def test_out_of_memory_on_an_unshared_gpu_is_the_solutions_failure(tmp_path):
    result = grade(scratch_solution(tmp_path, 4096))
    assert result.status == "failed", result.gates
    assert result.gates["correctness"].reason == "failed while running"
    assert "OutOfMemoryError" in result.gates["correctness"].detail["error"]


HOG = """
import sys, threading, time, torch

LEAVE = 8 * 2**30
held = []
# Memory an earlier test's process gives back late would leave more than LEAVE free: the hog
# takes whatever comes back, first until free memory has stayed at LEAVE for a second, then
# for as long as the test runs (a process of an earlier test may exit during the grading).
# Another process may take memory between the reading and the allocation: the hog then retries
# on its next turn rather than die (a dead hog gives everything back, and the solution's 12 GiB
# would fit).
def take():
    free, _ = torch.cuda.mem_get_info()
    if free > LEAVE + 2**28:
        try:
            held.append(torch.empty(free - LEAVE, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            return True
        return True
    return False

quiet_since = time.monotonic()
while time.monotonic() - quiet_since < 1.0:
    if take():
        quiet_since = time.monotonic()
    time.sleep(0.05)
print("held", torch.cuda.mem_get_info()[0], flush=True)
threading.Thread(target=sys.stdin.read, daemon=True).start()
while threading.active_count() > 1:
    take()
    time.sleep(0.05)
"""


def test_out_of_memory_on_a_gpu_another_process_holds_is_a_grader_error(tmp_path):
    # Another process takes all but 8 GiB of the GPU; the solution asks for 12 GiB.
    hog = subprocess.Popen(
        [sys.executable, "-c", HOG], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert hog.stdout is not None
        said = hog.stdout.readline().split()
        assert said[0] == "held" and int(said[1]) <= 9 * 2**30, said
        result = grade(scratch_solution(tmp_path, 12))
        hog_held_throughout = hog.poll() is None
    finally:
        hog.kill()
        hog.wait()
    assert hog_held_throughout, "the hog died during the grading: the GPU was not held"
    gate = result.gates["correctness"]
    assert result.status == "error", result.gates
    assert result.ranked is False
    assert gate.reason == (
        "grader error: the GPU ran out of memory while other processes held it: "
        "this is not the solution's failure"
    )
    assert "other processes held" in gate.detail["error"]


ABORTS_WHEN_TIMED = """
import os

import torch
import torch.nn as nn

CALLS = [0]


class ModelNew(nn.Module):
    def forward(self, x):
        # silu's visible shapes take 18 calls (3 shapes x 6 cases); their timing starts after
        # them, before the unseen shapes run, so call 41 is one of the timed calls.
        CALLS[0] += 1
        if CALLS[0] > 40:
            os.abort()
        return torch.nn.functional.silu(x)
"""


def test_a_process_that_dies_while_being_timed_fails_and_says_so(tmp_path):
    solution = tmp_path / "aborts_when_timed.py"
    solution.write_text(ABORTS_WHEN_TIMED)
    result = grade(solution)
    assert result.status == "failed", result.gates
    assert result.ranked is False
    gate = result.gates["performance"]
    assert gate.passed is False
    assert gate.reason.startswith("the solution's process ended while being timed on shape")
    # Killed by SIGABRT: a signal where the process is a direct child, 128 + 6 through bwrap.
    assert "signal 6" in gate.detail["error"] or "code 134" in gate.detail["error"]


def test_outputs_cross_through_the_double_buffered_staging_intact(tmp_path):
    """More chunks than the two pinned buffers, an odd tail, several dtypes and a strided view:
    every byte arrives, on the device and on the host."""
    from grader.outputs import STAGING_BYTES, read_outputs, write_outputs

    generator = torch.Generator(device="cuda").manual_seed(3)
    big = torch.randint(0, 255, (5 * STAGING_BYTES + 12345,), dtype=torch.uint8, device="cuda")
    floats = torch.randn(1023, 517, device="cuda", generator=generator)
    halves = torch.randn(3, 7, device="cuda", generator=generator).half()
    strided = torch.randn(64, 64, device="cuda", generator=generator).t()[::2]
    flags = floats > 0
    outputs = [big, floats, halves, strided, flags]
    write_outputs(tmp_path / "case", outputs)
    for device in ("cuda", "cpu"):
        back = read_outputs(tmp_path / "case", device)
        assert len(back) == len(outputs)
        for sent, got in zip(outputs, back, strict=True):
            assert got.dtype == sent.dtype and got.shape == sent.shape
            assert torch.equal(got.to("cuda"), sent)
