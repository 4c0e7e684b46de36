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

from grader import EvaluateOptions, evaluate
from grader.cases import Case, case_inputs, tensor_bytes, timing_input_sets
from grader.compare import compare_outputs, tolerance_for
from grader.formulas import formula_evaluate
from grader.generalization import draw_unseen_shapes
from grader.modules import apply_shape, load_module
from grader.taskspec import TaskSpec, catalog_roots, iter_task_folders, load_task
from grader.timing import percentile, time_interleaved

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
    counted_bytes = tensor_bytes(inputs) + tensor_bytes(weights) + tensor_bytes(outputs)
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
    starter = spec.folder / "starter" / "solution.py"
    if not starter.exists():
        return
    source = starter.read_text()
    if "load_inline" in source or "cpp_extension" in source or "triton" not in source:
        report.notes.append("CUDA starter: graded on a GPU only")
        return
    result = evaluate(spec, starter, "cpu", EvaluateOptions(timeout_s=600, unseen_count=2))
    if result.status != "passed" or result.flags:
        reasons = {k: g.reason for k, g in result.gates.items() if g.passed is False}
        report.problems.append(
            f"the starter does not pass: {result.status} {reasons} {[f.code for f in result.flags]}"
        )


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--gpu-baselines":
        with_compile = "--with-compile" in argv
        folders = [Path(a) for a in argv[2:] if a != "--with-compile"]
        return _write_gpu_baselines(Path(argv[1]), folders, with_compile=with_compile)
    if argv and argv[0] == "--warm-compile":
        return _warm_compile_main(argv[1:])
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


EAGER_WINDOW_MS = (0.1, 20.0)


def gpu_baselines(folders: list[Path], *, with_compile: bool = False) -> dict[str, Any]:
    """On a GPU: eager, SOTA (and torch.compile) times per visible shape, the eager time window,
    and SOTA's correctness against the reference. Written to tasks/baselines/<gpu>.json."""
    result: dict[str, Any] = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "tasks": {},
    }
    for folder in folders:
        spec = load_task(folder)
        reference = load_module(spec.reference_path, f"gpu_{spec.slug.replace('-', '_')}")
        sota = _load_sota(folder)
        rows = []
        for shape in spec.visible_shapes:
            try:
                rows.append(
                    _shape_baselines(
                        spec,
                        reference,
                        sota,
                        dict(shape),
                        with_compile,
                        time_interleaved,
                        percentile,
                    )
                )
            except Exception as exc:
                rows.append({"shape": dict(shape), "error": repr(exc)[:500]})
            torch.cuda.empty_cache()
        result["tasks"][spec.slug] = {"version": spec.version_hash, "shapes": rows}
    return result


def _load_sota(folder: Path) -> Any:
    path = folder / "sota.py"
    if not path.is_file():
        return None
    module = load_module(path, f"sota_{folder.name.replace('-', '_')}")
    return module if module.is_available() else None


def _shape_baselines(
    spec: TaskSpec,
    reference: Any,
    sota: Any,
    shape: dict[str, int],
    with_compile: bool,
    time_interleaved: Any,
    percentile: Any,
) -> dict[str, Any]:
    apply_shape(reference, shape)
    torch.manual_seed(42)
    model = reference.Model(*reference.get_init_inputs()).cuda().eval()
    sets = timing_input_sets(reference, shape, "cuda")
    calls: dict[str, Any] = {"eager": lambda k: model(*sets[k])}
    row: dict[str, Any] = {"shape": shape}
    if sota is not None:
        calls["sota"] = lambda k: sota.sota_forward(model, *sets[k])
        with torch.no_grad():
            expected, got = model(*sets[0]), sota.sota_forward(model, *sets[0])
        atol, rtol = tolerance_for(spec.dtype, spec.tolerance)
        as_list = lambda v: list(v) if isinstance(v, (list, tuple)) else [v]  # noqa: E731
        verdict = compare_outputs(as_list(expected), as_list(got), atol=atol, rtol=rtol)
        row["sota_correct"], row["sota_reason"] = verdict.correct, verdict.reason
    if with_compile:
        # Static shapes: each shape gets the kernels torch.compile would specialise for it,
        # the strongest compile baseline (and the one `warm_compile_cache` already built).
        compiled = torch.compile(model, dynamic=False)
        calls["compile"] = lambda k: compiled(*sets[k])
    with torch.no_grad():
        timings = time_interleaved(calls, input_sets=len(sets), device="cuda")
    for name, times in timings.ms.items():
        row[f"{name}_ms"] = percentile(times, 0.5)
    low, high = EAGER_WINDOW_MS
    row["eager_in_window"] = low <= row["eager_ms"] <= high
    return row


def _write_gpu_baselines(out: Path, folders: list[Path], *, with_compile: bool) -> int:
    import json

    report = gpu_baselines(
        folders or iter_task_folders(catalog_roots()[0]), with_compile=with_compile
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, sort_keys=True))
    bad = 0
    for slug, task in sorted(report["tasks"].items()):
        for row in task["shapes"]:
            problem = row.get("error") or (
                "eager outside 0.1-20 ms"
                if not row.get("eager_in_window")
                else "SOTA incorrect"
                if row.get("sota_correct") is False
                else ""
            )
            bad += bool(problem)
            eager = f"{row['eager_ms']:.3f}" if "eager_ms" in row else "-"
            sota = f"{row['sota_ms']:.3f}" if "sota_ms" in row else "-"
            print(
                f"{'ok  ' if not problem else 'FAIL'} {slug:<36} {row['shape']} eager {eager} "
                f"sota {sota} {problem}"
            )
    return 1 if bad else 0


def warm_compile_cache(folder: Path) -> str:
    """Compile and run every visible shape of one task once, so that the inductor and Triton
    caches on disk hold its kernels. Several of these run in parallel before the timed pass,
    which then loads compiled kernels instead of spending the compile time serially."""
    spec = load_task(folder)
    reference = load_module(spec.reference_path, f"warm_{spec.slug.replace('-', '_')}")
    failures = []
    for shape in spec.visible_shapes:
        try:
            apply_shape(reference, dict(shape))
            torch.manual_seed(42)
            model = reference.Model(*reference.get_init_inputs()).cuda().eval()
            inputs = timing_input_sets(reference, dict(shape), "cuda")[0]
            with torch.no_grad():
                torch.compile(model, dynamic=False)(*inputs)
            torch.cuda.synchronize()
        except Exception as exc:
            failures.append(f"{dict(shape)}: {exc!r}"[:300])
        torch.cuda.empty_cache()
    return f"{spec.slug}: " + ("; ".join(failures) if failures else "compiled")


def _warm_compile_main(argv: list[str]) -> int:
    """`--warm-compile WORKERS [FOLDER ...]`: warm the compile caches in parallel processes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    workers = int(argv[0])
    folders = [Path(a) for a in argv[1:]] or list(iter_task_folders(catalog_roots()[0]))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        for line in pool.map(warm_compile_cache, folders):
            print(line, flush=True)
    return 0
