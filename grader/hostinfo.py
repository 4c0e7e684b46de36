"""What the grader reads of this host without importing torch: nvidia-smi's answers and the
installed libraries' versions. The command line reads them before its own import of torch has
ended (launch.py); host.py records them in the result."""

import contextlib
import importlib.metadata
import subprocess
import sys

TRITON_DISTRIBUTIONS = ("triton", "pytorch-triton", "pytorch-triton-rocm")


def installed_version(*names: str) -> str:
    """The installed version of the first of `names` (distributions) that is installed, as its
    metadata says; "" where none is."""
    for name in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            return importlib.metadata.version(name)
    return ""


def triton_version() -> str:
    """Triton's version: its own where it is imported, else its installed metadata's (the
    grading process never runs a kernel, and importing triton would cost it 0.3-0.8 s before its
    first child's job)."""
    module = sys.modules.get("triton")
    if module is not None:
        return str(getattr(module, "__version__", ""))
    return installed_version(*TRITON_DISTRIBUTIONS)


def cache_libraries() -> tuple[str, str]:
    """torch's and triton's versions as the baseline cache's keys name them: the installed
    distributions' metadata, which reads the same before and after either is imported (a
    command line checks the cache while its import of torch is under way, launch.py). A
    module's own `__version__` may say more ("2.11.0+cu130" where the metadata says "2.11.0")."""
    return installed_version("torch"), installed_version(*TRITON_DISTRIBUTIONS)


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
