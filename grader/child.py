"""Entry point of a grader child process: `python -m grader.child JOB.json`.

role "probe" runs first, without the solution: it measures the reference's peak memory on the
visible shape and runs the reference on the meta device for each drawn unseen shape, so that only
shapes the reference can run within the memory budget are graded (see feasibility.py).
role "candidate" (sandboxed) imports the solution, builds ModelNew with the reference weights,
runs it on every case of every shape, writes its outputs, and times it interleaved with the
eager reference. role "judge" runs afterwards, never imports the solution, draws the same inputs,
computes the reference outputs and compares. role "build" (sandboxed, on a host without a GPU)
only imports the solution so that its extensions compile (builds.py). Progress goes over the
private channel only.
One shape's tensors are alive at a time in each child; caches are emptied between shapes.
"""

import contextlib
import copy
import errno
import json
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

INIT_SEED = 42
EAGER_DISAGREEMENT_RATIO = 2.0


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    from grader import channel

    _hold_to_share(job)
    try:
        if job["role"] == "judge":
            _judge(job)
        elif job["role"] == "build":
            _build_stage(job)
        elif job["role"] == "probe":
            _probe(job)
        elif job["role"] == "decoy":
            from grader.decoy import run_child

            run_child(job)
        else:
            _Candidate(job).run()
    except _StageError as exc:
        channel.send("error", stage=exc.stage, message=exc.message, shape=exc.shape_index)
        return 3
    channel.send("done")
    return 0


def _warm_device(device: str) -> threading.Thread:
    """CUDA's context made on a thread of its own while the job's modules load (about 0.4 s on
    an H100); join it before the first tensor goes to the device. A failure here is left for
    that first use to raise where the job reports it."""

    def init() -> None:
        import torch

        with contextlib.suppress(Exception):
            torch.cuda.init()
            torch.cuda.synchronize()

    thread = threading.Thread(target=init if device == "cuda" else (lambda: None), daemon=True)
    thread.start()
    return thread


def _memory_share(job: dict[str, Any]) -> float:
    """The share of the GPU's memory this evaluation may use (EvaluateOptions.gpu_memory_share)."""
    return float(job.get("memory_share", 1.0))


def _hold_to_share(job: dict[str, Any]) -> None:
    """Where several evaluations share one GPU, each process allocates within its share."""
    share = _memory_share(job)
    if job["device"] == "cuda" and share < 1.0:
        import torch

        torch.cuda.set_per_process_memory_fraction(share)


class _StageError(Exception):
    def __init__(self, stage: str, message: str, shape_index: int | None = None) -> None:
        super().__init__(message)
        self.stage, self.message, self.shape_index = stage, message, shape_index


def _describe(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)[-12:])[-4000:]


def _as_list(output: Any) -> list[Any]:
    return list(output) if isinstance(output, (list, tuple)) else [output]


def _cases(shape_job: dict[str, Any]) -> list[Any]:
    from grader.cases import Case

    return [Case.from_dict(c) for c in shape_job["cases"]]


def _stress(job: dict[str, Any], case: Any) -> Any:
    """The task's stress case that a case applies (cases.Stress), or None."""
    from grader.cases import Stress

    if not case.stress:
        return None
    return Stress.from_dict(job["stress_cases"][case.stress])


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


