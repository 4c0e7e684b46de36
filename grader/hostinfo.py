"""What the grader reads of this host without importing torch: nvidia-smi's answers and the
installed libraries' versions. The command line reads them before its own import of torch has
ended (launch.py); host.py records them in the result."""

import contextlib
import importlib.metadata
import subprocess
import sys


def library_version(*names: str) -> str:
    """The installed version of the first of `names` (distributions) that is installed; ""
    where none is. An imported module's own `__version__` is taken first where it has one."""
    for name in names:
        module = sys.modules.get(name.replace("-", "_"))
        if module is not None and getattr(module, "__version__", None):
            return str(module.__version__)
    for name in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            return importlib.metadata.version(name)
    return ""


def triton_version() -> str:
    """Triton's version, read from its installed metadata: the grading process never runs a
    kernel, and importing triton would cost it 0.3-0.8 s before its first child's job."""
    return library_version("triton", "pytorch-triton", "pytorch-triton-rocm")


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
