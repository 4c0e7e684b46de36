"""role "judge" (never runs the solution): draws the same inputs, computes the reference outputs,
compares the candidate's, and times the eager reference and torch.compile where not cached."""

import copy
import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from grader import channel
from grader.baselines import needs_timing
from grader.cases import (
    StressError,
    case_inputs,
    scaled_state,
    state_problems,
    stress_inputs,
    timing_input_sets,
)
from grader.compare import (
    PRECISION_MAX_BYTES,
    compare_outputs,
    precision_cost_bytes,
    precision_truth,
)
from grader.decoy import judge_silenced
from grader.device_outputs import judge_inbox
from grader.generalization import largest_elements
from grader.modules import apply_shape, load_module
from grader.outputs import OutputFileError, read_outputs
from grader.reference_cache import Expected, ReferenceCache, case_key
from grader.roles.common import (
    INIT_SEED,
    aliases,
    all_finite,
    as_list,
    cases_of,
    clone,
    describe,
    device_output_budget,
    grader_error,
    pause_point,
    release_device_memory,
    stress_of,
    sync,
    warm_device,
)
from grader.steps import Steps
from grader.timing import time_interleaved

# The warm judge's cache of expected outputs (reference_cache.py): made by the first job that
# asks for one ("warm": a long-lived judge, child.warm_main), kept for the next. A one-job judge
# has none.
CACHE: ReferenceCache | None = None


def run_judge(job: dict[str, Any]) -> None:
    pause = pause_point(job)
    try:
        pause()
        _run_judge(job, pause)
    finally:
        WARMED.clear()
        pause.close()


def _run_judge(job: dict[str, Any], pause: Callable[[], None]) -> None:
    device_ready = warm_device(job["device"])
    reference_path = Path(job["reference_path"])
    reference = load_module(reference_path, "reference")
    device_ready.join()
    channel.send("environment", **_device_environment(job["device"]))
    cache = _cache_for(job)
    if cache is not None:
        job = {**job, "reference_sha256": hashlib.sha256(reference_path.read_bytes()).hexdigest()}
    budget = device_output_budget(job) if job["device"] == "cuda" else 0
    with judge_inbox({**job, "device_output_budget_bytes": budget}) as inbox:
        for index, shape_job in enumerate(job["shapes"]):
            if job.get("run_shapes") is not None and index not in job["run_shapes"]:
                continue  # another candidate round's (EvaluateOptions.candidate_rounds)
            try:
                _judge_shape(job, reference, index, shape_job, inbox, cache, pause)
            except Exception as exc:
                raise grader_error(exc, index, shape_job["shape"]) from None
            release_device_memory(job["device"])
    if cache is not None:
        channel.send(
            "judge_cache",
            hits=cache.hits,
            misses=cache.misses,
            entries=len(cache),
            held_bytes=cache.held_bytes,
            budget_bytes=cache.budget_bytes,
        )


def _cache_for(job: dict[str, Any]) -> ReferenceCache | None:
    global CACHE
    if not job.get("warm"):
        return None
    budget = int(job.get("judge_cache_bytes") or 0)
    if CACHE is None:
        CACHE = ReferenceCache(budget)
    else:
        CACHE.resize(budget)
    CACHE.hits = CACHE.misses = 0
    return CACHE


def _judge_shape(
    job: dict[str, Any],
    reference: Any,
    index: int,
    shape_job: dict[str, Any],
    inbox: Any = None,
    cache: ReferenceCache | None = None,
    pause: Callable[[], None] = lambda: None,
) -> None:
    """Each case's reference output is compared and freed before the next case is drawn. The
    model is built only where a case is not in the cache or the shape's baselines are timed.
    Between cases the judge answers the GPU's pause requests (gpu_share.py)."""

    steps = Steps(job)
    apply_shape(reference, shape_job["shape"])
    built: list[Any] = []

    def model() -> Any:
        if not built:
            steps.start()
            torch.manual_seed(INIT_SEED)
            built.append(reference.Model(*reference.get_init_inputs()).to(job["device"]).eval())
            steps.mark("build")
            steps.send(shape=index, stage="build")
        return built[0]

    for case_index, case in enumerate(cases_of(shape_job)):
        pause()
        key = case_key(job, shape_job["shape"], shape_job["cases"][case_index]) if cache else ""
        expected = cache.get(key, job["device"]) if cache is not None else None
        hit = expected is not None
        stress = stress_of(job, case)
        if expected is None:
            current = model()
            steps.start()
            if cache is not None:
                sync(job["device"])
            started = time.monotonic()
            with judge_stress_state(stress, current):
                expected = _expected(
                    job, reference, current, shape_job, case, case_index, stress, steps
                )
            if cache is not None:
                sync(job["device"])
                cache.put(key, expected, compute_s=time.monotonic() - started)
        else:
            steps.start()
            steps.mark("cached")
        message = _verdict(job, expected, index, case_index, stress, inbox, steps)
        if cache is not None:
            message["cached"] = hit
        del expected
        steps.send(shape=index, case=case_index)
        channel.send("judged", **message)
    if job["timed"] and shape_job["seen"] and not _baselines_cached(job, index):
        current = model()
        steps.start()
        sets = timing_input_sets(reference, shape_job["shape"], "cuda")
        steps.mark("timing_sets")
        _judge_baselines(job, index, current, sets, shape_job["shape"])
        steps.mark("baselines")
        steps.send(shape=index, stage="baselines")


