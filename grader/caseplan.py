"""Which cases run on which shape, within a budget of bytes compared (docs/grading-pipeline.md).

Every visible shape runs every case (each input distribution, each stress case, each check).
Every unseen shape runs at least one case, the distributions alternating from one unseen shape to
the next so that each runs on unseen shapes; a shape's other distribution runs only while the
unseen shapes' cases together compare at most UNSEEN_BUDGET_UNITS times the largest visible
case's output bytes. The budget is the visible cases' bytes plus that.

Sizes come from the probe (feasibility.py: the reference's outputs on the meta device, per task
version and GPU). A size it does not know counts as the footprint it does know (parameters,
inputs and outputs: more than the outputs alone), so an old cache entry only drops more second
cases, never admits more bytes than the budget.
"""

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grader import feasibility
from grader.cases import cases_for
from grader.device_outputs import device_budget_bytes, judge_needs_bytes
from grader.feasibility import POOL_FACTOR
from grader.generalization import (
    UnseenShape,
    draw_unseen_shapes,
    grading_order,
    hidden_seed_material,
)
from grader.options import EvaluateOptions
from grader.taskspec import TaskSpec

# The unseen shapes' bytes compared, in units of the largest visible case's outputs: as much as
# one visible shape's six cases (five unseen shapes' first cases at the visible size, and one
# second case).
UNSEEN_BUDGET_UNITS = 6


@dataclass(frozen=True)
class Budget:
    """What the plan admits, in bytes: None where the probe did not run (no unseen shapes)."""

    unit_bytes: int | None
    budget_bytes: int | None
    planned_bytes: int | None
    second_cases_dropped: int
    # The outputs the device can hold between the candidate and the judge
    # (device_outputs.device_budget_bytes), where they pass on the device; None elsewhere.
    device_bytes: int | None = None

    def to_detail(self) -> dict[str, Any]:
        return {
            "bytes_budget": self.budget_bytes,
            "bytes_planned": self.planned_bytes,
            "unseen_second_cases_dropped": self.second_cases_dropped,
            "bytes_device_budget": self.device_bytes,
        }


def visible_output_bytes(entry: Mapping[str, Any] | None) -> int | None:
    """The largest visible case's output bytes, as the probe measured them (or its stand-in)."""
    if not entry:
        return None
    for key in ("visible_output_bytes", "visible_footprint_bytes", "visible_peak_bytes"):
        value = entry.get(key)
        if value is not None and int(value) > 0:
            return int(value)
    return None


def shape_output_bytes(entry: Mapping[str, Any] | None, shape: Mapping[str, int]) -> int | None:
    """One case's output bytes at a drawn shape, from the probe's verdict on it."""
    verdict = ((entry or {}).get("shapes") or {}).get(feasibility.shape_key(shape)) or {}
    for key in ("output_bytes", "footprint_bytes"):
        value = verdict.get(key)
        if value is not None:
            return int(value)
    return None


def largest_peak_bytes(
    entry: Mapping[str, Any] | None, shapes: Sequence[dict[str, Any]]
) -> int | None:
    """The reference's measured peak on the visible shape, scaled by output bytes to the plan's
    largest shape (None where the probe measured no peak)."""
    unit = visible_output_bytes(entry)
    peak = (entry or {}).get("visible_peak_bytes")
    if unit is None or not peak:
        return None
    largest = max((shape_output_bytes(entry, s["shape"]) or unit for s in shapes), default=unit)
    return int(int(peak) * max(1.0, largest / unit))


