"""Entry point of a grader child process: `python -m evaluator.engine.child JOB.json`.

role "candidate" (sandboxed) imports the solution, builds ModelNew with the reference weights,
runs it on every case of every shape, writes its outputs, and times it interleaved with the
eager reference. role "judge" runs afterwards, never imports the solution, draws the same inputs,
computes the reference outputs and compares. Progress goes over the private channel only.
"""

import copy
import json
import sys
import traceback
from pathlib import Path
from typing import Any

INIT_SEED = 42
EAGER_DISAGREEMENT_RATIO = 2.0


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    from evaluator.engine import channel

    try:
        if job["role"] == "judge":
            _judge(job)
        else:
            _Candidate(job).run()
    except _StageError as exc:
        channel.send("error", stage=exc.stage, message=exc.message, shape=exc.shape_index)
        return 3
    channel.send("done")
    return 0


class _StageError(Exception):
    def __init__(self, stage: str, message: str, shape_index: int | None = None) -> None:
        super().__init__(message)
        self.stage, self.message, self.shape_index = stage, message, shape_index


def _describe(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)[-12:])[-4000:]


def _as_list(output: Any) -> list[Any]:
    return list(output) if isinstance(output, (list, tuple)) else [output]


def _cases(shape_job: dict[str, Any]) -> list[Any]:
    from evaluator.engine.cases import Case

    return [Case(c["seed"], c["distribution"]) for c in shape_job["cases"]]


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


