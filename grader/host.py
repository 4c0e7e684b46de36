"""This host as the result records it: library versions, the GPU (nvidia-smi; the grading process
makes no CUDA context), and the new result's identity.
"""

import hashlib
import platform
from pathlib import Path
from typing import Any

import torch

from grader.hostinfo import nvidia_smi_query, triton_version
from grader.result import (
    EvalResult,
)
from grader.taskspec import TaskSpec


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def new_result(spec: TaskSpec, solution: Path, device: str) -> EvalResult:
    return EvalResult(
        task=spec.to_dict(),
        task_version=spec.version_hash,
        solution_hash=file_sha256(solution),
        device=device,
        environment=host_environment(device),
    )


def host_environment(device: str) -> dict[str, Any]:
    environment: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton_version(),
        "cuda": torch.version.cuda,
        "host": platform.machine(),
    }
    if device == "cuda":
        environment.update(_nvidia_smi())
    return environment


def _nvidia_smi() -> dict[str, Any]:
    fields = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,compute_cap"
    out = nvidia_smi_query(fields)
    if not out:
        return {}
    values = [v.strip() for v in out.split(",")]
    keys = [
        "gpu",
        "driver",
        "sm_clock_mhz",
        "max_sm_clock_mhz",
        "mem_clock_mhz",
        "power_limit_w",
        "compute_capability",
    ]
    return dict(zip(keys, values, strict=False))
