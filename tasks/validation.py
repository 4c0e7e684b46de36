"""Checks that a catalogue task is sound, runnable without Django:

    python -m tasks.validation tasks/catalog/<suite>/<task> [...]

On CPU, for each CPU shape (or the smallest visible shape when it is small enough): the
reference runs and gives finite outputs; the `bytes` formula equals an independent count (every
input, parameter and output tensor moved once); the `flops` formula equals PyTorch's
FlopCounterMode wherever that counter sees the work (matmuls, convolutions, attention); a
deliberately wrong mutant of the reference output fails the comparison; visible shapes fit in
GPU memory; unseen shapes can be drawn. A starter solution, if the task ships one in Triton,
is graded and must pass.
"""

import math
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils.flop_counter import FlopCounterMode

from evaluator.engine.cases import Case, case_inputs
from evaluator.engine.compare import compare_outputs, tolerance_for
from evaluator.engine.formulas import formula_evaluate
from evaluator.engine.generalization import draw_unseen_shapes
from evaluator.engine.modules import apply_shape, load_module
from evaluator.engine.taskspec import TaskSpec, load_task

FORMULA_SLACK = 0.01
CPU_SHAPE_MAX_BYTES = 64 * 1024**2
GPU_MEMORY_BUDGET_BYTES = 40 * 1024**3


@dataclass
class Report:
    slug: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def validate_task(folder: Path, *, grade_starter: bool = True) -> Report:
    spec = load_task(folder)
    report = Report(spec.slug)
    for shape in spec.visible_shapes:
        if formula_evaluate(spec.bytes_moved, shape) * 3 > GPU_MEMORY_BUDGET_BYTES:
            report.problems.append(f"visible shape {shape} needs more than 40 GiB with outputs")
    shapes = _cpu_check_shapes(spec, report)
    reference = load_module(spec.reference_path, f"validate_{spec.slug.replace('-', '_')}")
    for shape in shapes:
        _check_shape(spec, reference, shape, report)
    if spec.generalization and not draw_unseen_shapes(spec, seed=1, device="cuda"):
        report.problems.append("the generalization rules leave no unseen shape to draw")
    if grade_starter:
        _check_starter(spec, report)
    return report


def _cpu_check_shapes(spec: TaskSpec, report: Report) -> list[dict[str, int]]:
    if spec.cpu_shapes:
        return [dict(s) for s in spec.cpu_shapes]
    smallest = min(spec.visible_shapes, key=lambda s: formula_evaluate(spec.bytes_moved, s))
    if formula_evaluate(spec.bytes_moved, smallest) > CPU_SHAPE_MAX_BYTES:
        report.notes.append("no cpu_shapes and the visible shapes are too large to run on CPU")
        return []
    return [dict(smallest)]


def _check_shape(spec: TaskSpec, reference: Any, shape: dict[str, int], report: Report) -> None:
    apply_shape(reference, shape)
    torch.manual_seed(42)
    model = reference.Model(*reference.get_init_inputs()).eval()
    inputs = case_inputs(reference, shape, Case(0, "problem"), "cpu")
    counter = FlopCounterMode(display=False)
    try:
        with torch.no_grad(), counter:
            output = model(*inputs)
    except Exception as exc:
        report.problems.append(f"shape {shape}: the reference fails: {exc!r}")
        return
    outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    if not all(torch.isfinite(o).all() for o in outputs if o.is_floating_point()):
        report.problems.append(f"shape {shape}: the reference output is not finite")
    _check_formulas(spec, shape, model, inputs, outputs, counter.get_total_flops(), report)
    _check_mutant(spec, shape, outputs, report)


def _tensor_bytes(values: Any) -> int:
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def _check_formulas(
    spec: TaskSpec,
    shape: dict[str, int],
    model: Any,
    inputs: list[Any],
    outputs: list[Any],
    counted_flops: int,
    report: Report,
) -> None:
    weights = [*model.parameters(), *model.buffers()]
    counted_bytes = _tensor_bytes(inputs) + _tensor_bytes(weights) + _tensor_bytes(outputs)
    stated_bytes = formula_evaluate(spec.bytes_moved, shape)
    if _partial_reads(spec):
        # A gather reads only the rows it needs: fewer bytes than every tensor, never more.
        if stated_bytes > counted_bytes * (1 + FORMULA_SLACK):
            report.problems.append(
                f"shape {shape}: bytes formula gives {stated_bytes:.0f}, more than all the "
                f"tensors together ({counted_bytes})"
            )
    elif not math.isclose(stated_bytes, counted_bytes, rel_tol=FORMULA_SLACK):
        report.problems.append(
            f"shape {shape}: bytes formula gives {stated_bytes:.0f}, the tensors moved once "
            f"come to {counted_bytes}"
        )
    stated_flops = formula_evaluate(spec.flops, shape)
    if counted_flops and not math.isclose(stated_flops, counted_flops, rel_tol=FORMULA_SLACK):
        report.problems.append(
            f"shape {shape}: flops formula gives {stated_flops:.0f}, FlopCounterMode counts "
            f"{counted_flops}"
        )
    if stated_flops < 0 or stated_bytes <= 0:
        report.problems.append(f"shape {shape}: formulas must be positive")


def _partial_reads(spec: TaskSpec) -> bool:
    with (spec.folder / "task.toml").open("rb") as fh:
        return bool(tomllib.load(fh).get("partial_reads", False))


def _check_mutant(
    spec: TaskSpec, shape: dict[str, int], outputs: list[Any], report: Report
) -> None:
    """A 2% error must not pass the task's tolerance."""
    atol, rtol = tolerance_for(spec.dtype, spec.tolerance)
    mutant = [
        o.float().mul(1.02).add(0.01).to(o.dtype) if o.is_floating_point() else o + 1
        for o in outputs
    ]
    if compare_outputs(outputs, mutant, atol=atol, rtol=rtol).correct:
        report.problems.append(f"shape {shape}: a 2% error passes the tolerance")


def _check_starter(spec: TaskSpec, report: Report) -> None:
    from evaluator.engine import EvaluateOptions, evaluate

    starter = spec.folder / "starter" / "solution.py"
    if not starter.exists():
        return
    if "triton" not in starter.read_text():
        report.notes.append("CUDA starter: graded on a GPU only")
        return
    result = evaluate(spec, starter, "cpu", EvaluateOptions(timeout_s=600, unseen_count=2))
    if result.status != "passed" or result.flags:
        reasons = {k: g.reason for k, g in result.gates.items() if g.passed is False}
        report.problems.append(
            f"the starter does not pass: {result.status} {reasons} {[f.code for f in result.flags]}"
        )


def main(argv: list[str]) -> int:
    failed = 0
    for folder in argv:
        report = validate_task(Path(folder))
        failed += not report.ok
        print(f"{'ok  ' if report.ok else 'FAIL'} {report.slug}")
        for line in report.problems:
            print(f"     problem: {line}")
        for line in report.notes:
            print(f"     note: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
