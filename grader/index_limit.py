"""Where a kernel with 32-bit offsets stops: the unseen shapes past INDEX_LIMIT_ELEMENTS.

generalization.index_limited decides, from what the judge measured, that a failure only past
the limit is that limit and not overfit; this module finds those shapes before they run (on the
meta device), so that the candidate runs them last on a GPU, where a fault they cause cannot
take the visible shapes' timing down with it.

The grading process finds them (run_after_timing_of) and hands the candidate's job the answer,
so the candidate's process spends none of its job's clock on the meta device.
"""

import itertools
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from grader.generalization import INDEX_LIMIT_ELEMENTS, largest_elements
from grader.kbproblem import on_meta
from grader.modules import apply_shape, load_module

_MODULES = itertools.count()


def elements_on_meta(reference: Any, shape: Mapping[str, int]) -> int | None:
    """The largest tensor (parameters, inputs, outputs) of the reference at a shape, found on
    the meta device (no memory); None where the reference does not run there."""
    try:
        apply_shape(reference, dict(shape))
        with on_meta(), torch.no_grad():
            model = reference.Model(*reference.get_init_inputs())
            inputs = list(reference.get_inputs())
            output = model(*inputs)
    except Exception:
        return None
    outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    return largest_elements([*model.parameters(), *inputs, *outputs])


def run_after_timing(reference: Any, shapes: Sequence[Mapping[str, Any]], device: str) -> set[int]:
    """Unseen shapes (by index) that the candidate runs after timing the visible ones: those
    with a tensor of INDEX_LIMIT_ELEMENTS or more where every visible shape is below it. A
    kernel with 32-bit offsets may fault there, and a fault spoils the process's device for all
    that follows (the visible shapes' timing included); last, it spoils only those shapes,
    which index_limited then reports as the limit."""
    if device != "cuda" or all(s["seen"] for s in shapes):
        return set()
    visible = [elements_on_meta(reference, s["shape"]) for s in shapes if s["seen"]]
    if not visible or any(v is None or v >= INDEX_LIMIT_ELEMENTS for v in visible):
        return set()
    return {
        index
        for index, s in enumerate(shapes)
        if not s["seen"] and (elements_on_meta(reference, s["shape"]) or 0) >= INDEX_LIMIT_ELEMENTS
    }


def warm() -> None:
    """The process's first run on the meta device, on a tensor of two elements: it finds
    torch's compiler-off wrappers (compiler_off.py) and imports what the meta device's Python
    kernels import on first use (torch's symbolic shapes, and sympy with them: seconds on a GPU
    host), so that run_after_timing_of's first call pays neither."""
    with on_meta(), torch.no_grad():
        torch.randn(2).add(1)


def run_after_timing_of(path: Path, shapes: Sequence[Mapping[str, Any]], device: str) -> list[int]:
    """run_after_timing for the reference at `path`, loaded in a module of its own and run only
    on the meta device. A reference that does not load here runs no shape last: the candidate's
    own import of it reports the error."""
    if device != "cuda" or all(s["seen"] for s in shapes):
        return []  # nothing to run last: the reference is not loaded here at all
    name = f"arena_index_limit_{next(_MODULES)}"
    try:
        with on_meta():
            reference = load_module(path, name)
            return sorted(run_after_timing(reference, shapes, device))
    except Exception:
        return []
    finally:
        sys.modules.pop(name, None)
