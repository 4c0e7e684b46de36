"""Entry point of a grader child process: `python -m grader.child JOB.json`, or `--prepared`
(started ahead of its job, prepared.py), or `--warm` (a judge serving one job after another,
warm_judge.py). The job's "role" picks what runs (grader/roles/: probe,
candidate, decoy, judge, build); progress goes over the private channel only, never stdout.
One shape's tensors are alive at a time in each child; caches are emptied between shapes.
"""

import contextlib
import gc
import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

# When each part of a child's start was done (time.monotonic(), one clock for every process of
# the host): sent with "prepared", so that an evaluation can say where its children's start-up
# went (launch.start_report).
START_MARKS = {"interpreter": time.monotonic()}
# No collection while the imports below run: they make about 300,000 objects and little
# garbage, and the collector's passes over them took a fifth of a child's import (0.4 of 2.0 s
# on a 2-core host). _freeze_imports collects once and turns it back on before any job runs.
gc.disable()

import torch  # noqa: E402 - after the interpreter's mark
import torch.profiler  # noqa: E402

START_MARKS["torch"] = time.monotonic()
import triton  # noqa: E402 - imported ahead: a solution's first import of it costs seconds
import triton.language as tl  # noqa: E402

START_MARKS["triton"] = time.monotonic()
from grader import channel, compiler_off  # noqa: E402
from grader.roles import PRELUDES, ROLES  # noqa: E402
from grader.roles.common import StageError, hold_to_share, release_device_memory  # noqa: E402
from grader.roles.judge import judge_stress_state as _judge_stress_state  # noqa: E402, F401

START_MARKS["grader"] = time.monotonic()


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    if job.get("arch"):  # the builds' architecture (launch.py): before any solution builds
        os.environ["TORCH_CUDA_ARCH_LIST"] = job["arch"]
    hold_to_share(job)
    try:
        ROLES[job["role"]](job)
    except StageError as exc:
        channel.send("error", stage=exc.stage, message=exc.message, shape=exc.shape_index)
        return 3
    channel.send("done")
    return 0


def prepared_main(role: str | None = None, *, device: bool = False) -> int:
    """A child started ahead of its job (prepared.py) for `role` (None: any role): every role's
    modules are imported (this module's imports), CUDA's context is made and Triton's compiler
    started ahead only with `device` (the candidate's child on a GPU), and the job's path comes
    as one line on stdin. End of input (the pool let it go) ends it with nothing done. A
    prelude's job (roles/prelude.py) may come first: it is served, ended by a "served" message
    with its exit code, and the child reads on; one that fails ends the child, so that nothing
    it left reaches the job."""
    _prepare(role, device=device)
    while line := sys.stdin.readline().strip():
        job = json.loads(Path(line).read_text())
        if job.get("role") not in PRELUDES:
            return main(line)
        code = _prelude(job)
        channel.send("served", code=code)
        if code != 0:
            return code
    return 0


def _prelude(job: dict[str, Any]) -> int:
    hold_to_share(job)
    try:
        PRELUDES[job["role"]](job)
    except Exception:
        traceback.print_exc()
        return 1
    return 0


# torch._dynamo (which imports torch._inductor's package with it) is imported ahead only by the
# warm judge (warm_main), which serves every judge job of its process. A prepared child imports
# it where its own work compiles: the judge's job on a baseline cache miss (the torch.compile
# baseline), or the command line's warm-up of that compile (roles/prelude.py). Imported ahead by
# every judge's child, it cost each 4.8 s of a CPU core on an H200 host, and a command line whose
# judge was handed its job first waited for it (0.7 s, 2026-11-28), though a judge whose shapes
# the baseline cache holds compiles nothing. The probe's job runs the reference on the meta
# device (a KernelBench file's analysis, the drawn shapes' footprints) with the compiler left
# unimported (compiler_off.py); a candidate's job never needs it: the grading process orders
# its shapes (index_limit.run_after_timing_of), and the profiler every child times with
# (guards.profile_call) is the one torch.profiler wraps, whose own start would import it.
# The roles whose jobs run on the meta device with the compiler left unimported: their child
# finds torch's compiler-off wrappers ahead (compiler_off.py).
META_ROLES = frozenset({"probe"})
# The roles that launch no Triton kernel: the probe runs only the reference. Its child is the
# command line's first on the way (the analysis), so it makes no Triton driver ahead.
NO_TRITON_ROLES = frozenset({"probe"})
# The roles whose child imports torch.utils.cpp_extension ahead. Never at this module's import:
# that import asks torch.cuda.is_available(), which starts CUDA's driver in the process, and
# the fork server (forkserver.py), which imports this module, must start none, or no child
# forked from it could use CUDA.
EXTENSION_ROLES = frozenset({"candidate"})