class _Candidate:
    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.device: str = job["device"]
        self.share = _memory_share(job)
        self.io_dir = Path(job["io_dir"])
        self.outbox = _outbox(job)

    def run(self) -> None:
        from grader import channel, guards
        from grader.builds import ExtensionBuildError, ExtensionLoaders
        from grader.modules import load_module

        channel.send("started")
        device_ready = _warm_device(self.device)
        loaders = ExtensionLoaders(self.job.get("prebuilt"), build_only=False)
        loaders.install()
        self.tamper = guards.TamperCheck.take()
        self.launches = guards.TritonLaunches()
        self.audit = guards.Audit(guards.default_allowed_roots(self.io_dir.parent))
        self.reference = load_module(Path(self.job["reference_path"]), "reference")
        self.audit.active = True
        source = Path(self.job["solution_path"]).read_text(encoding="utf-8", errors="replace")
        try:
            self.solution = load_module(Path(self.job["solution_path"]), "solution")
        except ExtensionBuildError as exc:
            channel.send("build_failed", error=str(exc))
            raise _StageError("compile", _describe(exc)) from None
        except BaseException as exc:
            raise _StageError("compile", _describe(exc)) from None
        if not callable(getattr(self.solution, "ModelNew", None)):
            raise _StageError("compile", "the solution does not define a ModelNew class")
        channel.send(
            "compiled",
            fallback_lines=guards.exception_fallbacks(source),
            extensions=loaders.built,
            prebuilt_loaded=loaders.loaded,
        )
        device_ready.join()
        self._report_tampering("import")
        self.to_time: list[tuple[int, dict[str, int], list[list[Any]]]] = []
        for index, shape_job in enumerate(self.job["shapes"]):
            try:
                self._run_shape(index, shape_job)
            except _StageError as exc:
                if shape_job["seen"]:
                    raise
                # An unseen shape that breaks the solution fails generalization, not the run.
                channel.send("shape_error", shape=index, stage=exc.stage, message=exc.message)
            _release_device_memory(self.device)
        while self.to_time:
            index, shape, host_sets = self.to_time.pop(0)
            try:
                self._time_shape(index, shape, host_sets)
            except Exception as exc:
                raise _runtime_error(exc, index, self.device, self.share) from None
            del host_sets
            _release_device_memory(self.device)
        self._report_tampering("run")
        channel.send("audit", files=self.audit.file_paths, network=self.audit.network)
        if self.outbox is not None:
            channel.send(
                "device_outputs", sent_bytes=self.outbox.sent_bytes, disabled=self.outbox.disabled
            )

    def _report_tampering(self, stage: str) -> None:
        from grader import channel

        changed = self.tamper.changed()
        if changed:
            channel.send("tampered", stage=stage, names=changed)

    def _build(self, index: int, shape: dict[str, int], *, timing: bool = False) -> tuple[Any, Any]:
        """ModelNew and the reference's Model for a shape, with the reference's weights.

        For timing, the models are built again (not kept from the correctness run, so that only
        one shape's models live at a time) and seeded through the CPU generator alone: a failed
        graph capture of an earlier shape can leave the CUDA generator unusable."""
        import torch

        from grader import channel
        from grader.modules import apply_shape, set_constants

        def seed() -> None:
            if timing:
                torch.default_generator.manual_seed(INIT_SEED)
            else:
                torch.manual_seed(INIT_SEED)

        apply_shape(self.reference, shape)
        # The solution keeps its compiled kernels: its constants are set, its source not re-run.
        set_constants(self.solution, {k: v for k, v in shape.items() if hasattr(self.solution, k)})
        init_inputs = self.reference.get_init_inputs()
        seed()
        reference_model = self.reference.Model(*init_inputs).to(self.device).eval()
        try:
            seed()
            model = self.solution.ModelNew(*init_inputs).to(self.device).eval()
        except BaseException as exc:
            raise _StageError("construct", _describe(exc), index) from None
        weights = _copy_weights(reference_model, model)
        if not timing:
            channel.send("constructed", shape=index, weights=weights)
        return model, reference_model

    def _run_shape(self, index: int, shape_job: dict[str, Any]) -> None:
        import torch

        from grader import channel

        shape = shape_job["shape"]
        model, _ = self._build(index, shape)
        for case_index, case in enumerate(_cases(shape_job)):
            with torch.no_grad():
                self._run_case(index, case_index, case, shape_job, model)
            channel.send("case_done", shape=index, case=case_index)
        del model
        if self.job["timed"] and shape_job["seen"]:
            self.to_time.append((index, shape, self._timing_sets(shape)))

    def _timing_sets(self, shape: dict[str, int]) -> list[list[Any]]:
        """Drawn on the device before any timing starts (a failed graph capture of the solution
        can leave the CUDA generator unusable), then held in host memory until that shape is
        timed, so the device holds one shape's sets at a time."""
        from grader.cases import timing_input_sets

        self.audit.active = False
        sets = [
            [_to_host(x) for x in one_set]
            for one_set in timing_input_sets(self.reference, shape, self.device)
        ]
        self.audit.active = True
        return sets

    def _run_case(
        self, index: int, case_index: int, case: Any, shape_job: dict[str, Any], model: Any
    ) -> None:
        from grader import channel
        from grader.cases import (
            StressError,
            case_inputs,
            scaled_state,
            state_problems,
            stress_inputs,
        )

        self.audit.active = False
        inputs = case_inputs(self.reference, shape_job["shape"], case, self.device)
        stress = _stress(self.job, case)
        where = {"shape": index, "case": case_index, "seen": shape_job["seen"]}
        if stress is not None:
            try:
                inputs = stress_inputs(stress, inputs)
            except StressError as exc:
                # The task's error: the judge meets it on the same inputs and reports it.
                self.audit.active = True
                channel.send("case", **where, violations=[], task_error=str(exc))
                return
            # Upstream loads the reference's state into the candidate's model by name, strictly:
            # a model without the state this case scales fails it.
            problems = [f"ModelNew {p}" for p in state_problems(stress, model)]
            if problems:
                self.audit.active = True
                channel.send("case", **where, violations=problems)
                return
        with scaled_state(stress, model):
            self._call_case(index, case_index, inputs, shape_job, model)

    def _call_case(
        self, index: int, case_index: int, inputs: list[Any], shape_job: dict[str, Any], model: Any
    ) -> None:
        import torch

        from grader import channel, guards
        from grader.outputs import write_outputs

        pristine = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        _poison_allocator(self.device, inputs)
        self.audit.active = True
        threads, processes = guards.live_threads(), guards.child_processes()
        launches_before = len(self.launches.names)
        profile = None
        try:
            if case_index == 0:
                output, profile = guards.profile_call(lambda: model(*inputs), self.device)
            else:
                output = model(*inputs)
                _sync(self.device)
        except BaseException as exc:
            raise _runtime_error(exc, index, self.device, self.share) from None
        outputs = _as_list(output)
        violations = _violations(outputs, inputs, pristine)
        report: dict[str, Any] = {
            "shape": index,
            "case": case_index,
            "seen": shape_job["seen"],
            "violations": violations,
            "new_threads": len(guards.live_threads() - threads),
            "new_processes": len(guards.child_processes() - processes),
        }
        if profile is not None:
            report.update(self._profile_report(profile, launches_before))
        channel.send("case", **report)
        # An output that aliases an input may still be right: the judge knows whether the
        # reference's own output aliases there, so the output travels for it to compare.
        if all(_is_alias_violation(v) for v in violations):
            self.audit.active = False
            # Only each output's own elements are written, never the rest of a storage it views.
            try:
                sent = self.outbox is not None and self.outbox.send(index, case_index, outputs)
                if not sent:
                    write_outputs(self.io_dir / f"out_{index}_{case_index}", outputs)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                # The grader's scratch space is full: the host checks that it is (evaluate.py).
                raise _StageError("scratch_full", _describe(exc), index) from None
            self.audit.active = True

    def _profile_report(self, profile: Any, launches_before: int) -> dict[str, Any]:
        interpreted = self.launches.since(launches_before)
        share = profile.work_share(self.device, interpreted)
        return {
            "aten_ops": sorted(profile.aten_ops),
            "own_kernels": sorted(profile.own_kernels(n for n, _ in interpreted))[:50],
            "own_us": share.own_us,
            "library_us": share.library_us,
            "top_library": [[name[:200], us] for name, us in share.top_library],
        }

    def _time_shape(self, index: int, shape: dict[str, int], host_sets: list[list[Any]]) -> None:
        import torch

        from grader import channel
        from grader.cases import to_device
        from grader.timing import side_stream_check, time_interleaved

        model, reference_model = self._build(index, shape, timing=True)
        sets = [[to_device(x, self.device) for x in one_set] for one_set in host_sets]
        channel.send("timing_begin", shape=index)
        with torch.no_grad():
            timings = time_interleaved(
                {
                    "candidate": lambda k: model(*sets[k]),
                    "eager": lambda k: reference_model(*sets[k]),
                },
                input_sets=len(sets),
                device=self.device,
            )
        candidate_ms = timings.ms.get("candidate", [])
        if candidate_ms and not timings.graphs:
            with torch.no_grad():
                drained = side_stream_check(
                    lambda k: model(*sets[k]), input_sets=len(sets), stream_ms=candidate_ms
                )
            if drained is not None:
                channel.send(
                    "side_stream",
                    shape=index,
                    stream_ms=candidate_ms,
                    drained_ms=drained.drained_ms,
                    sync_ms=drained.sync_ms,
                    kernel_streams=drained.kernel_streams,
                    current_stream=drained.current_stream,
                )
                candidate_ms = drained.drained_ms
        channel.send(
            "timing_end",
            shape=index,
            candidate_ms=candidate_ms,
            eager_ms=timings.ms.get("eager", []),
            graphs=timings.graphs,
            reps=timings.reps,
        )


