"""Two evaluations on one GPU at once (grader/gpu_share.py), each in a grading process of its own
as two GPU workers grade: one solution's code on the GPU at a time, every timing with the other
evaluation's trusted children paused, and both verdicts those of evaluations alone. One of the
two solutions keeps the GPU busy from a thread of its own for as long as its process lives.

python -m pytest --noconftest -m gpu tests/evaluator/gpu/test_gpu_share_gpu.py
"""

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

HERE = Path(__file__).resolve().parent
SILU_TRITON = HERE.parent / "solutions" / "silu_triton.py"

# Correct, and from its import on a thread of its own launches matmuls for 20 s (every process
# that imports it: the candidate's, the decoy test's): a solution that would slow any timing it
# shared the GPU with. Its own timing queues behind them, so its evaluation takes minutes.
KEEPS_THE_GPU_BUSY = """
import threading
import time
import torch


def _spin():
    a = torch.randn(4096, 4096, device="cuda")
    until = time.monotonic() + 20
    while time.monotonic() < until:
        a = (a @ a).tanh_()


threading.Thread(target=_spin, daemon=True).start()


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)
"""

EVALUATE = """
import json, sys
from grader import EvaluateOptions, evaluate
options = EvaluateOptions(
    prepared=True, warm_judge=True, evaluations_per_gpu=2, gpu_share_root=sys.argv[1],
    compile_baseline=False,
)
result = evaluate("silu", sys.argv[2], "cuda", options)
print(json.dumps(result.to_dict()))
"""


def test_two_evaluations_share_a_gpu_one_solution_and_one_timing_at_a_time(tmp_path):
    busy = tmp_path / "keeps_the_gpu_busy.py"
    busy.write_text(KEEPS_THE_GPU_BUSY)
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", EVALUATE, str(tmp_path), str(solution)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for solution in (SILU_TRITON, busy)
    ]
    outs = [run.communicate(timeout=1200)[0] for run in runs]
    honest, spinner = (json.loads(out.splitlines()[-1]) for out in outs)
    assert honest["status"] == "passed", honest["gates"]
    shares = [honest["environment"]["gpu_share"], spinner["environment"]["gpu_share"]]
    # The solutions' code (each candidate's child, each decoy test's) never overlapped.
    turns = sorted(turn for share in shares for turn in share["candidate_turns"])
    assert len(turns) >= 3
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(turns))
    # The honest candidate was timed with the other's trusted children paused, none refused.
    timing = [p for p in shares[0]["pauses"] if p["why"] == "candidate timing"]
    assert timing and all("refused" not in p for p in timing), shares[0]
    assert timing[0]["held_s"] > 0
    seen = [row for row in honest["per_shape"] if row["seen"]]
    assert seen and all(row["candidate_ms"] and row["eager_ms"] for row in seen)


# KernelBench's level1/19 at its size: 6.4 GB a case's outputs, whose plan's outputs held on
# the device between candidate and judge are more than half an H200's memory.
BIG_RELU = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


batch_size = 4096
dim = 393216


def get_inputs():
    return [torch.rand(batch_size, dim) - 0.5]


def get_init_inputs():
    return []
"""

RELU_AS_SOLUTION = """
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""


def test_an_evaluation_beyond_its_share_takes_the_gpu_whole_and_keeps_its_outputs_on_it(tmp_path):
    problem, solution = tmp_path / "19_ReLU.py", tmp_path / "relu_solution.py"
    problem.write_text(BIG_RELU)
    solution.write_text(RELU_AS_SOLUTION)
    script = EVALUATE.replace('evaluate("silu", sys.argv[2]', "evaluate(sys.argv[3], sys.argv[2]")
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path), str(path), task],
            stdout=subprocess.PIPE,
            text=True,
        )
        for path, task in ((solution, str(problem)), (SILU_TRITON, "silu"))
    ]
    outs = [run.communicate(timeout=1200)[0] for run in runs]
    big, small = (json.loads(out.splitlines()[-1]) for out in outs)
    assert big["gates"]["correctness"]["passed"] is True, big["gates"]
    assert small["status"] == "passed", small["gates"]
    big_share, small_share = big["environment"]["gpu_share"], small["environment"]["gpu_share"]
    # The ReLU's plan holds more than half the GPU's memory: it graded alone, on the whole GPU,
    # every byte compared on the device; the SiLU graded within its share.
    assert big_share["room"] == "whole", big_share
    assert "outputs on the device" in big_share["whole_because"], big_share
    detail = big["gates"]["correctness"]["detail"]
    assert detail["bytes_on_device"] == detail["bytes_compared"] > 2**35, detail
    assert small_share["room"] == "shared", small_share
    # Nothing of the other evaluation's ran on the GPU while the room was the ReLU's.
    (whole,) = big_share["whole_turns"][-1:]
    for turn in small_share["candidate_turns"]:
        assert turn[1] <= whole[0] or whole[1] <= turn[0], (turn, whole)