def judge_stress_state(stress: Any, model: Any) -> Any:
    """The reference model's state scaled for a stress case; a state it lacks is the task's
    error."""

    problems = state_problems(stress, model) if stress is not None else []
    if problems:
        raise StressError(f"stress case {stress.name}: the reference's Model {problems[0]}")
    return scaled_state(stress, model)


def _baselines_cached(job: dict[str, Any], index: int) -> bool:
    """An earlier judge on this GPU model and these libraries timed this shape the way the
    candidate was timed (baselines.py): nothing to time here. A task's SOTA is always timed."""

    return not needs_timing(
        job.get("cached_baselines", {}).get(str(index)),
        graphs=_allow_graphs(job, index),
        want_compile=bool(job.get("compile_baseline")),
        sota=bool(job.get("sota_path")),
    )


def _allow_graphs(job: dict[str, Any], index: int) -> bool:
    # The eager time here cross-checks the one taken beside the candidate: timed the same way,
    # from graphs only where the candidate's were.
    return bool(job.get("candidate_graphs", {}).get(str(index), True))


def _expected(
    job: dict[str, Any],
    reference: Any,
    model: Any,
    shape_job: dict[str, Any],
    case: Any,
    case_index: int,
    stress: Any,
    steps: Steps,
) -> Expected:
    """The reference on one case: its outputs and what the verdict needs of its inputs."""

    device = job["device"]
    inputs = case_inputs(reference, shape_job["shape"], case, device)
    steps.mark("inputs")
    if stress is not None:
        inputs = stress_inputs(stress, inputs)
    # The float64 check needs the inputs as drawn; elsewhere no copy is made and they are freed
    # as soon as the reference has run.
    precise = case_index == 0 and job["dtype"] == "float32"
    precise = precise and precision_cost_bytes(model, inputs, []) <= PRECISION_MAX_BYTES
    arguments = [clone(x) for x in inputs] if precise else inputs
    with torch.no_grad():
        outputs = as_list(model(*arguments))
    steps.mark("reference")
    # Whether the reference's own output is a view of its input here (a transpose of one row,
    # say): then so may the candidate's be.
    entry = Expected(outputs, aliases(outputs, arguments), largest_elements([*arguments, *outputs]))
    del arguments
    if case.distribution != "problem" and not all_finite(outputs):
        entry.skipped = f"reference is not finite on {case.distribution} inputs"
    elif precise:
        entry.precise = True
        entry.precision = precision_truth(model, inputs, outputs)
        steps.mark("precision")
    return entry


def _verdict(
    job: dict[str, Any],
    expected: Expected,
    index: int,
    case_index: int,
    stress: Any,
    inbox: Any,
    steps: Steps,
) -> dict[str, Any]:
    """The candidate's outputs for one case against the reference's."""

    device, io_dir = job["device"], Path(job["io_dir"])
    where: dict[str, Any] = {
        "shape": index,
        "case": case_index,
        "reference_aliases": expected.reference_aliases,
        "largest_elements": expected.largest_elements,
        **judge_silenced(job, index, case_index, expected.outputs, device),
    }
    if expected.skipped:
        return {**where, "skipped": True, "reason": expected.skipped}
    stem = io_dir / f"out_{index}_{case_index}"
    try:
        actual = inbox.outputs(index, case_index) if inbox is not None else None
        on_device = actual is not None
        if actual is None:
            actual = read_outputs(stem, device)
    except OutputFileError as exc:
        return {**where, "correct": False, "reason": str(exc)}
    steps.mark("receive")
    where["bytes"] = sum(t.numel() * t.element_size() for t in actual)
    where["on_device"] = on_device
    if stress is None:
        verdict = compare_outputs(expected.outputs, actual, atol=job["atol"], rtol=job["rtol"])
    else:
        verdict = compare_outputs(
            expected.outputs, actual, atol=stress.atol, rtol=stress.rtol, scale_atol=False
        )
    steps.mark("compare")
    # Read once: its room goes back now (a mapped file's pages once its tensors are freed).
    stem.with_suffix(".bin").unlink(missing_ok=True)
    message: dict[str, Any] = {
        **where,
        "correct": verdict.correct,
        "reason": verdict.reason,
        "max_abs_err": verdict.max_abs_err,
        "max_rel_err": verdict.max_rel_err,
    }
    if verdict.correct and expected.precise:
        precision = expected.precision
        message["precision"] = precision.report(actual) if precision is not None else None
    if on_device:
        # Its device memory goes back now, before the next case's reference runs.
        del actual
        inbox.release(index, case_index)
    return message


