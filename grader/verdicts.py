"""Turning the children's reports into per-shape verdicts and anti-cheat flags."""

from typing import Any

from grader import decoy
from grader.result import EvalResult, Flag
from grader.taskspec import TaskSpec
from sandboxes.backends import Outcome

# A candidate this much further from a float64 run than the fp32 reference computed in a lower
# precision than the task's dtype (fp32 reference error is ~1e-7; bf16 arithmetic gives ~1e-3).
PRECISION_RATIO = 50.0
PRECISION_FLOOR = 1e-5
# Library kernels beside kernels of its own are allowed (KernelBench's way: a cuBLAS GEMM, then a
# fused epilogue); the decoy test (decoy.py) decides whether its own kernels do work the output
# needs. Only where that test cannot tell does the share of forward()'s time on a visible shape
# (device time on a GPU, wall time under the CPU interpreter) in library kernels and aten ops
# decide: above this, flag library_work.
LIBRARY_SHARE_LIMIT = 0.5
# Library time below this is fixed cost (a fill, a launch), not the task's work.
LIBRARY_FLOOR_US = 20.0
NAMED_SHARE = 0.1


def _by_case(outcome: Outcome, event: str) -> dict[tuple[int, int], dict[str, Any]]:
    return {(m["shape"], m["case"]): m for m in outcome.messages if m["event"] == event}


def shape_failures(
    shapes: list[dict[str, Any]], candidate: Outcome, judge: Outcome
) -> dict[int, str | None]:
    """The first reason each shape is wrong, or None where every case matched."""
    reports, judged = _by_case(candidate, "case"), _by_case(judge, "judged")
    crashes = {m["shape"]: m for m in candidate.messages if m["event"] == "shape_error"}
    verdicts: dict[int, str | None] = {}
    for index, shape in enumerate(shapes):
        verdicts[index] = _shape_failure(index, shape, reports, judged, crashes)
    return verdicts


def _shape_failure(
    index: int,
    shape: dict[str, Any],
    reports: dict[tuple[int, int], Any],
    judged: dict[tuple[int, int], Any],
    crashes: dict[int, Any],
) -> str | None:
    if index in crashes:
        last_line = crashes[index]["message"].strip().splitlines()[-1:] or ["?"]
        return f"{crashes[index]['stage']} error: {last_line[0][:300]}"
    for case_index, case in enumerate(shape["cases"]):
        label = f"seed {case['seed']} ({case['distribution']} inputs)"
        if case.get("stress"):
            label = f"stress case {case['stress']}"
        report = reports.get((index, case_index))
        if report is None:
            return "not run: the solution's process ended before this shape"
        verdict = judged.get((index, case_index))
        violations = _unexcused(report["violations"], verdict)
        if violations:
            return f"{label}: {violations[0]}"
        if verdict is None:
            return f"{label}: not judged"
        if not verdict.get("skipped") and not verdict["correct"]:
            return f"{label}: {verdict['reason']}"
    return None


def _unexcused(violations: list[str], verdict: dict[str, Any] | None) -> list[str]:
    """Violations less the aliases that the reference's own output has on the same case (a
    transpose of a one-row matrix is a view): the judge reports those, never the candidate."""
    excused = set(verdict.get("reference_aliases", [])) if verdict else set()
    return [v for v in violations if v not in excused]


def collect_flags(
    spec: TaskSpec,
    result: EvalResult,
    candidate: Outcome,
    judge: Outcome,
    decoy_finding: decoy.Finding | None = None,
) -> list[Flag]:
    flags: dict[str, Flag] = {f.code: f for f in result.flags}

    def add(code: str, message: str) -> None:
        flags.setdefault(code, Flag(code, message))

    for message in candidate.messages:
        _flags_from_candidate(message, spec, add)
    found = decoy_finding or decoy.Finding("not_run")
    if found.kind == "decoy":
        add(decoy.FLAG, found.message)
    elif found.kind == "inconclusive":
        library = _library_work(candidate, result)
        if library:
            add("library_work", f"{library} (the decoy test could not tell: {found.message})")
    if candidate.leftover_processes:
        add(
            "background_process",
            f"{candidate.leftover_processes} processes were still running when it ended",
        )
    for message in judge.messages:
        precision = message.get("precision") if message["event"] == "judged" else None
        if precision and _downgraded(precision):
            add(
                "precision_downgrade",
                f"error against float64 is {precision['candidate_err']:.2e}, the {spec.dtype} "
                f"reference's is {precision['reference_err']:.2e}: computed in a lower precision",
            )
    return list(flags.values())


