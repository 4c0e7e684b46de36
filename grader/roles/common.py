"""What every grader child role shares: how a stage fails, how device memory is released and
shared, how an out-of-memory error is told apart from a solution's own failure."""

import contextlib
import gc
import threading
import traceback
from typing import Any

import torch

from grader import channel
from grader.cases import Case, Stress, StressError
from grader.device_outputs import device_budget_bytes
from grader.feasibility import RESERVE_BYTES
from grader.gpu_share import PausePoint
from grader.messages import BEYOND_SHARE

INIT_SEED = 42


def warm_device(device: str) -> threading.Thread:
    """CUDA's context made on a thread of its own while the job's modules load (about 0.4 s on
    an H100); join it before the first tensor goes to the device. A failure here is left for
    that first use to raise where the job reports it."""

    def init() -> None:
        with contextlib.suppress(Exception):
            torch.cuda.init()
            torch.cuda.synchronize()

    thread = threading.Thread(target=init if device == "cuda" else (lambda: None), daemon=True)
    thread.start()
    return thread


def memory_share(job: dict[str, Any]) -> float:
    """The share of the GPU's memory this evaluation may use (EvaluateOptions.gpu_memory_share)."""
    return float(job.get("memory_share", 1.0))


def hold_to_share(job: dict[str, Any]) -> None:
    """Where several evaluations share one GPU, each process allocates within its share; a
    process that serves job after job (a warm judge) takes each job's share, the whole GPU
    included."""
    share = memory_share(job)
    if job["device"] == "cuda" and (share < 1.0 or torch.cuda.is_initialized()):
        torch.cuda.set_per_process_memory_fraction(share)


class StageError(Exception):
    def __init__(self, stage: str, message: str, shape_index: int | None = None) -> None:
        super().__init__(message)
        self.stage, self.message, self.shape_index = stage, message, shape_index


def describe(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)[-12:])[-4000:]


def as_list(output: Any) -> list[Any]:
    return list(output) if isinstance(output, (list, tuple)) else [output]


def cases_of(shape_job: dict[str, Any]) -> list[Any]:
    return [Case.from_dict(c) for c in shape_job["cases"]]


def stress_of(job: dict[str, Any], case: Any) -> Any:
    """The task's stress case that a case applies (cases.Stress), or None."""

    if not case.stress:
        return None
    return Stress.from_dict(job["stress_cases"][case.stress])


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def pause_point(job: dict[str, Any]) -> PausePoint:
    """A trusted child's pause point where its evaluation shares the GPU (gpu_share.py): its
    work so far drained before it answers (a child that has made no CUDA context has none)."""

    def drain() -> None:
        if job["device"] == "cuda" and torch.cuda.is_initialized():
            torch.cuda.synchronize()

    return PausePoint(job.get("gpu_share_dir"), drain)


def release_device_memory(device: str) -> None:
    """Cached blocks of the last shape go back to the device before the next shape allocates."""

    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def grader_error(exc: BaseException, index: int, shape: dict[str, int]) -> "StageError":
    """Anything that fails in the judge or the probe runs only the reference and the grader: it
    is the grader's failure, reported with its cause, never the solution's."""

    if isinstance(exc, StressError):
        channel.send("grader_error", shape=index, cause="task_error", message=str(exc)[:2000])
        return StageError("judge", str(exc), index)
    cause = "out_of_memory" if is_out_of_memory(exc) else "reference_failed"
    channel.send("grader_error", shape=index, cause=cause, message=describe(exc)[-2000:])
    return StageError("judge", describe(exc), index)


def runtime_error(
    exc: BaseException, index: int, device: str, share: float, whole: float | None = None
) -> "StageError":
    """The solution's failure while running, unless it ran out of device memory that other
    processes on the GPU were holding: then the device was shared and the failure is not the
    solution's (stage "device_busy", a grader error). Out of memory within a share smaller than
    the one its shapes were planned on (`whole`: the GPU's room, gpu_share.py) is not the
    solution's either (stage "beyond_share": the grading process grades it again, alone)."""
    if device == "cuda" and is_out_of_memory(exc):
        busy = _device_contention(share)
        if busy:
            return StageError("device_busy", f"{busy}; {describe(exc)}", index)
        if whole is not None and share < whole:
            return StageError(BEYOND_SHARE, describe(exc), index)
    return StageError("runtime", describe(exc), index)


def _device_contention(share: float) -> str:
    """What other processes held of the GPU, where that is more than their share and the reserve
    the memory budget leaves for contexts and fragmentation (see feasibility.py); "" otherwise."""

    try:
        free, total = torch.cuda.mem_get_info()
    except Exception:  # the device itself failed: nothing to measure
        return ""
    own = int(torch.cuda.memory_reserved())
    others = int(total) - int(free) - own
    if others <= (1.0 - share) * int(total) + RESERVE_BYTES:
        return ""
    gib = 2**30
    return (
        f"other processes held {others / gib:.1f} GiB of the GPU's {total / gib:.1f} GiB "
        f"while the solution held {own / gib:.1f} GiB"
    )


def is_out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, (MemoryError, torch.OutOfMemoryError)):
        return True
    return "out of memory" in str(exc).lower()


def aliases(outputs: list[Any], inputs: list[Any]) -> list[str]:
    """Which output views which input, worded alike for the candidate's outputs and for the
    reference's, so that the verdict can excuse exactly the aliases the reference shares."""

    return [
        f"output {o} aliases input {i}"
        for o, out in enumerate(outputs)
        for i, x in enumerate(inputs)
        if isinstance(out, torch.Tensor)
        and isinstance(x, torch.Tensor)
        and out.numel()
        and x.numel()
        and _shares_memory(out, x)
    ]


def _shares_memory(a: Any, b: Any) -> bool:
    sa, sb = a.untyped_storage(), b.untyped_storage()
    a0, b0 = int(sa.data_ptr()), int(sb.data_ptr())
    return a0 < b0 + int(sb.nbytes()) and b0 < a0 + int(sa.nbytes())


def clone(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else value


def all_finite(values: list[Any]) -> bool:
    return all(
        bool(torch.isfinite(v).all())
        for v in values
        if isinstance(v, torch.Tensor) and v.is_floating_point()
    )


def device_output_budget(job: dict[str, Any]) -> int:
    """The job's budget for outputs held on the device, or the same rule on this GPU's memory
    where the grading process had no probe to take it from."""

    budget = job.get("device_output_budget_bytes")
    if budget is not None:
        return int(budget)
    total = int(torch.cuda.get_device_properties(0).total_memory * memory_share(job))
    return device_budget_bytes(total, None)
