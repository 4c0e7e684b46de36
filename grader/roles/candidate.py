"""role "candidate" (sandboxed): imports the solution, builds ModelNew with the reference weights,
runs it on every planned case of every shape, hands its outputs over (on the device where it can,
device_outputs.py; else through host memory, outputs.py), and times it interleaved with the eager
reference."""

import contextlib
import errno
import os
import time
from pathlib import Path
from typing import Any

import torch

from grader import channel, gpu_share, guards
from grader.builds import ExtensionBuildError, ExtensionLoaders
from grader.cases import (
    StressError,
    case_inputs,
    scaled_state,
    state_problems,
    stress_inputs,
    tensor_bytes,
    timing_input_sets,
    to_device,
)
from grader.device_outputs import Outbox
from grader.modules import apply_shape, load_module, set_constants
from grader.outputs import write_outputs
from grader.roles.common import (
    INIT_SEED,
    StageError,
    aliases,
    as_list,
    cases_of,
    describe,
    device_output_budget,
    is_out_of_memory,
    memory_share,
    release_device_memory,
    runtime_error,
    stress_of,
    sync,
    warm_device,
)
from grader.steps import Steps
from grader.timing import side_stream_check, time_interleaved


class _Candidate:
    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.device: str = job["device"]
        self.share = memory_share(job)
        self.whole = job.get("memory_whole")  # the share its shapes were planned on
        self.io_dir = Path(job["io_dir"])
        self.outbox = _outbox(job)
        self.steps = Steps(job)

    def run(self) -> None:
        channel.send("started")
        self.steps.start()
        device_ready = warm_device(self.device)
        loaders = ExtensionLoaders(self.job.get("prebuilt"), build_only=False)
        loaders.install()
        self.tamper = guards.TamperCheck.take()
        self.launches = guards.TritonLaunches()
        self.audit = guards.Audit(guards.default_allowed_roots(self.io_dir.parent))
        self.reference = load_module(Path(self.job["reference_path"]), "reference")
        self.steps.mark("reference_import")
        self.audit.active = True
        source = Path(self.job["solution_path"]).read_text(encoding="utf-8", errors="replace")
        try:
            self.solution = load_module(Path(self.job["solution_path"]), "solution")
        except ExtensionBuildError as exc:
            channel.send("build_failed", error=str(exc))
            raise StageError("compile", describe(exc)) from None
        except BaseException as exc:
            raise StageError("compile", describe(exc)) from None
        if not callable(getattr(self.solution, "ModelNew", None)):
            raise StageError("compile", "the solution does not define a ModelNew class")
        channel.send(
            "compiled",
            fallback_lines=guards.exception_fallbacks(source),
            extensions=loaders.built,
            prebuilt_loaded=loaders.loaded,
        )
        self.steps.mark("solution_import")
        device_ready.join()
        self.steps.mark("device_ready")
        self.steps.send(stage="compile")
        self._report_tampering("import")
        self.to_time: list[tuple[int, dict[str, int]]] = []
        # The unseen shapes past the 32-bit index limit, found by the grading process
        # (index_limit.run_after_timing_of): run last, after the visible shapes' timing.
        late = set(self.job.get("run_after_timing", ()))
        shapes = list(enumerate(self.job["shapes"]))
        # A candidate round (EvaluateOptions.candidate_rounds) runs the shapes it names alone.
        if self.job.get("run_shapes") is not None:
            shapes = [(i, s) for i, s in shapes if i in self.job["run_shapes"]]
            late &= {i for i, _ in shapes}
        # The visible shapes, then their timing, then the unseen ones: a visible shape is timed
        # before any other shape's tensors have come and gone, on sets drawn on the device.
        for index, shape_job in shapes:
            if shape_job["seen"]:
                self._run_or_report(index, shape_job)
        self._time_visible()
        for index, shape_job in shapes:
            if not shape_job["seen"] and index not in late:
                self._run_or_report(index, shape_job)
        for index in sorted(late):
            self._run_or_report(index, self.job["shapes"][index])
        self._report_tampering("run")
        channel.send("audit", files=self.audit.file_paths, network=self.audit.network)
        if self.outbox is not None:
            channel.send(
                "device_outputs", sent_bytes=self.outbox.sent_bytes, disabled=self.outbox.disabled
            )

    def _run_or_report(self, index: int, shape_job: dict[str, Any]) -> None:
        try:
            try:
                self._run_shape(index, shape_job)
            except StageError:
                raise
            except Exception as exc:
                # The harness's own allocations (the models, a case's inputs and their pristine
                # copy) ran out of device memory: within a share, not the solution's either.
                if not is_out_of_memory(exc):
                    raise
                raise runtime_error(exc, index, self.device, self.share, self.whole) from None
        except StageError as exc:
            if shape_job["seen"]:
                raise
            # An unseen shape that breaks the solution fails generalization, not the run.
            channel.send("shape_error", shape=index, stage=exc.stage, message=exc.message)
        release_device_memory(self.device)

    def _report_tampering(self, stage: str) -> None:
        changed = self.tamper.changed()
        if changed:
            channel.send("tampered", stage=stage, names=changed)

    def _build(self, index: int, shape: dict[str, int], *, timing: bool = False) -> tuple[Any, Any]:
        """ModelNew and the reference's Model for a shape, with the reference's weights.

        For timing, the models are built again (not kept from the correctness run, so that only
        one shape's models live at a time) and seeded through the CPU generator alone: a failed
        graph capture of an earlier shape can leave the CUDA generator unusable."""

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
            raise StageError("construct", describe(exc), index) from None
        weights = _copy_weights(reference_model, model)
        if not timing:
            channel.send("constructed", shape=index, weights=weights)
        return model, reference_model

    def _run_shape(self, index: int, shape_job: dict[str, Any]) -> None:
        shape = shape_job["shape"]
        self.steps.start()
        model, _ = self._build(index, shape)
        self.steps.mark("build")
        self.steps.send(shape=index, stage="build")
        for case_index, case in enumerate(cases_of(shape_job)):
            self.steps.start()
            with torch.no_grad():
                self._run_case(index, case_index, case, shape_job, model)
            self.steps.send(shape=index, case=case_index)
            channel.send("case_done", shape=index, case=case_index)
        del model
        if self.job["timed"] and shape_job["seen"]:
            self.to_time.append((index, shape))

    def _time_visible(self) -> None:
        """Every visible shape's timing input sets are drawn before any is timed (a failed graph
        capture of the solution can leave the CUDA generator unusable). They stay on the device
        while it has room for them beside the next shape's (the first shape timed always does:
        it is timed where it was drawn); the rest wait in host memory for their turn."""

        drawn: list[tuple[int, dict[str, int], list[list[Any]]]] = []
        for index, shape in self.to_time:
            self.steps.start()
            sets = self._timing_sets(shape, keep_on_device=not drawn)
            self.steps.mark("timing_sets")
            self.steps.send(shape=index, stage="timing_sets")
            drawn.append((index, shape, sets))
        self.to_time = []
        if drawn:
            self._wait_at_gate()
        while drawn:
            index, shape, sets = drawn.pop(0)
            try:
                self._time_shape(index, shape, sets)
            except Exception as exc:
                raise runtime_error(exc, index, self.device, self.share, self.whole) from None
            del sets
            release_device_memory(self.device)
        if self.job.get("timing_gate"):
            _touch(self.job["timing_gate"] + gpu_share.DONE_SUFFIX)

    def _wait_at_gate(self) -> None:
        """Nothing is timed while other work runs on the GPU: where the job names a gate,
        timing waits until its file exists, at most the job's bound. The grading process makes
        it once the compile baseline's warm-up has ended (preludes.py), or, where evaluations
        share the GPU, once the others are paused (gpu_share.py: this process says it waits,
        and later that its timing has ended, by files beside the gate)."""
        gate = self.job.get("timing_gate")
        if not gate:
            return
        self.audit.active = False
        _touch(gate + gpu_share.WAITING_SUFFIX)
        started = time.monotonic()
        deadline = started + float(self.job.get("timing_gate_s", 0.0))
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.002)
        self.audit.active = True
        channel.send("timing_gate", waited_s=round(time.monotonic() - started, 3))

    def _timing_sets(self, shape: dict[str, int], *, keep_on_device: bool) -> list[list[Any]]:
        self.audit.active = False
        sets = timing_input_sets(self.reference, shape, self.device)
        if not (keep_on_device or _room_beside(sets)):
            sets = [[_to_host(x) for x in one_set] for one_set in sets]
        self.audit.active = True
        return sets

    def _run_case(
        self, index: int, case_index: int, case: Any, shape_job: dict[str, Any], model: Any
    ) -> None:

        self.audit.active = False
        inputs = case_inputs(self.reference, shape_job["shape"], case, self.device)
        self.steps.mark("inputs")
        stress = stress_of(self.job, case)
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

        pristine = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        self.steps.mark("pristine")
        _poison_allocator(self.device, inputs)
        self.steps.mark("poison")
        self.audit.active = True
        threads, processes = guards.live_threads(), guards.child_processes()
        launches_before = len(self.launches.names)
        self.steps.mark("watch")
        profile = None
        try:
            if case_index == 0:
                output, profile = guards.profile_call(
                    lambda: model(*inputs), self.device, self.steps.mark
                )
            else:
                output = model(*inputs)
                sync(self.device)
                self.steps.mark("call")
        except BaseException as exc:
            raise runtime_error(exc, index, self.device, self.share, self.whole) from None
        outputs = as_list(output)
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
        self.steps.mark("checks")
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
                raise StageError("scratch_full", describe(exc), index) from None
            self.audit.active = True
            self.steps.mark("handover")

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

    def _time_shape(self, index: int, shape: dict[str, int], drawn: list[list[Any]]) -> None:
        self.steps.start()
        model, reference_model = self._build(index, shape, timing=True)
        self.steps.mark("timing_build")
        sets = [[to_device(x, self.device) for x in one_set] for one_set in drawn]
        self.steps.mark("timing_sets_to_device")
        self.steps.send(shape=index, stage="timing_prepare")
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


