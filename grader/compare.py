"""Comparing candidate outputs with reference outputs, in the judge process.

Outputs run to gigabytes (KernelBench's ReLU is 4096 x 393216 floats, 6.4 GB), so they are
compared in chunks: only one chunk at a time is upcast, and the verdict's fields (elements out of
tolerance, largest errors, NaN/Inf placement, the output's RMS for the scaled atol) are
accumulated on the device across chunks, so peak extra memory is a few chunks whatever the size.
"""

import copy
from collections.abc import Iterator
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
# Elements upcast at once. On a GPU, four float64 temporaries of a chunk are 512 MiB, small
# beside its memory, and kernels that long make launches cost little. On the host a chunk is
# smaller: freed blocks there stay resident longer, so the peak follows the chunk more closely.
CUDA_CHUNK_ELEMENTS = 1 << 24
HOST_CHUNK_ELEMENTS = 1 << 20
# The float64 check of precision (a float64 copy of the model, its inputs and outputs, next to the
# float32 ones) runs only where those copies stay below this; larger outputs go without it.
PRECISION_MAX_BYTES = 1 << 30


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
    expected: list[Any],
    actual: list[Any],
    *,
    atol: float,
    rtol: float,
    chunk_elements: int | None = None,
    scale_atol: bool = True,
) -> Comparison:
    """The first difference that matters, output by output; chunk_elements by default follows
    the device of the expected outputs. scale_atol=False takes atol as written (a stress case's
    tolerance is set for the scale of its outputs) instead of following the output's RMS."""
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
        chunk = chunk_elements or default_chunk_elements(want.device)
        if want.is_floating_point() or want.is_complex():
            verdict = _compare_floating(
                index, want, got, atol=atol, rtol=rtol, chunk_elements=chunk, scale_atol=scale_atol
            )
            if not verdict.correct:
                return verdict
            worst_abs = max(worst_abs, verdict.max_abs_err or 0.0)
            worst_rel = max(worst_rel, verdict.max_rel_err or 0.0)
        elif not _exactly_equal(want, got, chunk):
            return Comparison(False, f"output {index} differs from the reference (exact dtype)")
    return Comparison(True, "matches the reference", worst_abs, worst_rel)


def default_chunk_elements(device: torch.device) -> int:
    return CUDA_CHUNK_ELEMENTS if device.type == "cuda" else HOST_CHUNK_ELEMENTS


