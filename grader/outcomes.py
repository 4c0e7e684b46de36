"""What a finished child's messages say, as facts the gates are decided from: its stage errors,
the grader's own errors, the judge's errors and bytes, the baselines it measured.
"""

import shutil
from pathlib import Path
from typing import Any

from grader.gates import CandidateFacts
from grader.launch import exit_description, log_tail
from grader.messages import BEYOND_SHARE
from grader.result import (
    ShapeRow,
)
from grader.scratch import SCRATCH_FULL_BYTES
from grader.timing import percentile
from sandboxes.backends import (
    Outcome,
)


def compile_median(
    message: dict[str, Any], cached: dict[str, Any] | None, eager_ms: float
) -> float | None:
    """The compiled time the judge measured, or the cached one carried over to its eager time."""
    if message.get("compile_ms"):
        return percentile(message["compile_ms"], 0.5)
    if cached and cached.get("compile_ms") and cached.get("eager_ms"):
        return float(cached["compile_ms"]) * eager_ms / float(cached["eager_ms"])
    return None


def _stage_error(outcome: Outcome, stage: str) -> dict[str, Any] | None:
    """The candidate's first error message of `stage` (the whole run's or one shape's)."""
    for message in outcome.messages:
        if message["event"] in ("error", "shape_error") and message.get("stage") == stage:
            return message
    return None


def device_busy(outcome: Outcome) -> tuple[str, str, dict[str, Any]] | None:
    """(gate, reason, detail) where the candidate ran out of GPU memory that other processes
    held, or within its share of a GPU shared by design (one not graded again alone): the
    device was shared, so the run says nothing of the solution."""
    message = _stage_error(outcome, "device_busy") or _stage_error(outcome, BEYOND_SHARE)
    if message is None:
        return None
    reason = (
        "grader error: the GPU ran out of memory while other processes held it: "
        "this is not the solution's failure"
    )
    return "correctness", reason, {"error": message["message"][-4000:]}


def beyond_share(outcome: Outcome) -> bool:
    """The candidate ran out of device memory within its share of a shared GPU
    (roles.common.runtime_error): the evaluation grades it again, alone."""
    return _stage_error(outcome, BEYOND_SHARE) is not None


