"""role "probe" (no solution): the reference's measured peak memory and output bytes on the visible
shape, then each drawn unseen shape's footprint from a run on the meta device, until enough fit
the budget (feasibility.py)."""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from grader import channel, feasibility
from grader.cases import Case, case_inputs, tensor_bytes
from grader.kbproblem import on_meta
from grader.modules import apply_shape, load_module
from grader.roles.common import (
    INIT_SEED,
    as_list,
    grader_error,
    memory_share,
    pause_point,
    release_device_memory,
)
from grader.steps import Steps


def run_probe(job: dict[str, Any]) -> None:
    """The reference's measured peak on the visible shapes, then each drawn shape's footprint
    from a run on the meta device, until enough fit the budget (see feasibility.py)."""

    steps = Steps(job)
    steps.start()
    pause = pause_point(job)
    try:
        pause()
        steps.mark("pause")
        reference = load_module(Path(job["reference_path"]), "reference")
        steps.mark("reference_import")
        entry = dict(job.get("cached") or {})
        if entry.get("visible_peak_bytes") is None:
            entry.update(_probe_visible(job, reference, pause, steps))
    finally:
        pause.close()
    verdicts, accepted = [], 0
    for shape in job["candidates"]:
        if accepted >= job["needed"]:
            break
        verdict = _probe_shape(reference, shape, job["visible"][entry["visible_index"]], entry)
        verdicts.append(verdict)
        accepted += feasibility.accepted(entry, verdict)[0]
    steps.mark("unseen_meta")
    steps.send(stage="probe")
    channel.send("probe", **{k: v for k, v in entry.items() if k != "shapes"}, shapes=verdicts)


def _probe_visible(
    job: dict[str, Any], reference: Any, pause: Callable[[], None], steps: Steps
) -> dict[str, Any]:
    """The visible shape with the largest measured peak, its footprint, and the budget. Its
    only GPU work: between shapes it answers the GPU's pause requests (gpu_share.py)."""

    device = job["device"]
    if steps.on and device == "cuda":
        # Traced, CUDA's context is made here, a step of its own, rather than inside the
        # first shape's measured peak (the synchronization makes it).
        torch.cuda.synchronize()
        steps.mark("device_ready")
    best: dict[str, Any] = {"visible_peak_bytes": -1}
    for index, shape in enumerate(job["visible"]):
        pause()
        steps.mark("pause")
        footprint, output_bytes, error = _meta_footprint(reference, shape)
        steps.mark("visible_meta")
        try:
            peak = _measured_peak_bytes(reference, shape, device, footprint)
        except Exception as exc:
            raise grader_error(exc, -1, shape) from None
        steps.mark("visible_peak")
        if peak > best["visible_peak_bytes"]:
            best = {
                "visible_index": index,
                "visible_peak_bytes": peak,
                "visible_footprint_bytes": footprint,
                "visible_output_bytes": output_bytes,
                "meta_supported": error is None,
            }
        release_device_memory(device)
        steps.mark("release")
    total = _device_total_bytes(device, job.get("memory_cap_bytes"), memory_share(job))
    return {**best, "total_bytes": total, "budget_bytes": feasibility.budget_bytes(total)}


def _measured_peak_bytes(
    reference: Any, shape: dict[str, int], device: str, footprint: int | None
) -> int:
    """On cuda, the allocator's peak while building the model and running forward once; on the
    host, where no allocator keeps a peak, the footprint (parameters, inputs and outputs)."""

    if device != "cuda" and footprint is not None:
        return footprint
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated() if device == "cuda" else 0
    apply_shape(reference, shape)
    torch.manual_seed(INIT_SEED)
    model = reference.Model(*reference.get_init_inputs()).to(device).eval()
    inputs = case_inputs(reference, shape, Case(0, "problem"), device)
    with torch.no_grad():
        outputs = as_list(model(*inputs))
    if device == "cuda":
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated()) - base
    return _footprint_bytes(model, inputs, outputs)


def _probe_shape(
    reference: Any, shape: dict[str, int], visible: dict[str, int], entry: dict[str, Any]
) -> dict[str, Any]:

    footprint, output_bytes, error = None, None, None
    if entry.get("meta_supported", True):
        footprint, output_bytes, error = _meta_footprint(reference, shape)
    if error is not None and not _meta_unsupported(error):
        reason = f"the reference cannot run it: {type(error).__name__}: {str(error)[:300]}"
        return {"shape": shape, "footprint_bytes": None, "estimate": "meta", "rejected": reason}
    if footprint is None:
        scaled = feasibility.product_footprint_bytes(
            shape, visible, int(entry["visible_footprint_bytes"] or entry["visible_peak_bytes"])
        )
        return {"shape": shape, "footprint_bytes": scaled, "estimate": "bytes", "rejected": None}
    return {
        "shape": shape,
        "footprint_bytes": footprint,
        "output_bytes": output_bytes,
        "estimate": "meta",
        "rejected": None,
    }


def _meta_footprint(
    reference: Any, shape: dict[str, int]
) -> tuple[int | None, int | None, Exception | None]:
    """Bytes of parameters, inputs and outputs of the reference at a shape, and of its outputs
    alone (what one case compares), found on the meta device (shapes and dtypes only, no
    memory); the exception where it does not run there."""

    try:
        apply_shape(reference, shape)
        with on_meta(), torch.no_grad():
            model = reference.Model(*reference.get_init_inputs())
            inputs = list(reference.get_inputs())
            outputs = as_list(model(*inputs))
    except Exception as exc:
        return None, None, exc
    return _footprint_bytes(model, inputs, outputs), tensor_bytes(outputs), None


def _meta_unsupported(error: Exception) -> bool:
    # An operator without a meta kernel, or a value read back (.item(), nonzero): the meta device
    # cannot tell, so the byte estimate decides. Any other error is the reference's own.
    return isinstance(error, NotImplementedError) or "meta" in str(error).lower()


def _footprint_bytes(model: Any, inputs: list[Any], outputs: list[Any]) -> int:
    """Bytes of the reference's parameters, buffers, inputs and outputs, as the importer
    counts a problem's bytes."""

    return tensor_bytes([*model.parameters(), *model.buffers(), *inputs, *outputs])


def _device_total_bytes(device: str, memory_cap_bytes: int | None, share: float) -> int:
    if device == "cuda":
        return int(torch.cuda.get_device_properties(0).total_memory * share)
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(physical, memory_cap_bytes) if memory_cap_bytes else physical
