"""Anti-cheat instruments that run inside the candidate child, installed before its code loads.

None of them is proof against a determined attacker in the same process; they catch the cheats
seen in the wild (patched timers and comparisons, fallbacks to the reference, background work,
peeking at files) and the sandbox and the judge process carry the rest.
"""

import ast
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from evaluator.engine.processes import own_children

# Library kernels: a solution that launches only these has no kernel of its own.
LIBRARY_KERNEL_MARKERS = (
    "at::",
    "at_cuda_detail",
    "cublas",
    "cublaslt",
    "cutlass",
    "cudnn",
    "xmma",
    "gemm",
    "sgemm",
    "memcpy",
    "memset",
    "flash_fwd",
    "flash_bwd",
    "pytorch_flash",
    "fmha",
    "triton_poi_",
    "triton_red_",
    "triton_per_",
    "triton_tem_",
    "nvjet",
    "splitkreduce",
)
_WATCHED_FUNCTIONS: dict[str, Callable[[], Any]] = {
    "torch.cuda.synchronize": lambda: torch.cuda.synchronize,
    "torch.cuda.Event.record": lambda: torch.cuda.Event.record,
    "torch.cuda.Event.elapsed_time": lambda: torch.cuda.Event.elapsed_time,
    "torch.cuda.Event.synchronize": lambda: torch.cuda.Event.synchronize,
    "torch.Tensor.data_ptr": lambda: torch.Tensor.data_ptr,
    "torch.Tensor.untyped_storage": lambda: torch.Tensor.untyped_storage,
    "torch.equal": lambda: torch.equal,
    "torch.allclose": lambda: torch.allclose,
    "torch.isclose": lambda: torch.isclose,
    "torch.save": lambda: torch.save,
    "torch.testing.assert_close": lambda: torch.testing.assert_close,
    "time.perf_counter": lambda: time.perf_counter,
    "time.monotonic": lambda: time.monotonic,
    "os.write": lambda: os.write,
}


def _harness_functions() -> dict[str, Callable[[], Any]]:
    from evaluator.engine import cases, channel, timing

    return {
        "channel.send": lambda: channel.send,
        "cases.case_inputs": lambda: cases.case_inputs,
        "timing.time_interleaved": lambda: timing.time_interleaved,
        "timing.percentile": lambda: timing.percentile,
    }


@dataclass
class TamperCheck:
    """Identity of the functions that timing and checking rely on, taken before the solution."""

    originals: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def take(cls) -> "TamperCheck":
        getters = {**_WATCHED_FUNCTIONS, **_harness_functions()}
        return cls({name: getter() for name, getter in getters.items()})

    def changed(self) -> list[str]:
        getters = {**_WATCHED_FUNCTIONS, **_harness_functions()}
        return sorted(n for n, getter in getters.items() if getter() is not self.originals[n])


class Audit:
    """A sys audit hook: file access outside allowed folders, and any network use."""

    _NETWORK = {
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyname_ex",
        "urllib.Request",
        "http.client.connect",
    }
    _FILES = {"open", "os.listdir", "os.scandir", "os.chdir", "shutil.copyfile"}

    def __init__(self, allowed_roots: Iterable[Path]) -> None:
        self.allowed = tuple(str(Path(p).resolve()) for p in allowed_roots)
        self.active = False
        self.file_paths: list[str] = []
        self.network: list[str] = []
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event in self._NETWORK:
            if len(self.network) < 20:
                self.network.append(f"{event} {str(args[1:2])[:120]}")
        elif event in self._FILES and args:
            self._check_path(args[0])

    def _check_path(self, raw: Any) -> None:
        if isinstance(raw, int) or raw is None:
            return
        try:
            path = os.path.realpath(os.fsdecode(raw))
        except (TypeError, ValueError):
            return
        if not path.startswith(self.allowed) and len(self.file_paths) < 20:
            self.file_paths.append(path)


def default_allowed_roots(candidate_dir: Path) -> list[Path]:
    """Where a legitimate solution reads: its own folder, Python, libraries, the system."""
    roots = {
        candidate_dir,
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        Path(__file__).resolve().parent,
    }
    roots.update(Path(p) for p in sys.path if p and Path(p).is_dir() and "site-packages" in p)
    roots.update(
        Path(p)
        for p in (
            "/usr",
            "/lib",
            "/lib64",
            "/etc",
            "/proc",
            "/sys",
            "/dev",
            "/opt/conda",
            "/usr/local/cuda",
            "/run/nvidia-persistenced",
        )
    )
    for name in ("CUDA_HOME", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "TMPDIR", "HOME"):
        if os.environ.get(name):
            roots.add(Path(os.environ[name]))
    return sorted(roots)


class TritonLaunches:
    """Counts Triton kernel launches under the interpreter (CPU), where no profiler sees them."""

    def __init__(self) -> None:
        self.names: list[str] = []
        try:
            from triton.runtime.interpreter import InterpretedFunction
        except ImportError:
            return
        original = InterpretedFunction.run
        launches = self.names

        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not kwargs.get("warmup"):
                launches.append(getattr(self.fn, "__name__", "triton_kernel"))
            return original(self, *args, **kwargs)

        InterpretedFunction.run = run


@dataclass
class CallProfile:
    aten_ops: set[str]
    kernels: set[str]

    def own_kernels(self, interpreter_launches: Iterable[str]) -> set[str]:
        own = {k for k in self.kernels if not _is_library_kernel(k)}
        return own | set(interpreter_launches)


def _is_library_kernel(name: str) -> bool:
    lowered = name.lower()
    return any(marker in lowered for marker in LIBRARY_KERNEL_MARKERS)


def profile_call(fn: Callable[[], Any], device: str) -> tuple[Any, CallProfile]:
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        result = fn()
        if device == "cuda":
            torch.cuda.synchronize()
    aten_ops, kernels = set(), set()
    for event in prof.events():
        if event.device_type == torch.profiler.DeviceType.CUDA:
            kernels.add(event.name)
        elif event.name.startswith("aten::"):
            aten_ops.add(event.name)
    return result, CallProfile(aten_ops, kernels)


def live_threads() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.ident is not None and t.is_alive()}


def child_processes() -> set[int]:
    return own_children(include_zombies=False)


def exception_fallbacks(source: str) -> list[int]:
    """Line numbers of except handlers that produce a result instead of raising.

    `try: kernel() except: return torch_reference()` passes every check while the kernel is
    broken; a handler that only re-raises, logs or cleans up is fine.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler):
            body = ast.Module(body=node.body, type_ignores=[])
            raises = any(isinstance(n, ast.Raise) for n in ast.walk(body))
            returns = any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(body))
            if returns and not raises:
                lines.append(node.lineno)
    return lines