def _to_host(value: Any) -> Any:
    import torch

    return value.cpu() if isinstance(value, torch.Tensor) else value


def _release_device_memory(device: str) -> None:
    """Cached blocks of the last shape go back to the device before the next shape allocates."""
    import gc

    import torch

    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def _copy_weights(reference_model: Any, model: Any) -> str:
    """Reference weights where names and shapes match; else the seeded construction stands."""
    state = reference_model.state_dict()
    if not state:
        return "none"
    own = model.state_dict()
    if set(own) != set(state) or any(own[k].shape != v.shape for k, v in state.items()):
        return "seeded"
    model.load_state_dict(state, strict=True)
    return "reference"


def _poison_allocator(device: str, inputs: list[Any]) -> None:
    """Fill freed cached memory with NaN so an output element the kernel never wrote fails."""
    if device != "cuda":
        return
    import torch

    largest = max(
        (x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor)),
        default=1 << 20,
    )
    for _ in range(2):
        block = torch.empty(largest // 4 + 1, dtype=torch.float32, device="cuda")
        block.fill_(float("nan"))
        del block


def _violations(outputs: list[Any], inputs: list[Any], pristine: list[Any]) -> list[str]:
    import torch

    found = [
        f"output {o} is not a tensor"
        for o, out in enumerate(outputs)
        if not isinstance(out, torch.Tensor)
    ]
    found += _aliases(outputs, inputs)
    tensors_in = [(i, x) for i, x in enumerate(inputs) if isinstance(x, torch.Tensor)]
    for (i, x), before in zip(
        tensors_in, [p for p in pristine if isinstance(p, torch.Tensor)], strict=True
    ):
        if not _same_bytes(x, before):
            found.append(f"input {i} was modified in place")
    return found


def _is_alias_violation(violation: str) -> bool:
    return violation.startswith("output ") and " aliases input " in violation


def _aliases(outputs: list[Any], inputs: list[Any]) -> list[str]:
    """Which output views which input, worded alike for the candidate's outputs and for the
    reference's, so that the verdict can excuse exactly the aliases the reference shares."""
    import torch

    return [
        f"output {o} aliases input {i}"
        for o, out in enumerate(outputs)
        for i, x in enumerate(inputs)
        if isinstance(out, torch.Tensor)
        and isinstance(x, torch.Tensor)
        and out.numel()
        and x.numel()
        and _shares_memory(out, x)
    ]


def _same_bytes(a: Any, b: Any) -> bool:
    """Bitwise equality: NaNs compare equal to themselves, and any dtype works (fp8 included,
    which has no comparison kernels of its own)."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)))


def _shares_memory(a: Any, b: Any) -> bool:
    sa, sb = a.untyped_storage(), b.untyped_storage()
    a0, b0 = int(sa.data_ptr()), int(sb.data_ptr())
    return a0 < b0 + int(sb.nbytes()) and b0 < a0 + int(sa.nbytes())


def _build_stage(job: dict[str, Any]) -> None:
    """Import the solution on a host without a GPU so that its extensions compile (builds.py);
    one "build" message says built, failed or deferred."""
    from grader import channel
    from grader.builds import (
        BUILT,
        DEFERRED,
        FAILED,
        BuildDeferred,
        ExtensionBuildError,
        ExtensionLoaders,
    )
    from grader.modules import load_module

    path = Path(job["solution_path"])
    try:
        compile(path.read_bytes(), str(path), "exec")
    except (SyntaxError, ValueError) as exc:
        channel.send("build", status=FAILED, reason="not valid Python", error=_describe(exc))
        return
    loaders = ExtensionLoaders(None, build_only=True)
    loaders.install()
    try:
        load_module(path, "solution")
    except ExtensionBuildError as exc:
        channel.send("build", status=FAILED, reason="the compiler refused it", error=str(exc))
    except BuildDeferred as exc:
        channel.send("build", status=DEFERRED, reason=str(exc))
    except BaseException as exc:  # anything else may need what only the GPU host has
        reason = "importing it needs more than this build host has (left to the GPU stage)"
        channel.send("build", status=DEFERRED, reason=reason, error=_describe(exc))
    else:
        channel.send("build", status=BUILT, extensions=loaders.built)


def _outbox(job: dict[str, Any]) -> Any:
    """The sender of outputs that stay on the device (device_outputs.py), where the job names
    the grading process's socket; None: every case's outputs go through host memory."""
    if job["device"] != "cuda" or not job.get("output_socket"):
        return None
    from grader.device_outputs import Outbox

    return Outbox(job["output_socket"], _device_output_budget(job))


def _device_output_budget(job: dict[str, Any]) -> int:
    """The job's budget for outputs held on the device, or the same rule on this GPU's memory
    where the grading process had no probe to take it from."""
    import torch

    from grader.device_outputs import device_budget_bytes

    budget = job.get("device_output_budget_bytes")
    if budget is not None:
        return int(budget)
    total = int(torch.cuda.get_device_properties(0).total_memory * _memory_share(job))
    return device_budget_bytes(total, None)


def _judge(job: dict[str, Any]) -> None:
    from grader import channel
    from grader.device_outputs import judge_inbox
    from grader.modules import load_module

    device_ready = _warm_device(job["device"])
    reference = load_module(Path(job["reference_path"]), "reference")
    device_ready.join()
    channel.send("environment", **_device_environment(job["device"]))
    budget = _device_output_budget(job) if job["device"] == "cuda" else 0
    with judge_inbox({**job, "device_output_budget_bytes": budget}) as inbox:
        for index, shape_job in enumerate(job["shapes"]):
            try:
                _judge_shape(job, reference, index, shape_job, inbox)
            except Exception as exc:
                raise _grader_error(exc, index, shape_job["shape"]) from None
            _release_device_memory(job["device"])


def _grader_error(exc: BaseException, index: int, shape: dict[str, int]) -> "_StageError":
    """Anything that fails in the judge or the probe runs only the reference and the grader: it
    is the grader's failure, reported with its cause, never the solution's."""
    from grader import channel
    from grader.cases import StressError

    if isinstance(exc, StressError):
        channel.send("grader_error", shape=index, cause="task_error", message=str(exc)[:2000])
        return _StageError("judge", str(exc), index)
    cause = "out_of_memory" if _is_out_of_memory(exc) else "reference_failed"
    channel.send("grader_error", shape=index, cause=cause, message=_describe(exc)[-2000:])
    return _StageError("judge", _describe(exc), index)


def _runtime_error(exc: BaseException, index: int, device: str, share: float) -> "_StageError":
    """The solution's failure while running, unless it ran out of device memory that other
    processes on the GPU were holding: then the device was shared and the failure is not the
    solution's (stage "device_busy", a grader error)."""
    if device == "cuda" and _is_out_of_memory(exc):
        busy = _device_contention(share)
        if busy:
            return _StageError("device_busy", f"{busy}; {_describe(exc)}", index)
    return _StageError("runtime", _describe(exc), index)


def _device_contention(share: float) -> str:
    """What other processes held of the GPU, where that is more than their share and the reserve
    the memory budget leaves for contexts and fragmentation (see feasibility.py); "" otherwise."""
    import torch

    from grader.feasibility import RESERVE_BYTES

    try:
        free, total = torch.cuda.mem_get_info()
    except Exception:  # the device itself failed: nothing to measure
        return ""
    own = int(torch.cuda.memory_reserved())
    others = int(total) - int(free) - own
    if others <= (1.0 - share) * int(total) + RESERVE_BYTES:
        return ""
    gib = 2**30
    return (
        f"other processes held {others / gib:.1f} GiB of the GPU's {total / gib:.1f} GiB "
        f"while the solution held {own / gib:.1f} GiB"
    )


def _is_out_of_memory(exc: BaseException) -> bool:
    import torch

    if isinstance(exc, (MemoryError, torch.OutOfMemoryError)):
        return True
    return "out of memory" in str(exc).lower()


def _judge_shape(
    job: dict[str, Any], reference: Any, index: int, shape_job: dict[str, Any], inbox: Any = None
) -> None:
    """Each case's reference output is compared and freed before the next case is drawn."""
    import torch

    from grader import channel
    from grader.cases import timing_input_sets
    from grader.modules import apply_shape

    apply_shape(reference, shape_job["shape"])
    torch.manual_seed(INIT_SEED)
    model = reference.Model(*reference.get_init_inputs()).to(job["device"]).eval()
    for case_index, case in enumerate(_cases(shape_job)):
        stress = _stress(job, case)
        with _judge_stress_state(stress, model):
            message = _judge_case(job, reference, model, shape_job, case, index, case_index, inbox)
        channel.send("judged", **message)
    if job["timed"] and shape_job["seen"] and not _baselines_cached(job, index):
        sets = timing_input_sets(reference, shape_job["shape"], "cuda")
        _judge_baselines(job, index, model, sets)


def _judge_stress_state(stress: Any, model: Any) -> Any:
    """The reference model's state scaled for a stress case; a state it lacks is the task's
    error."""
    from grader.cases import StressError, scaled_state, state_problems

    problems = state_problems(stress, model) if stress is not None else []
    if problems:
        raise StressError(f"stress case {stress.name}: the reference's Model {problems[0]}")
    return scaled_state(stress, model)


def _baselines_cached(job: dict[str, Any], index: int) -> bool:
    """An earlier judge on this GPU model and these libraries timed this shape the way the
    candidate was timed (baselines.py): nothing to time here. A task's SOTA is always timed."""
    from grader.baselines import usable

    if job.get("sota_path"):
        return False
    return usable(
        job.get("cached_baselines", {}).get(str(index)),
        graphs=_allow_graphs(job, index),
        want_compile=bool(job.get("compile_baseline")),
    )


def _allow_graphs(job: dict[str, Any], index: int) -> bool:
    # The eager time here cross-checks the one taken beside the candidate: timed the same way,
    # from graphs only where the candidate's were.
    return bool(job.get("candidate_graphs", {}).get(str(index), True))


def _judge_case(
    job: dict[str, Any],
    reference: Any,
    model: Any,
    shape_job: dict[str, Any],
    case: Any,
    index: int,
    case_index: int,
    inbox: Any = None,
) -> dict[str, Any]:
    import torch

    from grader.cases import case_inputs, stress_inputs
    from grader.compare import (
        PRECISION_MAX_BYTES,
        compare_outputs,
        precision_cost_bytes,
        precision_report,
    )
    from grader.decoy import judge_silenced
    from grader.generalization import largest_elements
    from grader.outputs import OutputFileError, read_outputs

    device, io_dir = job["device"], Path(job["io_dir"])
    inputs = case_inputs(reference, shape_job["shape"], case, device)
    stress = _stress(job, case)
    if stress is not None:
        inputs = stress_inputs(stress, inputs)
    # The float64 check needs the inputs as drawn; elsewhere no copy is made and they are freed
    # as soon as the reference has run.
    precise = case_index == 0 and job["dtype"] == "float32"
    precise = precise and precision_cost_bytes(model, inputs, []) <= PRECISION_MAX_BYTES
    arguments = [_clone(x) for x in inputs] if precise else inputs
    with torch.no_grad():
        expected = _as_list(model(*arguments))
    # Whether the reference's own output is a view of its input here (a transpose of one row,
    # say): then so may the candidate's be.
    where: dict[str, Any] = {
        "shape": index,
        "case": case_index,
        "reference_aliases": _aliases(expected, arguments),
        "largest_elements": largest_elements([*arguments, *expected]),
        **judge_silenced(job, index, case_index, expected, device),
    }
    del arguments
    if not precise:
        inputs = []
    if case.distribution != "problem" and not _all_finite(expected):
        reason = f"reference is not finite on {case.distribution} inputs"
        return {**where, "skipped": True, "reason": reason}
    stem = io_dir / f"out_{index}_{case_index}"
    try:
        actual = inbox.outputs(index, case_index) if inbox is not None else None
        on_device = actual is not None
        if actual is None:
            actual = read_outputs(stem, device)
    except OutputFileError as exc:
        return {**where, "correct": False, "reason": str(exc)}
    where["bytes"] = sum(t.numel() * t.element_size() for t in actual)
    where["on_device"] = on_device
    if stress is None:
        verdict = compare_outputs(expected, actual, atol=job["atol"], rtol=job["rtol"])
    else:
        verdict = compare_outputs(
            expected, actual, atol=stress.atol, rtol=stress.rtol, scale_atol=False
        )
    # Read once: its room goes back now (a mapped file's pages once its tensors are freed).
    stem.with_suffix(".bin").unlink(missing_ok=True)
    message: dict[str, Any] = {
        **where,
        "correct": verdict.correct,
        "reason": verdict.reason,
        "max_abs_err": verdict.max_abs_err,
        "max_rel_err": verdict.max_rel_err,
    }
    if verdict.correct and precise:
        message["precision"] = precision_report(model, inputs, expected, actual)
    if on_device:
        # Its device memory goes back now, before the next case's reference runs.
        del actual
        inbox.release(index, case_index)
    return message


def _probe(job: dict[str, Any]) -> None:
    """The reference's measured peak on the visible shapes, then each drawn shape's footprint
    from a run on the meta device, until enough fit the budget (see feasibility.py)."""
    from grader import channel, feasibility
    from grader.modules import load_module

    reference = load_module(Path(job["reference_path"]), "reference")
    entry = dict(job.get("cached") or {})
    if entry.get("visible_peak_bytes") is None:
        entry.update(_probe_visible(job, reference))
    verdicts, accepted = [], 0
    for shape in job["candidates"]:
        if accepted >= job["needed"]:
            break
        verdict = _probe_shape(reference, shape, job["visible"][entry["visible_index"]], entry)
        verdicts.append(verdict)
        accepted += feasibility.accepted(entry, verdict)[0]
    channel.send("probe", **{k: v for k, v in entry.items() if k != "shapes"}, shapes=verdicts)


def _probe_visible(job: dict[str, Any], reference: Any) -> dict[str, Any]:
    """The visible shape with the largest measured peak, its footprint, and the budget."""
    from grader import feasibility

    device = job["device"]
    best: dict[str, Any] = {"visible_peak_bytes": -1}
    for index, shape in enumerate(job["visible"]):
        footprint, output_bytes, error = _meta_footprint(reference, shape)
        try:
            peak = _measured_peak_bytes(reference, shape, device, footprint)
        except Exception as exc:
            raise _grader_error(exc, -1, shape) from None
        if peak > best["visible_peak_bytes"]:
            best = {
                "visible_index": index,
                "visible_peak_bytes": peak,
                "visible_footprint_bytes": footprint,
                "visible_output_bytes": output_bytes,
                "meta_supported": error is None,
            }
        _release_device_memory(device)
    total = _device_total_bytes(device, job.get("memory_cap_bytes"), _memory_share(job))
    return {**best, "total_bytes": total, "budget_bytes": feasibility.budget_bytes(total)}


def _measured_peak_bytes(
    reference: Any, shape: dict[str, int], device: str, footprint: int | None
) -> int:
    """On cuda, the allocator's peak while building the model and running forward once; on the
    host, where no allocator keeps a peak, the footprint (parameters, inputs and outputs)."""
    import torch

    from grader.cases import Case, case_inputs
    from grader.modules import apply_shape

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
        outputs = _as_list(model(*inputs))
    if device == "cuda":
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated()) - base
    return _footprint_bytes(model, inputs, outputs)


