"""Anti-cheat instruments that run inside the candidate child, installed before its code loads.

None of them is proof against a determined attacker in the same process; they catch the cheats
seen in the wild (patched timers and comparisons, fallbacks to the reference, background work,
peeking at files) and the sandbox and the judge process carry the rest.
"""

import ast
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from sandboxes.processes import own_children

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
    from grader import cases, channel, timing

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
            given = os.path.abspath(os.fsdecode(raw))
            path = os.path.realpath(given)
        except (TypeError, ValueError):
            return
        # Both spellings: /proc/<pid>/root/... and /proc/<pid>/cwd/... resolve out of /proc.
        if other_process_entry(given) or other_process_entry(path):
            path = given
        elif path.startswith(self.allowed):
            return
        if len(self.file_paths) < 20:
            self.file_paths.append(path)


# The entries that hold another process's secrets or reach its files: its environment, command
# line, memory and maps, open files, working folder, root and executable. Its stat, status and
# comm hold none, and the grader's own child watch (own_children) reads every process's stat.
_PROC_PID = re.compile(
    r"/proc/(\d+)(?:/task/\d+)?(?:/(?:environ|cmdline|mem|maps|smaps|smaps_rollup|numa_maps"
    r"|pagemap|map_files|fd|fdinfo|cwd|root|exe|auxv|syscall|stack|io|attr|mountinfo|mounts"
    r"|mountstats|ns)(?:/|$)|/?$)"
)


def other_process_entry(path: str) -> bool:
    """/proc/<pid>/... of another process: its environment, command line, memory, maps, open
    files. /proc is allowed for the system's own files (cpuinfo, meminfo, sys/...); a solution
    has no business in another process's entries, and under the unisolated process backend
    they are the grading worker's and the host's. This process's own (/proc/self,
    /proc/thread-self, its pid or a thread's id) are not another's."""
    match = _PROC_PID.match(path)
    if match is None:
        return False
    pid = match.group(1)
    # os.path.exists stats, which raises no audit event: this runs inside the hook.
    return int(pid) != os.getpid() and not os.path.exists(f"/proc/self/task/{pid}")


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
    # The interpreter's own bytecode lookups, for every module it imports (the solution's
    # among them), where it reads the grader's bytecode folder (bytecode.py: bound read-only,
    # only the parts that mirror sources it may read anyway).
    if sys.pycache_prefix:
        roots.add(Path(sys.pycache_prefix))
    return sorted(roots)


# Launched on the current stream just before forward() inside the profile: its stream is the
# current stream as the profiler numbers streams (CUPTI ids, not cudaStream_t handles).
STREAM_MARKER_KERNEL = "spin_kernel"
# A range around each interpreted launch, so that the aten ops the interpreter itself calls are
# nested under it and never named as the solution's library work.
OWN_LAUNCH_RANGE = "arena.triton_launch::"
# Taken before the solution loads: a solution that replaces the timer cannot move this one.
_clock_ns = time.perf_counter_ns


class TritonLaunches:
    """Names and wall times of Triton launches under the interpreter (CPU), where no profiler
    sees kernels."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.durations_ns: list[int] = []
        try:
            from triton.runtime.interpreter import InterpretedFunction
        except ImportError:
            return
        original = InterpretedFunction.run
        names, durations = self.names, self.durations_ns

        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("warmup"):
                return original(self, *args, **kwargs)
            name = getattr(self.fn, "__name__", "triton_kernel")
            started = _clock_ns()
            with torch.profiler.record_function(OWN_LAUNCH_RANGE + name):
                result = original(self, *args, **kwargs)
            # A launch that raised ran nothing: it is no kernel of the solution's, as on a GPU.
            names.append(name)
            durations.append(_clock_ns() - started)
            return result

        InterpretedFunction.run = run

    def since(self, start: int) -> list[tuple[str, float]]:
        """(name, microseconds) of the launches after the first `start` ones."""
        pairs = zip(self.names[start:], self.durations_ns[start:], strict=True)
        return [(name, ns / 1000.0) for name, ns in pairs]


@dataclass
class KernelRun:
    name: str
    stream: int
    device_us: float


@dataclass
class CallProfile:
    aten_ops: set[str]
    kernels: list[KernelRun] = field(default_factory=list)
    # The current stream's profiler id; None where the marker kernel was not seen.
    current_stream: int | None = None
    wall_us: float = 0.0
    # Top-level aten ops (not inside an interpreted launch) and their CPU time.
    aten_us: dict[str, float] = field(default_factory=dict)

    def own_kernels(self, interpreter_launches: Iterable[str]) -> set[str]:
        own = {k.name for k in self.kernels if not _is_library_kernel(k.name)}
        return own | set(interpreter_launches)

    def work_share(self, device: str, interpreted: list[tuple[str, float]]) -> "WorkShare":
        if device == "cuda":
            return _device_work_share(self.kernels)
        return _interpreter_work_share(self.wall_us, interpreted, self.aten_us)


@dataclass
class WorkShare:
    """Time in the solution's own kernels against time in library kernels and aten ops."""

    own_us: float
    library_us: float
    # The largest library items, largest first, with their microseconds.
    top_library: list[tuple[str, float]]

    @property
    def library_share(self) -> float:
        total = self.own_us + self.library_us
        return self.library_us / total if total > 0 else 0.0


