"""Comparing candidate outputs with reference outputs, in the judge process."""

import copy
from dataclasses import dataclass
from typing import Any

import torch

# Per-dtype default tolerances (atol, rtol); a task's manifest may override them.
DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (1e-2, 1e-2),
    "float8_e4m3fn": (1e-1, 1e-1),
}
# The absolute tolerance follows the output's scale (its RMS). Below _SCALE_REFERENCE it shrinks
# in proportion, so a softmax over 256K entries (values near 4e-6) cannot pass with zeros under
# a fixed atol of 1e-4. Above 1 it grows in proportion: a reduction over inputs scaled by 100
# rounds 100 times coarser in absolute terms, and that is no error. In between it is the dtype's.
_SCALE_REFERENCE = 1e-2
_SCALE_FLOOR = 1e-8


@dataclass
class Comparison:
    correct: bool
    reason: str
    max_abs_err: float | None = None
    max_rel_err: float | None = None


def tolerance_for(dtype: str, override: dict[str, float]) -> tuple[float, float]:
    atol, rtol = DEFAULT_TOLERANCE.get(dtype, (0.0, 0.0))
    return override.get("atol", atol), override.get("rtol", rtol)


def compare_outputs(
    expected: list[Any], actual: list[Any], *, atol: float, rtol: float
) -> Comparison:
    if len(actual) != len(expected):
        return Comparison(False, f"returned {len(actual)} outputs, expected {len(expected)}")
    worst_abs = worst_rel = 0.0
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        if not isinstance(got, torch.Tensor):
            return Comparison(False, f"output {index} is not a tensor")
        if got.shape != want.shape:
            return Comparison(
                False, f"output {index} has shape {tuple(got.shape)}, expected {tuple(want.shape)}"
            )
        if got.dtype != want.dtype:
            return Comparison(False, f"output {index} has dtype {got.dtype}, expected {want.dtype}")
        if want.is_floating_point() or want.is_complex():
            verdict = _compare_floating(index, want, got.to(want.device), atol=atol, rtol=rtol)
            if not verdict.correct:
                return verdict
            worst_abs = max(worst_abs, verdict.max_abs_err or 0.0)
            worst_rel = max(worst_rel, verdict.max_rel_err or 0.0)
        elif not torch.equal(want, got.to(want.device)):
            return Comparison(False, f"output {index} differs from the reference (exact dtype)")
    return Comparison(True, "matches the reference", worst_abs, worst_rel)


def _compare_floating(
    index: int, want: torch.Tensor, got: torch.Tensor, *, atol: float, rtol: float
) -> Comparison:
    want64, got64 = want.to(torch.float64), got.to(torch.float64)
    finite = torch.isfinite(want64)
    if not torch.equal(torch.isfinite(got64), finite):
        return Comparison(False, f"output {index} has NaN or Inf where the reference has none")
    same_special = (got64 == want64) | (torch.isnan(got64) & torch.isnan(want64))
    if bool((~finite & ~same_special).any()):
        return Comparison(False, f"output {index} has NaN or Inf unlike the reference's")
    if want64.numel() == 0:
        return Comparison(True, "empty output", 0.0, 0.0)
    zeros = torch.zeros_like(want64)
    abs_err = (got64 - want64).abs().where(finite, zeros)
    scale = float(want64.where(finite, zeros).square().mean().sqrt())
    effective_atol = atol * _atol_scale(scale)
    rel_err = abs_err / want64.abs().clamp_min(1e-12)
    max_abs = float(abs_err.max())
    max_rel = float(rel_err.where(finite, zeros).max())
    bad = abs_err > effective_atol + rtol * want64.abs().where(finite, zeros)
    if bool(bad.any()):
        count = int(bad.sum())
        return Comparison(
            False,
            f"output {index}: {count} of {want64.numel()} elements outside "
            f"atol={effective_atol:.3g} rtol={rtol:g} (max abs err {max_abs:.3g})",
            max_abs,
            max_rel,
        )
    return Comparison(True, "matches the reference", max_abs, max_rel)


def _atol_scale(rms: float) -> float:
    if rms < _SCALE_REFERENCE:
        return max(rms, _SCALE_FLOOR) / _SCALE_REFERENCE
    return max(1.0, rms)


def relative_l2(a: torch.Tensor, b: torch.Tensor) -> float:
    a64, b64 = a.to(torch.float64), b.to(torch.float64)
    denominator = float(b64.norm())
    return float((a64 - b64).norm()) / denominator if denominator > 0 else float((a64).norm())


def precision_report(
    model: Any, inputs: list[Any], expected: list[Any], actual: list[Any]
) -> dict[str, float] | None:
    """Errors of the fp32 reference and of the candidate against a float64 run of the reference.

    A candidate many times further from float64 than the fp32 reference computed in a lower
    precision (bf16/fp16 arithmetic, tf32 where fp32 was asked for).
    """
    try:
        model64 = copy.deepcopy(model).double()
        inputs64 = [
            x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in inputs
        ]
        with torch.no_grad():
            truth = model64(*inputs64)
    except Exception:
        return None
    truth_list = list(truth) if isinstance(truth, (list, tuple)) else [truth]
    pairs = [
        (e, a, t)
        for e, a, t in zip(expected, actual, truth_list, strict=False)
        if isinstance(t, torch.Tensor) and t.is_floating_point()
    ]
    if not pairs:
        return None
    return {
        "reference_err": max(relative_l2(e, t) for e, _, t in pairs),
        "candidate_err": max(relative_l2(a, t) for _, a, t in pairs),
    }