def _prepare(role: str | None = None, *, compiler: bool = False, device: bool = False) -> None:
    """What a child started ahead does before its first job, then says so: the profiler's host
    side starts slowly the first time; with `device` CUDA's context is made and Triton's
    compiler started (_device_ahead, _triton_compiler_ahead); and with `compiler` (the warm
    judge) the compiler stack is imported now rather than on a job's path: 2-5 s on a GPU
    host."""
    with torch.autograd.profiler.profile(use_kineto=True):
        torch.ones(1).add_(1)
    START_MARKS["profiler"] = time.monotonic()
    if role not in NO_TRITON_ROLES:
        _triton_driver()
    if role in EXTENSION_ROLES:
        # Its job wraps torch's extension loaders (builds.ExtensionLoaders) before the
        # solution is imported: the module imports setuptools, which a host without torch's
        # bytecode compiles from source on every job (0.5 s of a candidate's on an H200 host).
        importlib.import_module("torch.utils.cpp_extension")
        START_MARKS["cpp_extension"] = time.monotonic()
    if device:
        _device_ahead()
        _triton_compiler_ahead()
    if compiler:
        importlib.import_module("torch._dynamo")
        START_MARKS["compiler"] = time.monotonic()
    elif role in META_ROLES:
        compiler_off.find_ahead()
    _freeze_imports()
    channel.send("prepared", marks=START_MARKS)


def _triton_driver() -> None:
    """On a GPU host, Triton's driver is made now: its first use builds a C helper into the
    child's Triton cache (0.45 s on an H200 host, measured 2026-11-28), which a solution's
    first launch would otherwise wait for. It asks whether CUDA is there but makes no context.
    A failure is left for the job, whose own first launch reports it."""
    if os.environ.get("TRITON_INTERPRET") == "1" or not Path("/dev/nvidiactl").exists():
        return
    with contextlib.suppress(Exception):
        triton.runtime.driver.active.utils  # noqa: B018 - made on first use
        START_MARKS["triton_driver"] = time.monotonic()


def _device_ahead() -> None:
    """CUDA's context made before the job (0.2-0.45 s on an H100 or H200, which the job's first
    tensor would otherwise wait for: roles/common.warm_device), by a child that has run nothing
    of the solution. Making a context launches no kernel, so another evaluation's timing on the
    GPU meanwhile is not disturbed; it holds the context's own device memory (a few hundred MB)
    while the child waits. Where CUDA cannot start (no GPU visible: a CPU slot), the job's own
    first use reports it."""
    with contextlib.suppress(Exception):
        if torch.cuda.is_available():
            torch.cuda.init()
            torch.cuda.synchronize()
            START_MARKS["device"] = time.monotonic()


@triton.jit  # type: ignore[untyped-decorator]
def _warmup_kernel(x, n, block: tl.constexpr):  # type: ignore[no-untyped-def]
    offsets = tl.program_id(0) * block + tl.arange(0, block)
    tl.store(x + offsets, tl.load(x + offsets, mask=offsets < n) + 1.0, mask=offsets < n)