def _device_work_share(kernels: list[KernelRun]) -> WorkShare:
    own = library = 0.0
    per_library: dict[str, float] = {}
    for kernel in kernels:
        if _is_library_kernel(kernel.name):
            library += kernel.device_us
            per_library[kernel.name] = per_library.get(kernel.name, 0.0) + kernel.device_us
        else:
            own += kernel.device_us
    return WorkShare(own, library, _largest(per_library))


def _interpreter_work_share(
    wall_us: float, interpreted: list[tuple[str, float]], aten_us: dict[str, float]
) -> WorkShare:
    """On CPU: forward()'s wall time outside interpreted launches is library and Python time.

    The interpreter runs a kernel hundreds of times slower than a GPU would, so this only
    catches solutions whose library calls dwarf even an interpreted kernel."""
    own = sum(us for _, us in interpreted)
    return WorkShare(own, max(0.0, wall_us - own), _largest(aten_us))


def _largest(times_us: dict[str, float], count: int = 5) -> list[tuple[str, float]]:
    return sorted(times_us.items(), key=lambda item: -item[1])[:count]


def _is_library_kernel(name: str) -> bool:
    lowered = name.lower()
    return any(marker in lowered for marker in LIBRARY_KERNEL_MARKERS)


def profile_call(
    fn: Callable[[], Any], device: str, mark: Callable[[str], None] | None = None
) -> tuple[Any, CallProfile]:
    """The call under the profiler that torch.profiler.profile wraps (Kineto, CPU and CUDA
    activities alike). The wrapper's start asks `hasattr(torch, "_inductor")`, which imports
    torch._inductor and torch._dynamo: seconds of a candidate's first profiled call, for a
    compiler it never uses (child._prepare). `mark`, where given, is called after each of its
    steps (the profiler's start, the call, the profiler's stop, its events read): a trace's
    Steps.mark."""
    from torch.autograd.profiler import profile

    mark = mark or (lambda _name: None)
    use_device = "cuda" if device == "cuda" else None
    with profile(use_cpu=True, use_device=use_device, use_kineto=True) as prof:
        if device == "cuda":
            torch.cuda._sleep(0)
        mark("profiler_start")
        started = _clock_ns()
        result = fn()
        if device == "cuda":
            torch.cuda.synchronize()
        wall_us = (_clock_ns() - started) / 1000.0
        mark("profiled_call")
    mark("profiler_stop")
    events = prof.function_events
    aten_ops = {e.name for e in events if e.name.startswith("aten::")}
    kernels, current = _kernel_runs(prof) if device == "cuda" else ([], None)
    mark("profile_events")
    return result, CallProfile(aten_ops, kernels, current, wall_us, _top_level_aten_us(events))


def _kernel_runs(prof: Any) -> tuple[list[KernelRun], int | None]:
    """Every device activity of the call in launch order, less the stream marker, and the
    marker's stream: the first activity launched is the marker."""
    events = [
        e for e in prof.kineto_results.events() if e.device_type() == torch.profiler.DeviceType.CUDA
    ]
    events.sort(key=lambda e: e.correlation_id())
    current = None
    if events and STREAM_MARKER_KERNEL in events[0].name():
        current = int(events.pop(0).device_resource_id())
    runs = [
        KernelRun(e.name(), int(e.device_resource_id()), e.duration_ns() / 1000.0) for e in events
    ]
    return runs, current


def _top_level_aten_us(events: Any) -> dict[str, float]:
    times: dict[str, float] = {}
    for event in events:
        if event.name.startswith("aten::") and event.cpu_parent is None:
            times[event.name] = times.get(event.name, 0.0) + float(event.cpu_time_total)
    return times


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