def apply_budget(
    shapes: Sequence[dict[str, Any]],
    entry: Mapping[str, Any] | None,
    device_bytes: int | None = None,
) -> tuple[list[dict[str, Any]], Budget]:
    """The planned shapes (evaluate.plan_shapes: every case of every shape) cut to the budget:
    each unseen shape keeps one case, its distribution alternating, and its second case while
    the unseen shapes' bytes stay within UNSEEN_BUDGET_UNITS of the largest visible case's
    outputs. Where outputs pass on the device, `device_bytes` (what it can hold) also bounds
    the second cases: past it a case's outputs cross host memory, seconds a case at the
    sizes where that happens, for a case that only repeats a shape with the other
    distribution. The first cases run whatever the device holds."""
    unit = visible_output_bytes(entry)
    if unit is None:
        return list(shapes), Budget(None, None, None, 0, device_bytes)
    planned = sum(len(s["cases"]) * unit for s in shapes if s["seen"])
    budget = planned + UNSEEN_BUDGET_UNITS * unit
    if device_bytes is not None:
        budget = min(budget, max(planned, device_bytes))
    unseen = [(i, s) for i, s in enumerate(shapes) if not s["seen"]]
    sizes = {i: shape_output_bytes(entry, s["shape"]) or unit for i, s in unseen}
    kept: dict[int, list[dict[str, Any]]] = {}
    for j, (i, shape) in enumerate(unseen):
        first = shape["cases"][j % len(shape["cases"])] if shape["cases"] else None
        kept[i] = [first] if first is not None else []
        planned += sizes[i] * len(kept[i])
    dropped = 0
    for i, shape in unseen:
        for case in shape["cases"]:
            if case in kept[i]:
                continue
            if planned + sizes[i] <= budget:
                kept[i].append(case)
                planned += sizes[i]
            else:
                dropped += 1
    out = []
    for i, shape in enumerate(shapes):
        if shape["seen"]:
            out.append(dict(shape))
        else:
            order = {id(c): n for n, c in enumerate(shape["cases"])}
            cases = sorted(kept[i], key=lambda c: order[id(c)])
            out.append({**shape, "cases": cases})
    return out, Budget(unit, budget, planned, dropped, device_bytes)


def two_rounds(
    entry: Mapping[str, Any] | None, shapes: Sequence[dict[str, Any]], budget: Budget
) -> bool:
    """Whether the plan's outputs pass the device budget (`budget.device_bytes`, where they
    pass on the device) while its visible shapes' and its unseen shapes' each fit it: then two
    candidate rounds (EvaluateOptions.candidate_rounds "auto") keep every case on the device,
    where one round sends the cases past the budget through host memory."""
    if budget.device_bytes is None or budget.planned_bytes is None or not entry:
        return False
    if budget.planned_bytes <= budget.device_bytes:
        return False
    unit = visible_output_bytes(entry) or 0
    seen = sum(len(s["cases"]) * unit for s in shapes if s["seen"])
    unseen = sum(
        len(s["cases"]) * (shape_output_bytes(entry, s["shape"]) or unit)
        for s in shapes
        if not s["seen"]
    )
    return unseen > 0 and max(seen, unseen) <= budget.device_bytes


def estimated_peak(entry: Mapping[str, Any], shape: Mapping[str, Any]) -> int:
    """A planned shape's estimated peak, as the probe's verdict admitted it (the visible peak,
    scaled by the shape's footprint); a visible shape's, or one with no verdict, the visible
    peak."""
    visible = int(entry.get("visible_peak_bytes") or 0)
    verdict = (entry.get("shapes") or {}).get(feasibility.shape_key(shape["shape"])) or {}
    if shape.get("seen") or verdict.get("footprint_bytes") is None:
        return visible
    return feasibility.estimated_peak_bytes(
        visible_peak_bytes=visible,
        footprint_bytes=int(verdict["footprint_bytes"]),
        visible_footprint_bytes=int(entry.get("visible_footprint_bytes") or 0),
    )


