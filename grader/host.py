"""This host as the result records it: library versions, the GPU (nvidia-smi; the grading process
makes no CUDA context), and the new result's identity.
"""

import contextlib
import hashlib
import importlib.metadata
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

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


def triton_version() -> str:
    """Triton's version, read from its installed metadata: the grading process never runs a
    kernel, and importing triton would cost it 0.3-0.8 s before its first child's job."""
    module = sys.modules.get("triton")
    if module is not None:
        return str(getattr(module, "__version__", ""))
    for name in ("triton", "pytorch-triton", "pytorch-triton-rocm"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            return importlib.metadata.version(name)
    return ""


def nvidia_smi_query(fields: str, gpu: str = "0") -> str:
    """nvidia-smi's answer for one GPU (its index or UUID), fields comma-separated; "" where it
    cannot answer. It makes no CUDA context."""
    try:
        return subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", gpu],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


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