class _Candidate:
    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.device: str = job["device"]
        self.io_dir = Path(job["io_dir"])

    def run(self) -> None:
        from evaluator.engine import channel, guards
        from evaluator.engine.modules import load_module

        channel.send("started")
        self.tamper = guards.TamperCheck.take()
        self.launches = guards.TritonLaunches()
        self.audit = guards.Audit(guards.default_allowed_roots(self.io_dir.parent))
        self.reference = load_module(Path(self.job["reference_path"]), "reference")
        self.audit.active = True
        source = Path(self.job["solution_path"]).read_text(encoding="utf-8", errors="replace")
        try:
            self.solution = load_module(Path(self.job["solution_path"]), "solution")
        except BaseException as exc:
            raise _StageError("compile", _describe(exc)) from None
        if not callable(getattr(self.solution, "ModelNew", None)):
            raise _StageError("compile", "the solution does not define a ModelNew class")
        channel.send("compiled", fallback_lines=guards.exception_fallbacks(source))
        self._report_tampering("import")
        self.to_time: list[tuple[int, Any, Any, list[list[Any]]]] = []
        for index, shape_job in enumerate(self.job["shapes"]):
            try:
                self._run_shape(index, shape_job)
            except _StageError as exc:
                if shape_job["seen"]:
                    raise
                # An unseen shape that breaks the solution fails generalization, not the run.
                channel.send("shape_error", shape=index, stage=exc.stage, message=exc.message)
        for index, model, reference_model, sets in self.to_time:
            try:
                self._time_shape(index, model, reference_model, sets)
            except Exception as exc:
                raise _StageError("runtime", _describe(exc), index) from None
        self._report_tampering("run")
        channel.send("audit", files=self.audit.file_paths, network=self.audit.network)

    def _report_tampering(self, stage: str) -> None:
        from evaluator.engine import channel

        changed = self.tamper.changed()
        if changed:
            channel.send("tampered", stage=stage, names=changed)

    def _build(self, index: int, shape: dict[str, int]) -> tuple[Any, Any]:
        import torch

        from evaluator.engine import channel
        from evaluator.engine.modules import apply_shape

        apply_shape(self.reference, shape)
        apply_shape(self.solution, {k: v for k, v in shape.items() if hasattr(self.solution, k)})
        init_inputs = self.reference.get_init_inputs()
        torch.manual_seed(INIT_SEED)
        reference_model = self.reference.Model(*init_inputs).to(self.device).eval()
        try:
            torch.manual_seed(INIT_SEED)
            model = self.solution.ModelNew(*init_inputs).to(self.device).eval()
        except BaseException as exc:
            raise _StageError("construct", _describe(exc), index) from None
        weights = _copy_weights(reference_model, model)
        channel.send("constructed", shape=index, weights=weights)
        return model, reference_model

    def _run_shape(self, index: int, shape_job: dict[str, Any]) -> None:
        import torch

        from evaluator.engine import channel

        shape = shape_job["shape"]
        model, reference_model = self._build(index, shape)
        for case_index, case in enumerate(_cases(shape_job)):
            with torch.no_grad():
                self._run_case(index, case_index, case, shape_job, model)
            channel.send("case_done", shape=index, case=case_index)
        if self.job["timed"] and shape_job["seen"]:
            self.to_time.append((index, model, reference_model, self._timing_sets(shape)))

    def _timing_sets(self, shape: dict[str, int]) -> list[list[Any]]:
        """Drawn before any timing starts: a failed graph capture of the solution can leave the
        CUDA generator unusable for the rest of the process."""
        from evaluator.engine.cases import timing_input_sets

        self.audit.active = False
        sets = timing_input_sets(self.reference, shape, self.device)
        self.audit.active = True
        return sets

    def _run_case(
        self, index: int, case_index: int, case: Any, shape_job: dict[str, Any], model: Any
    ) -> None:
        import torch

        from evaluator.engine import channel, guards
        from evaluator.engine.cases import case_inputs

        self.audit.active = False
        inputs = case_inputs(self.reference, shape_job["shape"], case, self.device)
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
            raise _StageError("runtime", _describe(exc), index) from None
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
            saved = [_portable(x) for x in outputs]
            torch.save(saved, self.io_dir / f"out_{index}_{case_index}.pt")
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

    def _time_shape(
        self, index: int, model: Any, reference_model: Any, sets: list[list[Any]]
    ) -> None:
        import torch

        from evaluator.engine import channel
        from evaluator.engine.cases import TIMING_INPUT_SETS
        from evaluator.engine.timing import side_stream_check, time_interleaved

        channel.send("timing_begin", shape=index)
        with torch.no_grad():
            timings = time_interleaved(
                {
                    "candidate": lambda k: model(*sets[k]),
                    "eager": lambda k: reference_model(*sets[k]),
                },
                input_sets=TIMING_INPUT_SETS,
                device=self.device,
            )
        candidate_ms = timings.ms.get("candidate", [])
        if candidate_ms and not timings.graphs:
            with torch.no_grad():
                drained = side_stream_check(
                    lambda k: model(*sets[k]), input_sets=TIMING_INPUT_SETS, stream_ms=candidate_ms
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


def _portable(output: Any) -> Any:
    """On the CPU, and without the rest of a larger storage (an input it views, say), which
    torch.save would otherwise write out whole."""
    tensor = output.detach().cpu()
    if tensor.untyped_storage().nbytes() > tensor.numel() * tensor.element_size():
        return tensor.clone()
    return tensor


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


def _judge(job: dict[str, Any]) -> None:
    import torch

    from evaluator.engine import channel
    from evaluator.engine.cases import case_inputs, timing_input_sets
    from evaluator.engine.compare import compare_outputs, precision_report
    from evaluator.engine.modules import apply_shape, load_module

    device, io_dir = job["device"], Path(job["io_dir"])
    atol, rtol = job["atol"], job["rtol"]
    reference = load_module(Path(job["reference_path"]), "reference")
    channel.send("environment", **_device_environment(device))
    baselines: list[tuple[int, Any, list[list[Any]]]] = []
    for index, shape_job in enumerate(job["shapes"]):
        apply_shape(reference, shape_job["shape"])
        torch.manual_seed(INIT_SEED)
        model = reference.Model(*reference.get_init_inputs()).to(device).eval()
        for case_index, case in enumerate(_cases(shape_job)):
            inputs = case_inputs(reference, shape_job["shape"], case, device)
            judged_inputs = [_clone(x) for x in inputs]
            with torch.no_grad():
                expected = _as_list(model(*judged_inputs))
            reference_aliases = _aliases(expected, judged_inputs)
            if case.distribution != "problem" and not _all_finite(expected):
                channel.send(
                    "judged",
                    shape=index,
                    case=case_index,
                    skipped=True,
                    reason=f"reference is not finite on {case.distribution} inputs",
                    reference_aliases=reference_aliases,
                )
                continue
            actual = _load_candidate_output(
                io_dir / f"out_{index}_{case_index}.pt", expected, device
            )
            if actual is None:
                channel.send(
                    "judged",
                    shape=index,
                    case=case_index,
                    correct=False,
                    reason="no output was written",
                )
                continue
            verdict = compare_outputs(expected, actual, atol=atol, rtol=rtol)
            message: dict[str, Any] = {
                "shape": index,
                "case": case_index,
                "correct": verdict.correct,
                "reason": verdict.reason,
                "max_abs_err": verdict.max_abs_err,
                "max_rel_err": verdict.max_rel_err,
                "reference_aliases": reference_aliases,
            }
            if verdict.correct and case_index == 0 and job["dtype"] == "float32":
                message["precision"] = precision_report(model, inputs, expected, actual)
            channel.send("judged", **message)
        if job["timed"] and shape_job["seen"]:
            sets = timing_input_sets(reference, shape_job["shape"], "cuda")
            baselines.append((index, model, sets))
    for index, model, sets in baselines:
        _judge_baselines(job, index, model, sets)


def _judge_baselines(job: dict[str, Any], index: int, model: Any, sets: list[list[Any]]) -> None:
    """Eager time measured here, in a process the candidate never touched."""
    import torch

    from evaluator.engine import channel
    from evaluator.engine.cases import TIMING_INPUT_SETS
    from evaluator.engine.timing import time_interleaved

    calls = {"eager": lambda k: model(*sets[k])}
    cached = job.get("cached_baselines", {}).get(str(index))
    if job.get("compile_baseline") and cached is None:
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
        timings = time_interleaved(calls, input_sets=TIMING_INPUT_SETS, device="cuda")
    channel.send("baselines", shape=index, **{f"{k}_ms": v for k, v in timings.ms.items()})


def _sota_module(job: dict[str, Any]) -> Any:
    """The task's sota.py, when it ships one and its library path is available here."""
    from evaluator.engine import channel
    from evaluator.engine.modules import load_module

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


def _load_candidate_output(path: Path, expected: list[Any], device: str) -> list[Any] | None:
    import torch

    expected_bytes = sum(t.numel() * t.element_size() for t in expected)
    try:
        if path.stat().st_size > 4 * expected_bytes + (1 << 20):
            return None
        loaded = torch.load(path, map_location=device, weights_only=True)
    except Exception:
        return None
    return loaded if isinstance(loaded, list) else None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
