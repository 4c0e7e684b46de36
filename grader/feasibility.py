"""Which unseen shapes the reference itself can run within the device's memory.

A shape drawn from a task's rules may be one the reference cannot run (a derived constant breaks,
a dimension no longer divides) or one too large for the device: failing there would be the
grader's failure, not the solution's. So before the candidate runs, the "probe" child measures
the reference's peak device memory on the visible shape, runs the reference on the meta device
(no memory, shapes only) for each drawn shape, and keeps the first ones under the budget:

    estimated peak(shape) = visible peak * footprint(shape) / footprint(visible)
    budget                = (device memory - RESERVE_BYTES) / SAFETY_FACTOR

where a footprint is the bytes of the parameters, inputs and outputs at that shape. The
candidate's and the judge's processes run one after the other, but each holds more than the
reference alone: the candidate keeps a pristine copy of the inputs beside its own output and the
reference's model for timing; the judge holds the reference's output beside the candidate's. Three
copies of the reference's peak is what each needs at most; RESERVE_BYTES covers the CUDA context,
the allocator's fragmentation and the comparison's chunks.
"""

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

RESERVE_BYTES = 4 * 1024**3
SAFETY_FACTOR = 3.0
# Shapes drawn per shape needed: enough that a task whose largest draws do not fit still gets
# its full count from the others.
POOL_FACTOR = 4


def budget_bytes(total_bytes: int, *, reserve_bytes: int = RESERVE_BYTES) -> int:
    return max(0, int((total_bytes - reserve_bytes) / SAFETY_FACTOR))


def estimated_peak_bytes(
    *, visible_peak_bytes: int, footprint_bytes: int, visible_footprint_bytes: int
) -> int:
    if visible_footprint_bytes <= 0:
        return visible_peak_bytes
    return math.ceil(visible_peak_bytes * footprint_bytes / visible_footprint_bytes)


def product_footprint_bytes(
    shape: Mapping[str, int], visible: Mapping[str, int], visible_footprint_bytes: int
) -> int:
    """The fallback where the meta device cannot run the reference: the footprint scaled by the
    product of every dimension's ratio, an upper bound for tensors whose sizes are products."""
    ratio = 1.0
    for name, value in shape.items():
        base = visible.get(name) or 1
        ratio *= max(value, 1) / max(base, 1)
    return math.ceil(visible_footprint_bytes * max(ratio, 0.0))


def shape_key(shape: Mapping[str, int]) -> str:
    return json.dumps(dict(sorted(shape.items())))


# ---- the cache of probe results, per (task version, device) ------------------------------------


def cache_key(
    *, task_version: str, device_name: str, memory_cap_bytes: int | None, memory_share: float = 1.0
) -> str:
    material = json.dumps([task_version, device_name, memory_cap_bytes, memory_share])
    return hashlib.sha256(material.encode()).hexdigest()


VISIBLE_KEYS = (
    "visible_index",
    "visible_peak_bytes",
    "visible_footprint_bytes",
    "visible_output_bytes",
    "meta_supported",
    "total_bytes",
    "budget_bytes",
)


def merge_probe(cached: Mapping[str, Any] | None, report: Mapping[str, Any]) -> dict[str, Any]:
    """A cache entry updated with a probe child's report (its per-shape verdicts added)."""
    entry = {key: report.get(key, (cached or {}).get(key)) for key in VISIBLE_KEYS}
    shapes = dict((cached or {}).get("shapes", {}))
    for verdict in report.get("shapes", []):
        shapes[shape_key(verdict["shape"])] = {
            k: verdict.get(k) for k in ("footprint_bytes", "output_bytes", "estimate", "rejected")
        }
    entry["shapes"] = shapes
    return entry


def accepted(entry: Mapping[str, Any], verdict: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether a shape's cached verdict admits it, and why not when it does not."""
    if verdict.get("rejected"):
        return False, str(verdict["rejected"])
    peak = estimated_peak_bytes(
        visible_peak_bytes=int(entry["visible_peak_bytes"]),
        footprint_bytes=int(verdict["footprint_bytes"]),
        visible_footprint_bytes=int(entry["visible_footprint_bytes"]),
    )
    budget = int(entry["budget_bytes"])
    if peak > budget:
        gib = 2**30
        return False, f"estimated peak {peak / gib:.2f} GiB over the {budget / gib:.2f} GiB budget"
    return True, ""
