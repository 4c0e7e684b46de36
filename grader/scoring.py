"""Speedups, throughput and roofline fractions from the interleaved timings (CUDA only)."""

import math
from collections.abc import Iterable
from typing import Any

from grader.formulas import FormulaError, formula_evaluate
from grader.result import EvalResult, Flag, Gate, ShapeRow, Timing
from grader.roofline import (
    FRACTION_FLAG_THRESHOLD,
    GpuPeaks,
    achieved,
    peaks_for,
    roofline_fraction,
    speedup_is_possible,
)
from grader.taskspec import TaskSpec
from grader.timing import percentile
from sandboxes.backends import Outcome

# Eager medians from the candidate's process and from the judge's may differ by noise; by more
# than this factor, the candidate's timer was not telling the truth.
EAGER_DISAGREEMENT = 2.0
# Below this judge's eager median (ms), a call is launch-bound and the two processes' eager
# times differ by more than EAGER_DISAGREEMENT with no tampering: measured on an H100
# (bench/results/README.md, 2026-11-27), a 64 x 256 GEMM epilogue timed 0.040 ms alone, 0.079
# interleaved with a solution of one Triton launch, and 0.13 once the process had run the
# profiler (as the candidate's does, for its first case). There the flag says nothing; the
# speedup takes the judge's eager time instead (EAGER_BESIDE_SLACK), so an eager time slowed
# beside the solution earns it nothing.
EAGER_LAUNCH_BOUND_MS = 0.1
# The eager time beside the solution stands for its speedup (a ratio taken in one run) unless
# it is slower than the judge's by more than this factor.
EAGER_BESIDE_SLACK = 1.25
# Per timed call: the L2 flush, two events and a device synchronize, in milliseconds.
OVERHEAD_PER_CALL_MS = 1.0