def _probe_shape(
    reference: Any, shape: dict[str, int], visible: dict[str, int], entry: dict[str, Any]
) -> dict[str, Any]:
    from grader import feasibility

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
    import torch

    from grader.cases import tensor_bytes
    from grader.kbproblem import on_meta
    from grader.modules import apply_shape

    try:
        apply_shape(reference, shape)
        with on_meta(), torch.no_grad():
            model = reference.Model(*reference.get_init_inputs())
            inputs = list(reference.get_inputs())
            outputs = _as_list(model(*inputs))
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
    from grader.cases import tensor_bytes

    return tensor_bytes([*model.parameters(), *model.buffers(), *inputs, *outputs])


def _device_total_bytes(device: str, memory_cap_bytes: int | None, share: float) -> int:
    import os

    import torch

    if device == "cuda":
        return int(torch.cuda.get_device_properties(0).total_memory * share)
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(physical, memory_cap_bytes) if memory_cap_bytes else physical


def _judge_baselines(job: dict[str, Any], index: int, model: Any, sets: list[list[Any]]) -> None:
    """Eager time measured here, in a process the candidate never touched."""
    import torch

    from grader import channel
    from grader.timing import time_interleaved

    allow_graphs = _allow_graphs(job, index)
    cached = job.get("cached_baselines", {}).get(str(index))
    calls = {"eager": lambda k: model(*sets[k])}
    if job.get("compile_baseline") and not (cached and cached.get("compile_ms")):
        try:
            compiled = torch.compile(copy.deepcopy(model))
            with torch.no_grad():
                compiled(*sets[0])
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
        **{f"{k}_ms": v for k, v in timings.ms.items()},
    )