def _judge_baselines(
    job: dict[str, Any], index: int, model: Any, sets: list[list[Any]], shape: dict[str, Any]
) -> None:
    """Eager time measured here, in a process the candidate never touched."""

    allow_graphs = _allow_graphs(job, index)
    cached = job.get("cached_baselines", {}).get(str(index))
    calls = {"eager": lambda k: model(*sets[k])}
    warmed = False
    if job.get("compile_baseline") and not (cached and cached.get("compile_ms")):
        try:
            compiled = take_warmed(Path(job["reference_path"]), shape, job["device"])
            warmed = compiled is not None
            if compiled is None:
                compiled = compiled_baseline(model, sets[0])
            calls["compile"] = lambda k: compiled(*sets[k])
        except Exception as exc:
            channel.send("baseline_error", shape=index, baseline="compile", message=str(exc)[:500])
    sota = _sota_module(job)
    if sota is not None:
        calls["sota"] = lambda k: sota.sota_forward(model, *sets[k])
    with torch.no_grad():
        timings = time_interleaved(
            calls, input_sets=len(sets), device="cuda", allow_graphs=allow_graphs
        )
    channel.send(
        "baselines",
        shape=index,
        graphs=timings.graphs,
        compile_warmed=warmed,
        **{f"{k}_ms": v for k, v in timings.ms.items()},
    )


# The command line's compile warm-up (roles/prelude.py) runs in this same child before its judge
# job, and leaves its compiled baseline here: compiled again, the same graph would cost dynamo's
# trace, inductor's cache lookups and the generated code's load (0.15-0.35 s of a first
# evaluation's judge on an H200). Kept per reference bytes and device with the reference module
# it was built from, and taken where that module's constants are the shape the judge times: the
# same source, constants and seed build the same model the judge would compile (a KernelBench
# file's warm-up, handed before its analysis, runs on the file's own constants, which the
# analysis names). A warm-up whose model holds more than WARMED_MAX_BYTES of weights keeps
# nothing, so that the candidate's run has the GPU's memory as before.
WARMED: dict[tuple[str, str], tuple[Any, Any]] = {}
WARMED_MAX_BYTES = 256 * 1024**2


def warmed_key(reference_path: Path, device: str) -> tuple[str, str]:
    return hashlib.sha256(reference_path.read_bytes()).hexdigest(), device


def take_warmed(reference_path: Path, shape: dict[str, Any], device: str) -> Any:
    """The warm-up's compiled model for this reference and shape; None where there is none
    (every judge but the command line's: its file is not read)."""
    if not WARMED:
        return None
    found = WARMED.pop(warmed_key(reference_path, device), None)
    if found is None:
        return None
    module, compiled = found
    missing = object()
    if any(getattr(module, name, missing) != value for name, value in shape.items()):
        return None
    return compiled


def state_bytes(model: Any) -> int:
    tensors = [*model.parameters(), *model.buffers()]
    return sum(t.numel() * t.element_size() for t in tensors)


def compiled_baseline(model: Any, first_set: list[Any]) -> Any:
    """torch.compile's baseline of the reference, compiled by its first call on `first_set`.
    The command line's warm-up (roles/prelude.py) compiles through this too, and leaves what it
    compiled in WARMED."""
    compiled = torch.compile(copy.deepcopy(model))
    with torch.no_grad():
        compiled(*first_set)
    return compiled


def _sota_module(job: dict[str, Any]) -> Any:
    """The task's sota.py, when it ships one and its library path is available here."""

    path = job.get("sota_path")
    if not path:
        return None
    try:
        module = load_module(Path(path), "sota")
        available = bool(module.is_available())
    except Exception as exc:
        channel.send("baseline_error", baseline="sota", message=describe(exc)[-500:])
        return None
    if not available:
        channel.send("baseline_error", baseline="sota", message="is_available() is false here")
        return None
    return module


def _device_environment(device: str) -> dict[str, Any]:
    if device != "cuda":
        return {}
    props = torch.cuda.get_device_properties(0)
    return {
        "gpu": props.name,
        "capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "memory_gib": round(props.total_memory / 2**30, 1),
    }