def library_share(candidate: Outcome) -> float | None:
    """The largest share of forward()'s device time in library kernels and aten ops over the
    visible shapes' profiled cases: a figure for the run page, not a verdict. None on the CPU,
    where the interpreter's slowness makes the share say nothing."""
    shares = [
        m["library_us"] / (m["own_us"] + m["library_us"])
        for m in candidate.messages
        if m["event"] == "case"
        and m.get("seen", True)
        and "library_us" in m
        and m["own_us"] + m["library_us"] > 0
    ]
    return max(shares) if shares else None


def _library_work(candidate: Outcome, result: EvalResult) -> str | None:
    """The library_work finding from the profiled case of each visible shape. A solution with
    no kernel of its own is no_own_kernel instead."""
    for message in candidate.messages:
        if message["event"] != "case" or not message.get("seen", True):
            continue
        if "library_us" not in message or not message["own_kernels"]:
            continue
        own_us, library_us = message["own_us"], message["library_us"]
        if library_us <= LIBRARY_FLOOR_US or library_us <= LIBRARY_SHARE_LIMIT * (
            own_us + library_us
        ):
            continue
        top = message["top_library"]
        # Named: the items that carry the time, not the allocations beside them.
        named = "; ".join(n[:120] for n, us in top[:3] if us >= NAMED_SHARE * top[0][1])
        shape = result.per_shape[message["shape"]].shape
        return (
            f"on shape {shape}, {library_us / (own_us + library_us):.0%} of forward()'s time "
            f"was spent outside its own kernels, mostly in: {named or 'Python code'}"
        )
    return None


def _flags_from_candidate(message: dict[str, Any], spec: TaskSpec, add: Any) -> None:
    event = message["event"]
    if event == "tampered":
        add("tampering", f"replaced after the solution loaded: {', '.join(message['names'])}")
    elif event == "audit":
        if message["files"]:
            add(
                "file_access", f"opened paths outside its folder: {', '.join(message['files'][:3])}"
            )
        if message["network"]:
            add("network", f"used the network: {message['network'][0]}")
    elif event == "compiled" and message.get("fallback_lines"):
        lines = ", ".join(str(n) for n in message["fallback_lines"])
        add(
            "exception_fallback",
            f"an except handler (line {lines}) returns a result instead "
            "of raising: a broken kernel would fall back silently",
        )
    elif event == "case":
        _flags_from_case(message, spec, add)
    elif event == "side_stream":
        add("side_stream_work", _side_stream_message(message))


def _side_stream_message(message: dict[str, Any]) -> str:
    streams = message.get("kernel_streams") or []
    current = message.get("current_stream")
    others = [s for s in streams if s != current]
    where = f" (kernels on stream {others} while the current stream is {current})" if others else ""
    return (
        f"work continued on another stream after forward() returned{where}; "
        "the reported time drains the whole device instead"
    )


def _flags_from_case(message: dict[str, Any], spec: TaskSpec, add: Any) -> None:
    if message.get("new_threads"):
        add(
            "background_thread",
            f"{message['new_threads']} threads were still running after forward() returned",
        )
    if message.get("new_processes"):
        add(
            "background_process",
            f"{message['new_processes']} processes were still running after forward() returned",
        )
    if "own_kernels" not in message:
        return
    forbidden = sorted(set(message["aten_ops"]) & set(spec.forbidden_ops))
    if forbidden:
        add("forbidden_op", f"forward() called {', '.join(forbidden)}, which the task forbids")
        if message["own_kernels"] and message.get("seen", True):
            # The task forbids the library op its reference is (a GEMM task forbids aten::mm):
            # kernels of its own beside that op are not the task's work.
            add(
                "no_own_kernel",
                f"forward() called {forbidden[0]}, the library op the task forbids, beside "
                "kernels of its own: the task's work is the library's",
            )
    # Judged on the visible shapes: a solution that gives up on an unseen shape is already
    # failing generalization.
    if not message["own_kernels"] and message.get("seen", True):
        add(
            "no_own_kernel",
            "forward() launched no kernel of its own, only library kernels and aten ops",
        )


def _downgraded(precision: dict[str, float]) -> bool:
    candidate, reference = precision["candidate_err"], precision["reference_err"]
    return candidate > PRECISION_FLOOR and candidate > PRECISION_RATIO * max(reference, 1e-7)