def _touch(path: str) -> None:
    with contextlib.suppress(OSError):
        Path(path).touch()


def _to_host(value: Any) -> Any:
    return value.cpu() if isinstance(value, torch.Tensor) else value


# What a shape's timing sets leave free on the device, at least, where they stay there while
# other shapes are timed: room for the next shape's models and outputs.
TIMING_ROOM_MULTIPLE = 3
TIMING_ROOM_RESERVE_BYTES = 2 * 1024**3


def _room_beside(sets: list[list[Any]]) -> bool:
    """Whether sets already drawn on the device can stay there until their shape is timed."""
    if not torch.cuda.is_available():
        return True
    held = tensor_bytes([x for one_set in sets for x in one_set])
    free, _ = torch.cuda.mem_get_info()
    return int(free) >= TIMING_ROOM_MULTIPLE * held + TIMING_ROOM_RESERVE_BYTES


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

    largest = max(
        (x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor)),
        default=1 << 20,
    )
    for _ in range(2):
        block = torch.empty(largest // 4 + 1, dtype=torch.float32, device="cuda")
        block.fill_(float("nan"))
        del block


def _violations(outputs: list[Any], inputs: list[Any], pristine: list[Any]) -> list[str]:
    found = [
        f"output {o} is not a tensor"
        for o, out in enumerate(outputs)
        if not isinstance(out, torch.Tensor)
    ]
    found += aliases(outputs, inputs)
    tensors_in = [(i, x) for i, x in enumerate(inputs) if isinstance(x, torch.Tensor)]
    for (i, x), before in zip(
        tensors_in, [p for p in pristine if isinstance(p, torch.Tensor)], strict=True
    ):
        if not _same_bytes(x, before):
            found.append(f"input {i} was modified in place")
    return found


def _is_alias_violation(violation: str) -> bool:
    return violation.startswith("output ") and " aliases input " in violation


def _same_bytes(a: Any, b: Any) -> bool:
    """Bitwise equality: NaNs compare equal to themselves, and any dtype works (fp8 included,
    which has no comparison kernels of its own)."""

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)))


def _outbox(job: dict[str, Any]) -> Any:
    """The sender of outputs that stay on the device (device_outputs.py), where the job names
    the grading process's socket; None: every case's outputs go through host memory."""
    if job["device"] != "cuda" or not job.get("output_socket"):
        return None

    return Outbox(job["output_socket"], device_output_budget(job))


def run_candidate(job: dict[str, Any]) -> None:
    _Candidate(job).run()
