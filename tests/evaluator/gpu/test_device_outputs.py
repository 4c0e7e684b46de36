"""Outputs that stay on the device (grader/device_outputs.py), on a real GPU: a descriptor made by
a process that has exited still holds its bytes, and the judge's side refuses what a candidate
could forge. Run through bench/gpu_check.sh on a lent machine."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from grader import EvaluateOptions, evaluate
from grader.device_outputs import Broker, Inbox
from grader.outputs import OutputFileError

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

REPO = Path(__file__).resolve().parents[3]
SILU_TRITON = REPO / "tests/evaluator/solutions/silu_triton.py"

# A candidate's side in a process of its own: it sends what `mode` says and exits.
SENDER = textwrap.dedent(
    """
    import json, os, socket, sys
    import torch
    from grader import device_outputs as d

    path, mode = sys.argv[1], sys.argv[2]
    x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    if mode == "honest":
        assert d.Outbox(path, 1 << 40).send(0, 0, [x])
        sys.exit(0)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect(path)
    header = {"shape": 0, "case": 0, "bytes": x.numel() * 4,
              "outputs": [{"dtype": "float32", "shape": [x.numel()], "offset": 0}]}
    if mode == "oversized":
        driver = d._driver()
        handle = driver.create(driver.rounded(x.numel() * 4) + 64 * driver.granularity)
        fd = driver.export(handle)
    else:
        fd = os.open("/dev/null", os.O_RDONLY)
    socket.send_fds(sock, [json.dumps(header).encode()], [fd])
    """
)


def _handed_over(tmp_path: Path, mode: str) -> Inbox:
    """The sender runs and exits; then, as the judge does, the descriptors are received."""
    candidate, judge = tmp_path / "candidate", tmp_path / "judge"
    candidate.mkdir()
    judge.mkdir()
    broker = Broker(candidate, max_cases=4)
    try:
        done = subprocess.run(
            [sys.executable, "-c", SENDER, str(broker.path), mode],
            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        broker.stop()
        handoff = broker.serve(judge)
        try:
            return Inbox.receive(str(handoff.path), budget_bytes=1 << 40, max_cases=4)
        finally:
            handoff.close()
    finally:
        broker.close()


def test_outputs_exported_by_a_process_that_has_exited_are_read_intact(tmp_path):
    inbox = _handed_over(tmp_path, "honest")
    (out,) = inbox.outputs(0, 0)
    assert torch.equal(out, torch.arange(1 << 20, dtype=torch.float32, device="cuda"))
    inbox.close()


def test_an_allocation_larger_than_its_declared_outputs_is_refused(tmp_path):
    inbox = _handed_over(tmp_path, "oversized")
    # The driver maps an allocation only whole, so the declared size does not map.
    with pytest.raises(OutputFileError, match="the size of its outputs"):
        inbox.outputs(0, 0)


def test_a_descriptor_that_is_not_device_memory_is_refused(tmp_path):
    inbox = _handed_over(tmp_path, "not_cuda")
    with pytest.raises(OutputFileError, match="not a CUDA allocation"):
        inbox.outputs(0, 0)


def test_a_sandboxed_candidates_outputs_reach_the_judge_on_the_device():
    result = evaluate("silu", SILU_TRITON, "cuda", EvaluateOptions(prepared=True))
    assert result.status == "passed", (result.gates, result.log[-3000:])
    detail = result.gates["correctness"].detail
    assert detail["bytes_compared"] > 0
    assert detail["bytes_on_device"] == detail["bytes_compared"], result.environment
    assert result.environment["device_outputs"]["refused"] == 0
    off = evaluate("silu", SILU_TRITON, "cuda", EvaluateOptions(device_outputs=False))
    assert off.status == "passed" and off.gates["correctness"].detail["bytes_on_device"] == 0


# An L1 normalization at KernelBench's level1/38 size (our own text): 8.6 GB a case's output,
# whose plan passes an H200's device budget. In one round its last cases cross host memory.
BIG_L1NORM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


batch_size = 32768
dim = 65535


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
"""


@pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_properties(0).total_memory < 120 * 2**30,
    reason="sized for an H200's memory",
)
def test_two_candidate_rounds_keep_a_plan_past_the_device_budget_on_the_device(tmp_path):
    problem, solution = tmp_path / "38_L1Norm_.py", tmp_path / "l1norm_solution.py"
    problem.write_text(BIG_L1NORM)
    solution.write_text(BIG_L1NORM + "\n\nclass ModelNew(Model):\n    pass\n")
    options = EvaluateOptions(prepared=True, compile_baseline=False, candidate_rounds="auto")
    result = evaluate(str(problem), solution, "cuda", options)
    assert result.status == "passed", (result.gates, result.log[-3000:])
    detail = result.gates["correctness"].detail
    assert detail["bytes_planned"] > detail["bytes_device_budget"], detail
    assert detail["candidate_rounds"] == 2, detail
    assert detail["bytes_on_device"] == detail["bytes_compared"] == detail["bytes_planned"], detail
    assert result.environment["device_outputs"]["refused"] == 0
    assert result.gates["generalization"].passed is True, result.gates["generalization"].reason