def scratch_full(outcome: Outcome, io_dir: Path) -> tuple[str, str, dict[str, Any]] | None:
    """(gate, reason, detail) where the candidate's process could not write a case's outputs
    because the grader's scratch space is full, and this process sees that it is (a solution
    that only says so fails as any other error would)."""
    message = _stage_error(outcome, "scratch_full")
    if message is None:
        return None
    usage = shutil.disk_usage(io_dir)
    if usage.free > max(SCRATCH_FULL_BYTES, usage.total // 50):
        return None
    reason = (
        "grader error: the grader's scratch space for outputs is full "
        f"({usage.free / 2**30:.1f} GiB free of {usage.total / 2**30:.1f} GiB): "
        "this is not the solution's failure"
    )
    return "correctness", reason, {"error": message["message"][-4000:]}


class GraderError(Exception):
    """The grader could not judge (the reference failed or ran out of memory): not the solution's
    failure. reason starts with "grader error:" and says so."""

    def __init__(self, gate: str, reason: str, detail: dict[str, Any]) -> None:
        super().__init__(reason)
        self.gate, self.reason, self.detail = gate, reason, detail


_CAUSES = {
    "out_of_memory": "the reference ran out of device memory",
    "reference_failed": "the reference failed",
    "task_error": "the task is at fault",
}


def grader_error_from(
    outcome: Outcome, role: str, timeout_s: float, shapes: dict[int, dict[str, int]]
) -> GraderError:
    """A grader child (judge or probe) that ended without its result, as a named grader error."""
    reported = outcome.last("grader_error")
    error = outcome.last("error")
    message = error["message"] if error else exit_description(outcome)
    if outcome.timed_out:
        what = f"the {role} timed out after {timeout_s:g} s"
    elif reported is not None:
        shape = shapes.get(reported["shape"], shapes.get(-1, {}))
        where = "the visible shape" if reported["shape"] == -1 else "shape"
        what = f"{_CAUSES.get(reported['cause'], 'the reference failed')} on {where} {shape}"
        message = reported["message"]
        if reported["cause"] == "task_error":  # a plain sentence, not a traceback
            what = f"{what} ({message})"
    else:
        what = f"the {role} ended without a result ({exit_description(outcome)})"
    detail = {"error": message, "log": log_tail(outcome.log_path)[-4000:]}
    gate = "correctness"
    return GraderError(gate, f"grader error: {what}: this is not the solution's failure", detail)


def record_errors(rows: list[ShapeRow], judge: Outcome) -> None:
    for message in judge.messages:
        if message["event"] != "judged" or message.get("max_abs_err") is None:
            continue
        row = rows[message["shape"]]
        row.max_abs_err = max(row.max_abs_err or 0.0, message["max_abs_err"])
        row.max_rel_err = max(row.max_rel_err or 0.0, message.get("max_rel_err") or 0.0)


def bytes_compared(judge: Outcome) -> dict[str, int]:
    """The candidate's output bytes the judge compared, and how many of them it read where the
    candidate left them on the device (device_outputs.py) rather than through host memory."""
    judged = [m for m in judge.messages if m["event"] == "judged"]
    return {
        "bytes_compared": sum(int(m.get("bytes") or 0) for m in judged),
        "bytes_on_device": sum(int(m.get("bytes") or 0) for m in judged if m.get("on_device")),
    }


def largest_elements(judge: Outcome) -> dict[int, int]:
    """Each shape's largest tensor (its inputs and the reference's outputs) as the judge saw it,
    by shape index: the facts of the 32-bit index limit (gates.index_limited_reasons)."""
    largest: dict[int, int] = {}
    for message in judge.messages:
        if message["event"] == "judged" and "largest_elements" in message:
            index = message["shape"]
            largest[index] = max(largest.get(index, 0), int(message["largest_elements"]))
    return largest


def judge_environment(judge: Outcome) -> dict[str, Any]:
    message = judge.last("environment") or {}
    return {k: v for k, v in message.items() if k not in ("event", "received_at")}


def candidate_facts(outcome: Outcome, shapes: list[dict[str, Any]]) -> CandidateFacts:
    """The candidate child's outcome as the early gates see it (gates.early_gates)."""
    error = outcome.last("error")
    return CandidateFacts(
        compiled=outcome.last("compiled") is not None,
        timed_out=outcome.timed_out,
        error_stage=error.get("stage") if error else None,
        error_message=error["message"] if error else None,
        done=outcome.last("done") is not None,
        seen_cases_finished=_seen_cases_finished(outcome, shapes),
        timing_interrupted=_timing_interrupted(outcome, shapes),
        exit_description=exit_description(outcome),
        log_tail=log_tail(outcome.log_path),
    )


def _seen_cases_finished(outcome: Outcome, shapes: list[dict[str, Any]]) -> bool:
    done = {(m["shape"], m["case"]) for m in outcome.messages if m["event"] == "case_done"}
    return all(
        (i, c) in done for i, s in enumerate(shapes) if s["seen"] for c in range(len(s["cases"]))
    )


def _timing_interrupted(outcome: Outcome, shapes: list[dict[str, Any]]) -> dict[str, int] | None:
    """The shape whose timing began and never ended, where the process died without a word (a
    crash in a library, an abort): a solution that cannot be timed fails."""
    if outcome.last("done") is not None:
        return None
    ended = {m["shape"] for m in outcome.messages if m["event"] == "timing_end"}
    for message in outcome.messages:
        if message["event"] == "timing_begin" and message["shape"] not in ended:
            return dict(shapes[message["shape"]]["shape"])
    return None