def geomean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of the positive values; None where there are none."""
    positive = [v for v in values if v is not None and v > 0]
    if not positive:
        return None
    return math.exp(sum(math.log(v) for v in positive) / len(positive))


def _timing(values: list[float]) -> Timing:
    return Timing(percentile(values, 0.5), percentile(values, 0.1), percentile(values, 0.9))


def _by_shape(outcome: Outcome, event: str) -> dict[int, dict[str, Any]]:
    return {m["shape"]: m for m in outcome.messages if m["event"] == event}


def _compile_ms(
    baseline: dict[str, Any], cached: dict[str, float] | None, eager_ms: float | None
) -> float | None:
    if baseline.get("compile_ms"):
        return percentile(baseline["compile_ms"], 0.5)
    if cached and eager_ms and cached.get("compile_ms") and cached.get("eager_ms"):
        # Scaled by today's eager time: the cached ratio compile/eager is what carries over. A
        # cached baseline without a compiled time (compile_baseline off) carries none.
        return float(cached["compile_ms"]) * eager_ms / float(cached["eager_ms"])
    return None


def score_performance(
    result: EvalResult,
    spec: TaskSpec,
    shapes: list[dict[str, Any]],
    candidate: Outcome,
    judge: Outcome,
    cached_baselines: dict[str, Any] | None = None,
) -> None:
    cached_baselines = cached_baselines or {}
    ends, begins = _by_shape(candidate, "timing_end"), _by_shape(candidate, "timing_begin")
    baselines = _by_shape(judge, "baselines")
    for key, cached in cached_baselines.items():
        if int(key) not in baselines and cached.get("eager_ms"):
            # The judge took these from the cache instead of timing (baselines.py).
            baselines[int(key)] = {
                "eager_ms": [cached["eager_ms"]],
                "compile_ms": [cached["compile_ms"]] if cached.get("compile_ms") else [],
                "graphs": bool(cached.get("graphs")),
                "cached": True,
            }
    peaks = peaks_for(str(result.environment.get("gpu", "")))
    vs_eager, vs_compile, vs_sota, fractions = [], [], [], []
    eager_from_judge: list[int] = []
    for index, row in enumerate(result.per_shape):
        end = ends.get(index)
        if not shapes[index]["seen"] or end is None or not end["candidate_ms"]:
            continue
        # The eager time reported is the one interleaved with the candidate (the speedup is a
        # ratio taken in one run) unless it is over EAGER_BESIDE_SLACK times the judge's, which
        # then stands. The judge's own eager time also serves as a cross-check, and as the unit
        # in which torch.compile was timed there.
        row.candidate_ms = _timing(end["candidate_ms"])
        beside_eager = percentile(end["eager_ms"], 0.5)
        row.eager_ms = beside_eager
        baseline = baselines.get(index, {})
        judge_eager = percentile(baseline["eager_ms"], 0.5) if baseline.get("eager_ms") else None
        # Eager times taken one from graphs and one from plain launches are not comparable.
        same_method = bool(baseline.get("graphs")) == bool(end.get("graphs"))
        if same_method and judge_eager and beside_eager > EAGER_BESIDE_SLACK * judge_eager:
            # The speedup is credited only against an eager time the judge reproduces.
            row.eager_ms = judge_eager
            eager_from_judge.append(index)
        compile_judge = _compile_ms(baseline, cached_baselines.get(str(index)), judge_eager)
        if compile_judge and judge_eager:
            row.compile_ms = compile_judge * row.eager_ms / judge_eager
            vs_compile.append(row.compile_ms / row.candidate_ms.median)
        vs_eager.append(row.eager_ms / row.candidate_ms.median)
        if baseline.get("sota_ms") and judge_eager:
            row.sota_ms = percentile(baseline["sota_ms"], 0.5) * row.eager_ms / judge_eager
            vs_sota.append(row.sota_ms / row.candidate_ms.median)
        _throughput(row, spec, peaks, result)
        if row.roofline_fraction is not None:
            fractions.append(row.roofline_fraction)
        _timing_checks(
            result, row, end, begins.get(index), beside_eager, judge_eager if same_method else None
        )
    result.summary.update(
        {
            "speedup_vs_eager": geomean(vs_eager),
            "speedup_vs_compile": geomean(vs_compile),
            "speedup_vs_sota": geomean(vs_sota),
            "roofline_fraction": geomean(fractions),
        }
    )
    _performance_gate(result, peaks)
    result.gates["performance"].detail.update(_timing_overhead(shapes, ends, begins))
    # Shapes whose speedup is taken against the judge's eager time, the smaller of the two.
    result.gates["performance"].detail["eager_from_judge"] = eager_from_judge


def _throughput(row: ShapeRow, spec: TaskSpec, peaks: GpuPeaks | None, result: EvalResult) -> None:
    assert row.candidate_ms is not None
    try:
        flops = formula_evaluate(spec.flops, row.shape)
        bytes_moved = formula_evaluate(spec.bytes_moved, row.shape)
    except FormulaError:
        return
    if flops <= 0 and bytes_moved <= 0:
        return
    row.tflops, row.gbps = achieved(flops, bytes_moved, row.candidate_ms.median)
    if peaks is None:
        return
    fractions = [
        roofline_fraction(
            regime=spec.regime,
            dtype=spec.dtype,
            flops=flops,
            bytes_moved=bytes_moved,
            ms=row.candidate_ms.median,
            peaks=peaks,
            allow_tf32=allow_tf32,
        )
        for allow_tf32 in (False, True)
    ]
    row.roofline_fraction = fractions[0]
    # The flag measures against the most generous roof: an fp32 task may use TF32 and still
    # pass its tolerance, and that is no cheat.
    generous = fractions[1]
    if generous is not None and generous > FRACTION_FLAG_THRESHOLD:
        _flag(
            result, "roofline_exceeded", f"shape {row.shape}: {generous:.2f} of {peaks.name}'s peak"
        )
    possible = speedup_is_possible(
        eager_ms=row.eager_ms or 0.0,
        candidate_ms=row.candidate_ms.median,
        regime=spec.regime,
        dtype=spec.dtype,
        flops=flops,
        bytes_moved=bytes_moved,
        peaks=peaks,
    )
    if not possible:
        _flag(
            result,
            "impossible_speedup",
            f"shape {row.shape}: {row.candidate_ms.median:.4f} ms is below what "
            f"{peaks.name} can do for this much work",
        )


def _timing_checks(
    result: EvalResult,
    row: ShapeRow,
    end: dict[str, Any],
    begin: dict[str, Any] | None,
    beside_eager: float,
    judge_eager: float | None,
) -> None:
    """The parent's clock against the child's claims, and the judge's eager time against the
    eager time measured beside the candidate (where the call is not launch-bound)."""
    if begin is not None:
        wall_ms = (end["received_at"] - begin["received_at"]) * 1000.0
        calls = len(end["candidate_ms"]) + len(end["eager_ms"])
        claimed_ms = sum(end["candidate_ms"]) + sum(end["eager_ms"])
        if claimed_ms > wall_ms * 1.05 + 5.0:
            _flag(
                result,
                "timing_implausible",
                f"shape {row.shape}: claimed {claimed_ms:.1f} ms of GPU time in "
                f"{wall_ms:.1f} ms of wall clock",
            )
        elif wall_ms > 2.0 * claimed_ms + calls * OVERHEAD_PER_CALL_MS + 2000.0:
            _flag(
                result,
                "timing_implausible",
                f"shape {row.shape}: {wall_ms:.0f} ms of wall clock passed while the timer "
                f"reported {claimed_ms:.1f} ms",
            )
    if judge_eager and beside_eager and judge_eager >= EAGER_LAUNCH_BOUND_MS:
        ratio = max(judge_eager / beside_eager, beside_eager / judge_eager)
        if ratio > EAGER_DISAGREEMENT:
            _flag(
                result,
                "timing_tampered",
                f"shape {row.shape}: eager reference timed {beside_eager:.4f} ms beside the "
                f"solution but {judge_eager:.4f} ms in the judge's process",
            )


def _flag(result: EvalResult, code: str, message: str) -> None:
    if all(f.code != code for f in result.flags):
        result.flags.append(Flag(code, message))


def _performance_gate(result: EvalResult, peaks: GpuPeaks | None) -> None:
    speedup = result.summary.get("speedup_vs_eager")
    if speedup is None:
        result.gates["performance"] = Gate(False, "no timings were recorded")
        return
    detail = {"gpu": result.environment.get("gpu"), "peaks": peaks.name if peaks else None}
    result.gates["performance"] = Gate(speedup > 1.0, eager_comparison(speedup), detail)


def eager_comparison(speedup: float) -> str:
    """The performance gate's reason. The gate passes where fast_1 counts a run, strictly above
    1x; a speedup that prints as 1.00x is "not faster" below that, never "slower", and above it
    says by how little, so the words never contradict the two decimals shown. Under 0.1x it
    prints two significant digits (0.0066x): 0.01x is the board's floor for failures."""
    digits = f"{speedup:.2f}" if speedup >= 0.1 else f"{speedup:.2g}"
    shown = f"{digits}x eager (geometric mean)"
    if shown.startswith("1.00x") and speedup > 1.0:
        return f"{shown}: faster than PyTorch eager, by {(speedup - 1.0) * 100:.2g}%"
    if shown.startswith("1.00x"):
        return f"{shown}: not faster than PyTorch eager"
    return f"{shown}: {'faster' if speedup > 1.0 else 'slower'} than PyTorch eager"


def _timing_overhead(
    shapes: list[dict[str, Any]], ends: dict[int, Any], begins: dict[int, Any]
) -> dict[str, Any]:
    """Wall clock of the timed phases (this process's clock) against the GPU time they measured."""
    wall_ms = gpu_ms = 0.0
    reps, graphs = [], []
    for index, end in sorted(ends.items()):
        if index in begins and shapes[index]["seen"]:
            wall_ms += (end["received_at"] - begins[index]["received_at"]) * 1000.0
            gpu_ms += sum(end["candidate_ms"]) + sum(end["eager_ms"])
            reps.append(end.get("reps"))
            graphs.append(end.get("graphs"))
    return {"timing_wall_ms": wall_ms, "timed_gpu_ms": gpu_ms, "reps": reps, "graphs": graphs}
