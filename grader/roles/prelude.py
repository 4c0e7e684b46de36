"""Work a child started ahead does before its job, while the grading process is still getting
ready (the command line: its own import of torch, the reading of the task). Neither runs the
solution; the child serves its job after it (child.prepared_main).

- analyse (in the probe's child): a KernelBench problem file analysed on the meta device
  (kbproblem.analyse_problem), its shape rules sent back. The child imported torch while the
  command line did; the analysis then needs only torch's meta kernels.
- warmup (in the judge's child): the task's reference compiled by torch.compile on the visible
  shape's first timing set, exactly as the judge's compile baseline is compiled later
  (roles/judge.py). The judge's job, in the same child, times that compiled model (where its
  weights are small) or compiles again from inductor's and Triton's filled caches. It runs the
  reference on the GPU: the grading process holds the candidate's timing until it has ended
  (preludes.py).
"""

import hashlib
import time
from pathlib import Path
from typing import Any

import torch

from grader import channel
from grader.cases import timing_input_sets
from grader.modules import apply_shape, load_module
from grader.roles.common import INIT_SEED, release_device_memory, sync
from grader.roles.judge import (
    WARMED,
    WARMED_MAX_BYTES,
    compiled_baseline,
    state_bytes,
    warmed_key,
)


def run_analyse(job: dict[str, Any]) -> None:
    from grader.kbproblem import ProblemError, analyse_problem, parse_problem

    path = Path(job["path"])
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    try:
        analysis = analyse_problem(path, parse_problem(path))
    except ProblemError as exc:
        channel.send("analysis", sha256=digest, error=str(exc))
        return
    channel.send(
        "analysis",
        sha256=digest,
        shape=analysis.shape,
        rules=analysis.rules,
        fixed_reason=analysis.fixed_reason,
    )


def run_warmup(job: dict[str, Any]) -> None:
    device = job["device"]
    started = time.monotonic()
    reference = load_module(Path(job["reference_path"]), "warmup_reference")
    apply_shape(reference, job["shape"])
    torch.manual_seed(INIT_SEED)
    model = reference.Model(*reference.get_init_inputs()).to(device).eval()
    sets = timing_input_sets(reference, job["shape"], device)
    compiled = compiled_baseline(model, sets[0])
    sync(device)
    if state_bytes(model) <= WARMED_MAX_BYTES:
        # Left for the judge's job in this child (roles/judge.py): it times it as it is.
        WARMED[warmed_key(Path(job["reference_path"]), device)] = (reference, compiled)
    del compiled, model, sets
    release_device_memory(device)
    channel.send("warmed", seconds=round(time.monotonic() - started, 3))