def chunk_pairs(
    want: torch.Tensor, got: torch.Tensor, chunk_elements: int
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Matching flat slices of two same-shape tensors, the candidate's moved to the reference's
    device one slice at a time (never as a whole)."""
    for w, g in zip(_chunks(want, chunk_elements), _chunks(got, chunk_elements), strict=True):
        yield w, g.to(want.device)


def _chunks(tensor: torch.Tensor, chunk_elements: int) -> Iterator[torch.Tensor]:
    """Flat slices of a tensor, chunk_elements at a time."""
    flat = tensor.reshape(-1)
    step = max(1, chunk_elements)
    for start in range(0, flat.numel(), step):
        yield flat[start : start + step]


# torch's wider unsigned types have few kernels (no comparison on every device): they are
# compared bit for bit as the signed type of their size.
_BITWISE = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


def _exactly_equal(want: torch.Tensor, got: torch.Tensor, chunk_elements: int) -> bool:
    signed = _BITWISE.get(want.dtype)
    if signed is not None:
        want, got = want.view(signed), got.view(signed)
    return all(torch.equal(w, g) for w, g in chunk_pairs(want, got, chunk_elements))


def _wide_dtype(tensor: torch.Tensor) -> torch.dtype:
    return torch.complex128 if tensor.is_complex() else torch.float64


def _compare_floating(
    index: int,
    want: torch.Tensor,
    got: torch.Tensor,
    *,
    atol: float,
    rtol: float,
    chunk_elements: int,
    scale_atol: bool = True,
) -> Comparison:
    if want.numel() == 0:
        return Comparison(True, "empty output", 0.0, 0.0)
    fused = _fused_module(want, got)
    if fused is not None:
        placement, rms = fused.placement_and_rms(want, got)
    else:
        placement, rms = _special_placement(want, got, chunk_elements), None
    if placement == "finite":
        return Comparison(False, f"output {index} has NaN or Inf where the reference has none")
    if placement == "special":
        return Comparison(False, f"output {index} has NaN or Inf unlike the reference's")
    if scale_atol:
        rms = _finite_rms(want, chunk_elements) if rms is None else rms
        effective_atol = atol * _atol_scale(rms)
    else:
        effective_atol = atol
    if fused is not None:
        count, max_abs, max_rel = fused.errors(want, got, effective_atol, rtol)
    else:
        count, max_abs, max_rel = _errors(want, got, effective_atol, rtol, chunk_elements)
    if count:
        return Comparison(
            False,
            f"output {index}: {count} of {want.numel()} elements outside "
            f"atol={effective_atol:.3g} rtol={rtol:g} (max abs err {max_abs:.3g})",
            max_abs,
            max_rel,
        )
    return Comparison(True, "matches the reference", max_abs, max_rel)


def _fused_module(want: torch.Tensor, got: torch.Tensor) -> Any:
    """grader/fused_compare.py where it applies (CUDA outputs), else None. Imported here, not
    at the top: the grading process reads tolerances from this module and needs no Triton."""
    if want.device.type != "cuda":
        return None
    from grader import fused_compare

    return fused_compare if fused_compare.applies(want, got) else None


def _special_placement(want: torch.Tensor, got: torch.Tensor, chunk_elements: int) -> str | None:
    """ "finite" where finiteness differs anywhere, "special" where a NaN/Inf differs, else None.

    Counted on the device and read once at the end, so chunks run without a sync each."""
    finite_mismatch = torch.zeros((), dtype=torch.int64, device=want.device)
    special_mismatch = torch.zeros((), dtype=torch.int64, device=want.device)
    for w, g in chunk_pairs(want, got, chunk_elements):
        finite = torch.isfinite(w)
        finite_mismatch += (torch.isfinite(g) != finite).sum()
        same = (g == w) | (torch.isnan(g) & torch.isnan(w))
        special_mismatch += (~finite & ~same).sum()
    if int(finite_mismatch):
        return "finite"
    return "special" if int(special_mismatch) else None


def _finite_rms(want: torch.Tensor, chunk_elements: int) -> float:
    """RMS of the reference over all elements, non-finite ones counted as zero."""
    total = torch.zeros((), dtype=torch.float64, device=want.device)
    for chunk in _chunks(want, chunk_elements):
        w = _abs(chunk.to(_wide_dtype(want), copy=True))
        total += w.masked_fill_(~torch.isfinite(w), 0.0).square_().sum()
    return float((total / want.numel()).sqrt())


def _errors(
    want: torch.Tensor, got: torch.Tensor, atol: float, rtol: float, chunk_elements: int
) -> tuple[int, float, float]:
    """(elements outside atol + rtol*|want|, max abs err, max rel err) over finite elements."""
    device = want.device
    count = torch.zeros((), dtype=torch.int64, device=device)
    max_abs = torch.zeros((), dtype=torch.float64, device=device)
    max_rel = torch.zeros((), dtype=torch.float64, device=device)
    for w_chunk, g_chunk in chunk_pairs(want, got, chunk_elements):
        # Copies even where the dtype is already wide: the in-place steps below must not touch
        # the outputs themselves.
        w = w_chunk.to(_wide_dtype(want), copy=True)
        not_finite = ~torch.isfinite(w)
        err = _abs(g_chunk.to(w.dtype, copy=True).sub_(w)).masked_fill_(not_finite, 0.0)
        magnitude = _abs(w).masked_fill_(not_finite, 0.0)
        del w
        max_abs = torch.maximum(max_abs, err.max())
        max_rel = torch.maximum(max_rel, (err / magnitude.clamp_min(1e-12)).max())
        count += (err > magnitude.mul_(rtol).add_(atol)).sum()
    return int(count), float(max_abs), float(max_rel)


def _abs(x: torch.Tensor) -> torch.Tensor:
    # In place where the result keeps the dtype; a complex magnitude is a new real tensor.
    return x.abs() if x.is_complex() else x.abs_()


def _atol_scale(rms: float) -> float:
    if rms < _SCALE_REFERENCE:
        return max(rms, _SCALE_FLOOR) / _SCALE_REFERENCE
    return max(1.0, rms)


def relative_l2(a: torch.Tensor, b: torch.Tensor) -> float:
    # The candidate's outputs arrive on the host (outputs.py); the reference's are on the device.
    a64, b64 = a.to(device=b.device, dtype=torch.float64), b.to(torch.float64)
    denominator = float(b64.norm())
    return float((a64 - b64).norm()) / denominator if denominator > 0 else float((a64).norm())


def precision_cost_bytes(model: Any, inputs: list[Any], expected: list[Any]) -> int:
    """Bytes of the float64 copies precision_report makes: model, inputs and outputs at 8 bytes
    an element, plus the float64 forms of both outputs that relative_l2 takes."""
    elements = int(sum(p.numel() for p in model.parameters()))
    elements += int(sum(b.numel() for b in model.buffers()))
    elements += sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
    elements += 3 * sum(t.numel() for t in expected if isinstance(t, torch.Tensor))
    return 8 * elements


@dataclass
class PrecisionTruth:
    """A float64 run of the reference on one case's inputs: each floating-point output's float64
    value (None for the others) and the fp32 reference's own distance from them."""

    truth: list[Any]
    reference_err: float

    def report(self, actual: list[Any]) -> dict[str, float] | None:
        """The candidate's distance from the float64 run, beside the reference's."""
        pairs = [(a, t) for a, t in zip(actual, self.truth, strict=False) if t is not None]
        if not pairs:
            return None
        return {
            "reference_err": self.reference_err,
            "candidate_err": max(relative_l2(a, t) for a, t in pairs),
        }


def precision_truth(model: Any, inputs: list[Any], expected: list[Any]) -> PrecisionTruth | None:
    """The float64 run of the reference that precision_report compares against; None where its
    copies would pass PRECISION_MAX_BYTES or the model does not run in float64."""
    if precision_cost_bytes(model, inputs, expected) > PRECISION_MAX_BYTES:
        return None
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
    kept = [
        t if isinstance(t, torch.Tensor) and t.is_floating_point() else None
        for t in truth_list[: len(expected)]
    ]
    pairs = [(e, t) for e, t in zip(expected, kept, strict=False) if t is not None]
    if not pairs:
        return None
    return PrecisionTruth(kept, max(relative_l2(e, t) for e, t in pairs))


def precision_report(
    model: Any, inputs: list[Any], expected: list[Any], actual: list[Any]
) -> dict[str, float] | None:
    """Errors of the fp32 reference and of the candidate against a float64 run of the reference.

    A candidate many times further from float64 than the fp32 reference computed in a lower
    precision (bf16/fp16 arithmetic, tf32 where fp32 was asked for). Skipped (None) where the
    float64 copies would pass PRECISION_MAX_BYTES: a full-size float64 model beside the judge's
    own tensors is what ran the judge out of memory on large problems.
    """
    truth = precision_truth(model, inputs, expected)
    return truth.report(actual) if truth is not None else None
