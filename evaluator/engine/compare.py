"""Comparing candidate outputs with reference outputs, in the grading process."""

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
            verdict = _compare_floating(index, want, got, atol=atol, rtol=rtol)
            if not verdict.correct:
                return verdict
            worst_abs = max(worst_abs, verdict.max_abs_err or 0.0)
            worst_rel = max(worst_rel, verdict.max_rel_err or 0.0)
        elif not torch.equal(want, got):
            return Comparison(False, f"output {index} differs from the reference (exact dtype)")
    return Comparison(True, "matches the reference", worst_abs, worst_rel)


def _compare_floating(
    index: int, want: torch.Tensor, got: torch.Tensor, *, atol: float, rtol: float
) -> Comparison:
    want64, got64 = want.to(torch.float64), got.to(torch.float64)
    finite = torch.isfinite(want64)
    if not torch.equal(torch.isfinite(got64), finite):
        return Comparison(False, f"output {index} has NaN or Inf where the reference has none")
    if want64.numel() == 0:
        return Comparison(True, "empty output", 0.0, 0.0)
    abs_err = (got64 - want64).abs().where(finite, torch.zeros_like(want64))
    rel_err = abs_err / want64.abs().clamp_min(1e-12)
    max_abs = float(abs_err.max())
    max_rel = float(rel_err.where(finite, torch.zeros_like(rel_err)).max())
    bad = abs_err > atol + rtol * want64.abs()
    if bool(bad.any()):
        count = int(bad.sum())
        return Comparison(
            False,
            f"output {index}: {count} of {want64.numel()} elements outside atol={atol:g} "
            f"rtol={rtol:g} (max abs err {max_abs:.3g})",
            max_abs,
            max_rel,
        )
    return Comparison(True, "matches the reference", max_abs, max_rel)