def beyond_share(
    entry: Mapping[str, Any] | None,
    shapes: Sequence[dict[str, Any]],
    budget: Budget,
    share_bytes: int,
    *,
    on_device: bool,
) -> str:
    """Why a plan does not fit `share_bytes` of the GPU's memory, where several evaluations share
    it (gpu_share.py, rule 3): each shape's estimated peak within the share's budget, by the
    rule that admitted it on the whole GPU (feasibility.py); the judge's room beside the outputs
    (device_outputs.py); and the outputs the plan holds on the device. Every reason that
    applies, joined by "; ", or '' where it fits."""
    entry = entry or {}
    peak = entry.get("visible_peak_bytes")
    reasons = []
    memory = feasibility.budget_bytes(share_bytes)
    shape_peak = max((estimated_peak(entry, s) for s in shapes), default=0)
    if shape_peak > memory:
        reasons.append(
            f"a shape's estimated peak ({shape_peak / 2**30:.1f} GiB) is over the share's "
            f"budget ({memory / 2**30:.1f} GiB)"
        )
    largest = largest_peak_bytes(entry, shapes)
    needs = judge_needs_bytes(peak, largest)
    if needs > share_bytes:
        reasons.append(f"the judge's room ({needs / 2**30:.1f} GiB) is more than the share")
    held = min(budget.planned_bytes or 0, budget.device_bytes or 0) if on_device else 0
    if held > device_budget_bytes(share_bytes, peak, largest):
        reasons.append(
            f"the plan's outputs on the device ({held / 2**30:.1f} GiB) exceed the share"
        )
    return "; ".join(reasons)


# ---- shapes: visible, then unseen shapes drawn for this evaluation alone ----

BASE_SEED = 0


Screen = Callable[[list[UnseenShape], int], tuple[list[UnseenShape], dict[str, Any]]]


def plan_shapes(
    spec: TaskSpec,
    *,
    device: str,
    solution_hash: str,
    options: EvaluateOptions,
    screen: Screen | None = None,
) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    """Visible shapes, then unseen shapes drawn for this evaluation alone.

    More shapes are drawn than graded; `screen` keeps those the reference can run within the
    memory budget (in draw order) and says why it dropped the others. Without one, the first
    drawn are graded.
    """
    stress = [c.name for c in spec.stress_cases]
    planned = [
        {
            "shape": dict(s),
            "seen": True,
            "kind": "visible",
            "cases": [
                c.to_dict()
                for c in cases_for(seen=True, base_seed=BASE_SEED + 100 * i, stress=stress)
            ],
        }
        for i, s in enumerate(spec.shapes_for(device))
    ]
    secret = options.hidden_seed or ""
    source = "secret" if secret else "random"
    seed = hidden_seed_material(secret or secrets.token_hex(16), spec.version_hash, solution_hash)
    needed = options.unseen_count
    pool = draw_unseen_shapes(spec, seed=seed, device=device, count=needed * POOL_FACTOR)
    screening: dict[str, Any] = {"unseen_drawn": len(pool)}
    if screen is not None and pool:
        kept, screening = screen(pool, needed)
    else:
        kept = pool[:needed]
    kept = grading_order(kept, spec, device)
    for j, unseen in enumerate(kept):
        planned.append(
            {
                "shape": dict(unseen.shape),
                "seen": False,
                "kind": unseen.kind,
                "cases": [
                    c.to_dict() for c in cases_for(seen=False, base_seed=seed % 100_000 + 100 * j)
                ],
            }
        )
    return planned, source, screening


def admit(
    pool: list[UnseenShape], needed: int, entry: dict[str, Any] | None
) -> tuple[list[UnseenShape], list[str], list[UnseenShape]]:
    """Walk the drawn shapes in order with the cached verdicts: (kept, why others were dropped,
    shapes with no verdict yet, from the first one on)."""
    kept: list[UnseenShape] = []
    rejected: list[str] = []
    verdicts = (entry or {}).get("shapes", {})
    for position, unseen in enumerate(pool):
        if len(kept) >= needed:
            break
        verdict = verdicts.get(feasibility.shape_key(unseen.shape))
        if verdict is None:
            rest = [u for u in pool[position:] if feasibility.shape_key(u.shape) not in verdicts]
            return kept, rejected, rest
        ok, why = feasibility.accepted(entry or {}, verdict)
        if ok:
            kept.append(unseen)
        else:
            rejected.append(f"{unseen.shape}: {why}")
    return kept, rejected, []