def _sota_module(job: dict[str, Any]) -> Any:
    """The task's sota.py, when it ships one and its library path is available here."""
    from grader import channel
    from grader.modules import load_module

    path = job.get("sota_path")
    if not path:
        return None
    try:
        module = load_module(Path(path), "sota")
        available = bool(module.is_available())
    except Exception as exc:
        channel.send("baseline_error", baseline="sota", message=_describe(exc)[-500:])
        return None
    if not available:
        channel.send("baseline_error", baseline="sota", message="is_available() is false here")
        return None
    return module


def _device_environment(device: str) -> dict[str, Any]:
    import torch

    if device != "cuda":
        return {}
    props = torch.cuda.get_device_properties(0)
    return {
        "gpu": props.name,
        "capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "memory_gib": round(props.total_memory / 2**30, 1),
    }


def _clone(value: Any) -> Any:
    import torch

    return value.clone() if isinstance(value, torch.Tensor) else value


def _all_finite(values: list[Any]) -> bool:
    import torch

    return all(
        bool(torch.isfinite(v).all())
        for v in values
        if isinstance(v, torch.Tensor) and v.is_floating_point()
    )


def prepared_main() -> int:
    """A child started ahead of its job (prepared.py): what every job imports is imported now,
    CUDA is left uninitialised, and the job's path comes as one line on stdin. End of input
    (the pool let it go) ends it with nothing done."""
    _prepare()
    from grader import channel

    channel.send("prepared")
    line = sys.stdin.readline().strip()
    if not line:
        return 0
    return main(line)


def _prepare() -> None:
    import torch
    import torch.profiler
    import triton  # noqa: F401

    from grader import (  # noqa: F401
        builds,
        cases,
        channel,
        compare,
        feasibility,
        guards,
        kbproblem,
        modules,
        outputs,
        timing,
    )

    # The profiler's host side starts slowly the first time; the device side needs CUDA.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        torch.ones(1).add_(1)


def _end(code: int) -> None:
    """Ends the process as soon as its last message is out: every report has gone through the
    channel (unbuffered writes), so nothing is left to tear down that the operating system does
    not release by itself (the interpreter's and CUDA's orderly shutdown took 0.5-1 s)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _run(argv: list[str]) -> int:
    try:
        return prepared_main() if argv[1] == "--prepared" else main(argv[1])
    except SystemExit as exc:  # a solution's own sys.exit() keeps its exit code
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # reported by its exit code and the log, as an uncaught error is
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    _end(_run(sys.argv))