def _triton_compiler_ahead() -> None:
    """With CUDA's context made, one small kernel of the grader's own compiled for this GPU and
    never launched: a process's first Triton compile costs about 0.9 s that a later one does not
    (0.05 s: the compiler's start, not the kernel), and a Triton solution's first launch would
    otherwise pay it inside the candidate's job. The kernel lands in the child's own Triton
    cache. A failure is left for the solution's own first compile to meet."""
    if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_initialized():
        return
    with contextlib.suppress(Exception):
        from triton.compiler import ASTSource

        signature = {"x": "*fp32", "n": "i32", "block": "constexpr"}
        source = ASTSource(_warmup_kernel, signature, constexprs={"block": 128})
        triton.compile(source, target=triton.runtime.driver.active.get_current_target())
        START_MARKS["triton_compiler"] = time.monotonic()


def _freeze_imports() -> None:
    """What the imports made (torch, triton, the grader: about 300,000 objects) leaves the
    collector's generations, so that each collection between shapes (release_device_memory)
    scans only what the job made: 0.16 s a collection before, on a 2-core host, about 0.15 s of
    every shape's change on a GPU host. The process ends with os._exit (_end): nothing frozen
    needs freeing."""
    gc.collect()
    gc.freeze()
    gc.enable()


def warm_main() -> int:
    """A long-lived judge (a warm judge, docs/grading-pipeline.md): prepared as prepared_main,
    then one job after another, each job's path a line on stdin, each ended by a "served"
    message with the job's exit code. Its reference cache (roles/judge.py) lives between jobs.
    Any job that does not end cleanly ends the process too, so no state it left (a device
    error, a half-built cache entry) reaches the next job."""
    _prepare("judge", compiler=True)
    while line := sys.stdin.readline().strip():
        saved = TorchGlobals.take()
        try:
            code = main(line)
        except BaseException:
            traceback.print_exc()
            code = 1
        saved.restore()
        release_device_memory("cuda" if torch.cuda.is_initialized() else "cpu")
        channel.send("served", code=code)
        if code != 0:
            return code
    return 0


class TorchGlobals:
    """torch's process-wide settings a task's reference may change at import (TF32, the matmul
    precision, cuDNN's choices, the default dtype, grad mode): taken before a warm judge's job
    and put back after it, so that one task's setting never reaches another task's references."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    @classmethod
    def take(cls) -> "TorchGlobals":
        return cls(
            {
                "matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
                "cudnn_tf32": torch.backends.cudnn.allow_tf32,
                "cudnn_benchmark": torch.backends.cudnn.benchmark,
                "cudnn_deterministic": torch.backends.cudnn.deterministic,
                "matmul_precision": torch.get_float32_matmul_precision(),
                "default_dtype": torch.get_default_dtype(),
                "grad": torch.is_grad_enabled(),
                "deterministic": torch.are_deterministic_algorithms_enabled(),
            }
        )

    def restore(self) -> None:
        v = self.values
        torch.backends.cuda.matmul.allow_tf32 = v["matmul_tf32"]
        torch.backends.cudnn.allow_tf32 = v["cudnn_tf32"]
        torch.backends.cudnn.benchmark = v["cudnn_benchmark"]
        torch.backends.cudnn.deterministic = v["cudnn_deterministic"]
        torch.set_float32_matmul_precision(v["matmul_precision"])
        torch.set_default_dtype(v["default_dtype"])
        torch.set_grad_enabled(v["grad"])
        torch.use_deterministic_algorithms(v["deterministic"])


def _end(code: int) -> None:
    """Ends the process as soon as its last message is out: every report has gone through the
    channel (unbuffered writes), so nothing is left to tear down that the operating system does
    not release by itself (the interpreter's and CUDA's orderly shutdown took 0.5-1 s)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _run(argv: list[str]) -> int:
    try:
        if argv[1] == "--prepared":
            role = argv[2] if len(argv) > 2 and not argv[2].startswith("--") else None
            return prepared_main(role, device="--device-ahead" in argv)
        if argv[1] == "--warm":
            return warm_main()
        _freeze_imports()
        return main(argv[1])
    except SystemExit as exc:  # a solution's own sys.exit() keeps its exit code
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # reported by its exit code and the log, as an uncaught error is
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    _end(_run(sys.argv))
