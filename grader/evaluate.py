"""`evaluate(task, solution, device, options) -> EvalResult`: the grader's one entry point.

1. The candidate child (sandboxed) imports the solution and writes its outputs for every case of
   every shape, visible and unseen, and times itself interleaved with the eager reference.
2. The judge child, started only after the candidate is gone, draws the same inputs, computes
   the reference outputs and compares; expected outputs never exist while the candidate runs.
3. This process turns their reports into gates, per-shape rows, scores and flags. It never
   imports the candidate's code and never parses its stdout.
"""

import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grader import (
    analyses,
    builds,
    caseplan,
    decoy,
    device_outputs,
    feasibility,
    gpu_share,
    preludes,
    prepared,
    warm_judge,
)
from grader.baselines import baseline_key, cache_load, cache_store, needs_timing

# What callers import from here (the grading service, the bench scripts, the tests): each name
# lives in the module that owns it.
from grader.buildstage import (
    build_failure_result,
    build_solution,
    conclude_build_failure,
    target_arch,
)
from grader.caseplan import admit, plan_shapes
from grader.cases import Stress
from grader.compare import tolerance_for
from grader.gates import (
    correctness_gate,
    early_gates,
    final_status,
    generalization_gate,
    index_limited_reasons,
)
from grader.generalization import UnseenShape
from grader.host import new_result
from grader.hostinfo import cache_libraries
from grader.launch import (
    CHILD_CODE,
    LOG_TAIL_BYTES,
    SANDBOXED_ROLES,
    Launcher,
    evaluation_folder,
    guessed_device,
    log_tail,
    phases,
    start_report,
)
from grader.launch import phases as _phases
from grader.options import EvaluateOptions, EvaluationStopped, resolve_device
from grader.outcomes import (
    GraderError,
    beyond_share,
    bytes_compared,
    candidate_facts,
    compile_median,
    device_busy,
    grader_error_from,
    judge_environment,
    largest_elements,
    record_errors,
    scratch_full,
)
from grader.outcomes import scratch_full as _scratch_full
from grader.result import (
    REWARD_TIMEOUT_OR_SANDBOX,
    EvalResult,
    Gate,
    ShapeRow,
)
from grader.scoring import score_performance
from grader.scratch import private_scratch, scratch_root
from grader.taskspec import StressCase, TaskSpec, load_task
from grader.timing import percentile
from grader.verdicts import collect_flags, library_share, shape_failures
from sandboxes.backends import (
    Outcome,
    Running,
    SandboxError,
)

__all__ = [
    "CHILD_CODE",
    "EvaluateOptions",
    "EvaluationStopped",
    "_phases",
    "_scratch_full",
    "build_failure_result",
    "build_solution",
    "evaluate",
    "private_scratch",
    "resolve_device",
    "scratch_root",
]


def evaluate(
    task: TaskSpec | str | os.PathLike[str],
    solution: str | os.PathLike[str],
    device: str = "auto",
    options: EvaluateOptions | None = None,
) -> EvalResult:
    started = time.monotonic()
    options = options or EvaluateOptions()
    _warm_meta_ahead(guessed_device(device))
    spec = (
        task
        if isinstance(task, TaskSpec)
        else load_task(
            task,
            catalogs=options.catalogs,
            analysed=analyses.analysed_from(Path(options.probe_cache), prepared.POOL.analysis),
        )
    )
    solution_path = Path(solution).resolve()
    device = resolve_device(device)
    result = new_result(spec, solution_path, device)
    result.phases["setup"] = round(time.monotonic() - started, 3)
    launcher = Launcher(device, target_arch(device, result.environment, options), options)
    with evaluation_folder(launcher) as (tmp, slot):
        _Evaluation(spec, solution_path, launcher, tmp, result, slot, started).run()
    result.wall_s = round(time.monotonic() - started, 3)
    result.phases["other"] = round(result.wall_s - sum(result.phases.values()), 3)
    return result


# The grading process's warm-up of the meta device (index_limit.warm), once per process.
_META_WARMUP: list[threading.Thread] = []


def _warm_meta_ahead(device: str) -> None:
    """On a GPU, the candidate's job waits for the unseen shapes past the index limit, found on
    the meta device in this process (index_limit.run_after_timing_of), whose first meta run
    imports seconds of torch's symbolic shapes and sympy (level1/88's evaluations spent 2.6-3.8
    s outside their children, H200, 2026-11-28). That first run is made on a thread while this
    process waits for the task's analysis and the probe."""
    if device != "cuda" or _META_WARMUP:
        return

    def warm() -> None:
        from grader.index_limit import warm as warm_index_limit  # it imports triton

        with contextlib.suppress(Exception):  # the job's own run reports nothing either
            warm_index_limit()

    thread = threading.Thread(target=warm, name="meta-warm-up", daemon=True)
    _META_WARMUP.append(thread)
    thread.start()


class _Evaluation:
    def __init__(
        self,
        spec: TaskSpec,
        solution: Path,
        launcher: "Launcher",
        workdir: Path,
        result: EvalResult,
        slot: prepared.Slot | None,
        started: float,
    ) -> None:
        self.spec, self.result, self.slot, self.launcher = spec, result, slot, launcher
        self.started = started  # the evaluation's start (time.monotonic()), its reports' origin
        self.device, self.options = launcher.device, launcher.options
        self.timed = self.device == "cuda"
        self.candidate_dir = workdir / "candidate"
        self.judge_dir = workdir / "judge"
        self.io_dir = self.candidate_dir / "io"
        self.io_dir.mkdir(parents=True, exist_ok=True)
        self.judge_dir.mkdir(exist_ok=True)
        self.solution = Path(shutil.copy(solution, self.candidate_dir / "solution.py"))
        self.solution_source = self.solution.read_bytes()
        self.reference = Path(shutil.copy(spec.reference_path, self.candidate_dir / "reference.py"))
        self.cached_baselines: dict[str, Any] = {}
        self.candidate_graphs: dict[str, bool] = {}
        self.arch = launcher.arch
        self.build_root = Path(self.options.build_cache) if self.options.build_cache else None
        self.build_key = builds.build_key(
            source=self.solution_source,
            torch_version=str(result.environment.get("torch", "")),
            cuda=result.environment.get("cuda"),
            arch=self.arch,
        )
        self.prebuilt: dict[str, dict[str, str]] = {}
        # The decoy test's case and its child's outcome (decoy.py); None where not run.
        self.decoy_case: dict[str, Any] | None = None
        self.decoy_outcome: Outcome | None = None
        self.probe_entry: dict[str, Any] | None = None
        self.broker: device_outputs.Broker | None = None
        self.budget = caseplan.Budget(None, None, None, 0)
        # Two candidate rounds (EvaluateOptions.candidate_rounds): the shapes the round now
        # running grades (None: every shape, one round), the second round's, and its candidate
        # child, started while the first round runs.
        self.round: list[int] | None = None
        self.second_round: list[int] = []
        self.second_child: Running | None = None
        sota = spec.folder / "sota.py" if spec.reference_path.name == "reference.py" else None
        self.sota = (
            Path(shutil.copy(sota, self.judge_dir / "sota.py")) if sota and sota.is_file() else None
        )
        self.judge_reference = Path(
            shutil.copy(spec.reference_path, self.judge_dir / "reference.py")
        )
        # Several evaluations on this GPU at once (gpu_share.py): its lock, pauses and report.
        self.share: gpu_share.GpuShare | None = None
        if self.options.evaluations_per_gpu > 1:
            root = Path(self.options.gpu_share_root) if self.options.gpu_share_root else None
            folder = gpu_share.share_folder(self.device, root)
            self.share = gpu_share.GpuShare(folder, self.options.evaluations_per_gpu)
            result.environment["gpu_share"] = self.share.report.to_dict()

    def run(self) -> None:
        if self._built_and_failed():
            return None
        if self.share is None:
            return self._graded()
        self.share.enter(self.options.stop)
        try:
            return self._graded()
        finally:
            self.share.leave()
            self.result.environment["gpu_share"] = self.share.report.to_dict()

    @property
    def in_second_round(self) -> bool:
        """Whether the round now running is a second candidate round (the unseen shapes)."""
        return bool(self.second_round) and self.round is self.second_round

    @property
    def memory_share(self) -> float:
        """The share of the GPU's memory this evaluation's children are held to: its share beside
        others, or the whole that a grading alone has while it holds the GPU's room whole
        (gpu_share.py, rule 3)."""
        if self.share is not None and self.share.whole:
            return self.options.gpu_memory_whole
        return self.options.gpu_memory_share

    def _graded(self) -> None:
        try:
            self.shapes, seed_source, screening = plan_shapes(
                self.spec,
                device=self.device,
                solution_hash=self.result.solution_hash,
                options=self.options,
                screen=self._screen,
            )
        except GraderError as exc:
            return self._grader_error(exc.gate, exc.reason, exc.detail)
        except SandboxError as exc:
            return self._sandbox_error(str(exc))
        on_device = self.device == "cuda" and self.options.device_outputs
        # Planned on the whole share, as a grading alone plans (the probe's entry is its).
        self.shapes, self.budget = caseplan.apply_budget(
            self.shapes,
            self.probe_entry,
            self._device_output_budget(self.options.gpu_memory_whole) if on_device else None,
        )
        # The second round's child starts before the wait for the GPU's room, so that its
        # imports overlap the wait rather than the first round alone.
        self._plan_rounds(on_device)
        self.result.per_shape = [ShapeRow(shape=s["shape"], seen=s["seen"]) for s in self.shapes]
        self.result.gates["generalization"].detail.update(screening, unseen_seed=seed_source)
        try:
            if self.share is not None:
                self._fit_room(on_device)
            self._open_broker()
            return self._candidate_then_judge()
        finally:
            if self.broker is not None:
                self.broker.close()
            if self.second_child is not None:
                self.second_child.discard()

    def _plan_rounds(self, on_device: bool) -> None:
        """Two candidate rounds where the options ask for them (caseplan.two_rounds): the
        visible shapes first, then the unseen ones in a candidate process of their own, started
        now so that its imports overlap the wait for the room and the first round."""
        seen = [i for i, s in enumerate(self.shapes) if s["seen"]]
        unseen = [i for i, s in enumerate(self.shapes) if not s["seen"]]
        wanted = self.options.candidate_rounds
        if not unseen or wanted == "off":
            return
        if wanted == "auto" and not (
            on_device and caseplan.two_rounds(self.probe_entry, self.shapes, self.budget)
        ):
            return
        self.round, self.second_round = seen, unseen
        with contextlib.suppress(Exception):  # it then starts cold, as any child can
            self.second_child = self.launcher.start("candidate", self.candidate_dir)

    def _open_broker(self) -> None:
        """The socket the candidate's outputs come through on the device (CUDA only)."""
        if self.device == "cuda" and self.options.device_outputs:
            cases = sum(len(s["cases"]) for s in self.shapes)
            self.broker = device_outputs.Broker(self.candidate_dir, max_cases=cases)

    def _device_output_budget(self, share: float | None = None) -> int | None:
        """The outputs the device holds between candidate and judge within `share` of the GPU's
        memory (this evaluation's by default)."""
        total = self._share_total(share if share is not None else self.memory_share)
        if total is None:
            return None  # the children apply the same rule to the GPU's memory
        entry = self.probe_entry or {}
        return device_outputs.device_budget_bytes(
            total,
            entry.get("visible_peak_bytes"),
            caseplan.largest_peak_bytes(entry, self.shapes),
        )

    def _share_total(self, share: float) -> int | None:
        """`share` of the GPU's memory, from the probe's entry (measured on the whole share)."""
        entry = self.probe_entry
        if not entry or entry.get("total_bytes") is None:
            return None
        return int(int(entry["total_bytes"]) * share / self.options.gpu_memory_whole)

    def _fit_room(self, on_device: bool) -> None:
        """Sharing the GPU (gpu_share.py, rule 3): the evaluation grades beside others within its
        share where its plan fits it, and takes the GPU whole where it does not (on a GPU, where
        a probe measured the task). Its plan is the same either way."""
        assert self.share is not None
        total = self._share_total(self.options.gpu_memory_share)
        because = ""
        if self.device == "cuda" and total is not None:
            because = caseplan.beyond_share(
                self.probe_entry, self.shapes, self.budget, total, on_device=on_device
            )
        if because:
            self.share.take_whole(because, self.options.stop)
        elif self.share.whole:  # taken for the task's probe only
            self.share.enter(self.options.stop)

    def _candidate_then_judge(self) -> None:
        try:
            candidate = self._candidate()
        except SandboxError as exc:
            return self._sandbox_error(str(exc))
        if self.broker is not None:
            self.broker.stop()  # the candidate's tree is gone: nothing more comes
        self.result.log = log_tail(candidate.log_path)
        self._store_build(candidate)
        busy = device_busy(candidate) or scratch_full(candidate, self.io_dir)
        if busy is not None:
            return self._grader_error(*busy)
        refused = self.share.report.refused if self.share is not None else None
        if refused is not None:  # its timing may have had company: not the solution's loss
            return self._grader_error("performance", refused, {})
        if self._stopped_early(candidate):
            return None
        self._decoy_test(candidate)
        self._load_baselines()
        self.candidate_graphs = {
            str(m["shape"]): bool(m.get("graphs"))
            for m in candidate.messages
            if m["event"] == "timing_end"
        }
        judge = self._judged(candidate)
        if judge is None:
            return None
        gate = candidate.last("timing_gate")
        warmup = self.result.environment.get("compile_warmup")
        if warmup is not None:
            if gate is not None:
                warmup["candidate_waited_s"] = gate.get("waited_s")
            # The judge timed the model the warm-up compiled rather than compile it again.
            warmup["compiled_model_kept"] = any(
                m.get("compile_warmed") for m in judge.messages if m.get("event") == "baselines"
            )
        if judge.last("done") is None:
            return self._judge_failed(judge)
        if self.second_round:
            second = self._second_round()
            if second is None:
                return None
            candidate, judge = joined(candidate, second[0]), joined(judge, second[1])
            if self._stopped_early(candidate):  # a timeout or a crash, as in one round
                return None
        self._store_baselines(judge)
        self._conclude(candidate, judge)
        return None

    def _second_round(self) -> tuple[Outcome, Outcome] | None:
        """The unseen shapes in a candidate process of their own, once the first round's
        outputs are judged and their device memory released, and judged in turn. The first
        round's candidate is gone before this one starts, and this one before its judge maps
        what it sent, as in one round. The folder is as the first round found it: nothing of
        that round's that the grading reads, the solution and the reference copied afresh.
        None where the evaluation ended here (a grader or sandbox error, recorded)."""
        self.round = self.second_round
        self._candidate_folder_afresh()
        if self.broker is not None:
            self.broker.close()
            self._open_broker()
        try:
            candidate = self._candidate()
        except SandboxError as exc:
            self._sandbox_error(str(exc))
            return None
        if self.broker is not None:
            self.broker.stop()
        self.result.log = (self.result.log + log_tail(candidate.log_path))[-LOG_TAIL_BYTES:]
        busy = device_busy(candidate) or scratch_full(candidate, self.io_dir)
        if busy is not None:
            self._grader_error(*busy)
            return None
        judge = self._judged(candidate)
        if judge is None:
            return None
        if judge.last("done") is None:
            self._judge_failed(judge)
            return None
        return candidate, judge

    def _judged(self, candidate: Outcome) -> Outcome | None:
        """The judge's child on what `candidate` (gone) left: its descriptors handed over, its
        outputs compared. None where the evaluation ended here (a sandbox error, or a pause
        another evaluation's children did not answer), recorded."""
        handoff = self.broker.serve(self.judge_dir) if self.broker is not None else None
        try:
            judge = self._child("judge", self.judge_dir, sandboxed=False)
        except SandboxError as exc:
            self._sandbox_error(str(exc))
            return None
        except gpu_share.PauseRefused as exc:
            self._grader_error("performance", str(exc), {})
            return None
        finally:
            if handoff is not None:
                handoff.close()
        self._record_device_outputs(candidate)
        self._record_judge_cache(judge)
        return judge

    def _candidate_folder_afresh(self) -> None:
        """Before a candidate runs again in the folder another ran in: nothing of the earlier
        run's that the grading reads (its outputs, the decoy's, its timing gate's files), and
        the solution and the reference copied afresh."""
        for leftover in [
            *self.io_dir.iterdir(),
            *self.candidate_dir.glob(preludes.GATE_NAME + "*"),
        ]:
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
        self.solution.write_bytes(self.solution_source)
        shutil.copy(self.spec.reference_path, self.reference)

    def _candidate(self) -> Outcome:
        """The candidate's child. One that ran out of device memory within its share of a shared
        GPU, on shapes planned for the whole of it, is not judged by that run: the evaluation
        takes the GPU whole and runs the candidate again, with nothing of the first run's that
        the grading reads (its outputs, the descriptors it sent, its timing gate's files) and
        the solution and reference copied afresh."""
        outcome = self._child("candidate", self.candidate_dir, sandboxed=True)
        if self.share is None or self.share.whole or not beyond_share(outcome):
            return outcome
        if self.broker is not None:
            self.broker.close()
            self.broker = None
        self._candidate_folder_afresh()
        self.share.take_whole("the candidate ran out of memory within the share", self.options.stop)
        self._open_broker()
        return self._child("candidate", self.candidate_dir, sandboxed=True)

    # ---- the build cache (builds.py) ------------------------------------------------------------

    def _built_and_failed(self) -> bool:
        """Take the build stage's outcome for this source: a compile failure is graded from it
        without a child; built libraries are handed to the candidate."""
        if self.build_root is None:
            return False
        report = builds.cache_lookup(self.build_root, self.build_key)
        if report is None:
            self.result.environment["build"] = {"key": self.build_key, "source": "none"}
            return False
        self.result.environment["build"] = {
            "key": self.build_key,
            "source": "cache",
            "status": report.status,
            "extensions": sorted(report.extensions),
        }
        if report.status == builds.FAILED:
            conclude_build_failure(self.result, report)
            return True
        try:
            self.prebuilt = builds.prebuilt_copy(
                self.build_root, report, self.candidate_dir / "prebuilt"
            )
        except OSError:  # the entry was pruned meanwhile: the candidate builds as before
            self.prebuilt = {}
            self.result.environment["build"]["source"] = "none"
        return False

    def _store_build(self, candidate: Outcome) -> None:
        """What the candidate compiled itself goes into the cache for the next evaluation of the
        same source (repeats, other GPUs of the same kind)."""
        if self.build_root is None:
            return
        compiled = candidate.last("compiled")
        build = self.result.environment["build"]
        build["prebuilt_loaded"] = list((compiled or {}).get("prebuilt_loaded") or [])
        if build["source"] == "cache":
            return
        failed = candidate.last("build_failed")
        if failed is not None:
            report = builds.BuildReport(
                self.build_key, builds.FAILED, "the compiler refused it", str(failed["error"])
            )
            builds.cache_store(self.build_root, report, {})
            return
        extensions = (compiled or {}).get("extensions") or {}
        libraries = builds.collected_libraries(extensions, self.candidate_dir)
        if not extensions or libraries is None:
            return
        report = builds.BuildReport(self.build_key, builds.BUILT, extensions=extensions)
        builds.cache_store(self.build_root, report, libraries)

    # ---- unseen shapes the reference can run (feasibility.py) -----------------------------------

    def _screen(
        self, pool: list[UnseenShape], needed: int
    ) -> tuple[list[UnseenShape], dict[str, Any]]:
        path = Path(self.options.probe_cache)
        key = feasibility.cache_key(
            task_version=self.spec.version_hash,
            device_name=str(self.result.environment.get("gpu") or self.device),
            memory_cap_bytes=self._memory_cap(),
            memory_share=self.options.gpu_memory_whole,
        )
        entry = cache_load(path).get(key)
        kept, rejected, unknown = admit(pool, needed, entry)
        if unknown and self.share is not None:
            # The probe measures the whole share, alone; another evaluation's may have measured
            # the task meanwhile, and this one then grades beside others again.
            self.share.take_whole("the task's probe", self.options.stop)
            entry = cache_load(path).get(key)
            kept, rejected, unknown = admit(pool, needed, entry)
            if not unknown:
                self.share.enter(self.options.stop)
        if unknown:
            entry = feasibility.merge_probe(entry, self._probe(unknown, needed - len(kept), entry))
            with contextlib.suppress(OSError):
                cache_store(path, {key: entry})
            kept, rejected, _ = admit(pool, needed, entry)
        assert entry is not None  # a pool with no cached verdicts always runs the probe
        self.probe_entry = entry
        return kept, {
            "unseen_drawn": len(pool),
            "unseen_rejected": len(rejected),
            "unseen_rejected_example": rejected[0] if rejected else "",
            "memory_budget_gib": round(int(entry["budget_bytes"]) / 2**30, 2),
            "reference_peak_gib": round(int(entry["visible_peak_bytes"]) / 2**30, 3),
        }

    def _memory_cap(self) -> int | None:
        return self.launcher.memory_cap()

    def _probe(
        self, candidates: list[UnseenShape], needed: int, cached: dict[str, Any] | None
    ) -> dict[str, Any]:
        probe_dir = self.judge_dir.parent / "probe"
        probe_dir.mkdir(exist_ok=True)
        reference = Path(shutil.copy(self.spec.reference_path, probe_dir / "reference.py"))
        job = {
            "role": "probe",
            "device": self.device,
            "reference_path": str(reference),
            "visible": [dict(s) for s in self.spec.shapes_for(self.device)],
            "candidates": [dict(c.shape) for c in candidates],
            "needed": needed,
            "memory_cap_bytes": self._memory_cap(),
            "cached": {k: v for k, v in (cached or {}).items() if k != "shapes"},
            "trace_steps": self.options.trace_steps,
        }
        outcome = self._launch(job, probe_dir, sandboxed=False)
        report = outcome.last("probe")
        if report is None:
            visible = {-1: dict(self.spec.shapes_for(self.device)[0])}
            raise grader_error_from(outcome, "probe", self.options.timeout_s, visible)
        return report

    def _baseline_keys(self) -> dict[int, str]:
        torch_version, triton_version = cache_libraries()
        return {
            i: baseline_key(
                task_version=self.spec.version_hash,
                gpu=str(self.result.environment.get("gpu", "unknown")),
                torch_version=torch_version,
                triton_version=triton_version,
                shape=s["shape"],
            )
            for i, s in enumerate(self.shapes)
            if s["seen"]
        }

    def _load_baselines(self) -> None:
        if not self.timed:
            return
        cache = cache_load(Path(self.options.baseline_cache))
        for index, key in self._baseline_keys().items():
            if key in cache:
                self.cached_baselines[str(index)] = cache[key]

    def _store_baselines(self, judge: Outcome) -> None:
        keys, fresh = self._baseline_keys(), {}
        for message in judge.messages:
            if message["event"] == "baselines" and message.get("eager_ms"):
                cached = self.cached_baselines.get(str(message["shape"]))
                eager_ms = percentile(message["eager_ms"], 0.5)
                fresh[keys[message["shape"]]] = {
                    "eager_ms": eager_ms,
                    "compile_ms": compile_median(message, cached, eager_ms),
                    "graphs": bool(message.get("graphs")),
                }
        # A read-only home only costs the next evaluation a recompile.
        with contextlib.suppress(OSError):
            cache_store(Path(self.options.baseline_cache), fresh)

    def _record_device_outputs(self, candidate: Outcome) -> None:
        if self.broker is None:
            return
        sent = candidate.last("device_outputs") or {}
        earlier = self.result.environment.get("device_outputs") or {}  # a first round's
        self.result.environment["device_outputs"] = {
            "descriptors": self.broker.received + int(earlier.get("descriptors") or 0),
            "refused": self.broker.refused + int(earlier.get("refused") or 0),
            "unused_because": str(sent.get("disabled") or earlier.get("unused_because") or "")[
                :300
            ],
        }

    def _record_judge_cache(self, judge: Outcome) -> None:
        """A warm judge's cache after this evaluation: its hits and misses here, what it holds."""
        report = judge.last("judge_cache")
        if report is not None:
            keys = ("hits", "misses", "entries", "held_bytes", "budget_bytes")
            recorded = {k: report.get(k) for k in keys}
            earlier = self.result.environment.get("judge_cache") or {}  # a first round's
            for key in ("hits", "misses"):
                recorded[key] = int(recorded[key] or 0) + int(earlier.get(key) or 0)
            self.result.environment["judge_cache"] = recorded

    def _child(self, role: str, workdir: Path, *, sandboxed: bool) -> Outcome:
        atol, rtol = tolerance_for(self.spec.dtype, self.spec.tolerance)
        job = {
            "role": role,
            "device": self.device,
            "shapes": self.shapes,
            "timed": self.timed,
            "dtype": self.spec.dtype,
            "atol": atol,
            "rtol": rtol,
            "reference_path": str(
                self.reference if role in SANDBOXED_ROLES else self.judge_reference
            ),
            "solution_path": str(self.solution),
            "io_dir": str(self.io_dir),
            "compile_baseline": self.options.compile_baseline,
            "trace_steps": self.options.trace_steps,
            "cached_baselines": self.cached_baselines,
            "sota_path": str(self.sota) if self.sota else None,
            "stress_cases": {
                c.name: stress_for(self.spec, c).to_dict() for c in self.spec.stress_cases
            },
        }
        if role == "judge":
            job["candidate_graphs"] = self.candidate_graphs
            if self.options.warm_judge:
                job["warm"] = True
                job["judge_cache_bytes"] = self.options.judge_cache_bytes
        else:
            job["prebuilt"] = self.prebuilt
        if role == "candidate":
            job["run_after_timing"] = self._run_after_timing()
        if self.round is not None and role in ("candidate", "judge"):
            job["run_shapes"] = self.round
        warmup = self.slot.warmup if self.slot is not None else None
        timed = self.timed and not self.in_second_round  # a second round has no visible shape
        if role == "candidate" and warmup is not None and timed:
            job.update(warmup.gate_job())
        elif role == "candidate" and self.share is not None and timed:
            # Timed only once the GPU's other evaluations are paused (gpu_share.keep_gate).
            job["timing_gate"] = str(self.candidate_dir / preludes.GATE_NAME)
            job["timing_gate_s"] = gpu_share.PAUSE_LIMIT_S + 10.0
        job["decoy"] = None if self.in_second_round else self.decoy_case
        if self.broker is not None:
            folder = self.judge_dir if role == "judge" else self.candidate_dir
            job["output_socket"] = str(folder / device_outputs.SOCKET_NAME)
            job["device_output_budget_bytes"] = self._device_output_budget()
        return self._launch(job, workdir, sandboxed=sandboxed)

    def _launch(self, job: dict[str, Any], workdir: Path, *, sandboxed: bool) -> Outcome:
        self._raise_if_stopped()
        role = job["role"]
        if self.share is not None and not sandboxed:
            job["gpu_share_dir"] = str(self.share.folder)  # its pause points answer there
        job_path = workdir / "job.json"
        shares = {"memory_share": self.memory_share}
        if role == "candidate":
            shares["memory_whole"] = self.options.gpu_memory_whole
        job_path.write_text(json.dumps({**job, "arch": self.arch, **shares}))
        if sandboxed:
            self.result.environment["sandbox"] = self.launcher.sandbox(sandboxed=True).name
        with self._gpu_turn(role, sandboxed):
            launched = time.monotonic()
            if role == "judge" and self.options.warm_judge:
                outcome = warm_judge.WARM.serve(
                    self.launcher.key(),
                    self.launcher.start_warm_judge,
                    str(job_path),
                    self.options.timeout_s,
                    self.options.stop,
                )
            else:
                outcome = self._run_kept(role, workdir, job, job_path)
        spent = phases(role, launched, time.monotonic(), outcome)
        if self.in_second_round:  # a second candidate round's time adds to the first's
            spent = {k: round(self.result.phases.get(k, 0.0) + v, 3) for k, v in spent.items()}
        self.result.phases.update(spent)
        self._raise_if_stopped()
        return outcome

    def _run_kept(self, role: str, workdir: Path, job: dict[str, Any], job_path: Path) -> Outcome:
        """A child of this evaluation; a candidate sharing the GPU has its gate kept meanwhile.
        A candidate's wait at its timing gate is the grader's time, not the solution's."""
        timeout_s = self.options.timeout_s + float(job.get("timing_gate_s", 0.0))
        if self.share is None or role != "candidate" or "timing_gate" not in job:
            return self._run_child(role, workdir, job_path, timeout_s=timeout_s)
        ended = threading.Event()
        keeper = self.share.keep_gate(Path(job["timing_gate"]), lambda: not ended.is_set())
        try:
            return self._run_child(role, workdir, job_path, timeout_s=timeout_s)
        finally:
            ended.set()
            keeper.join()

    @contextlib.contextmanager
    def _gpu_turn(self, role: str, sandboxed: bool) -> Iterator[None]:
        """Sharing the GPU (gpu_share.py): the solution's code runs only under the candidate
        lock; a judge that times baselines holds it too, with the other evaluations paused."""
        share = self.share
        if share is None:
            yield
        elif sandboxed:
            with share.candidate_turn(self.options.stop):
                yield
        elif role == "judge" and self._judge_times_baselines():
            with share.candidate_turn(self.options.stop), share.paused_others("judge baselines"):
                yield
        else:
            yield

    def _judge_times_baselines(self) -> bool:
        if not self.timed or self.in_second_round:
            return False
        return any(
            needs_timing(
                self.cached_baselines.get(str(index)),
                graphs=self.candidate_graphs.get(str(index), True),
                want_compile=self.options.compile_baseline,
                sota=self.sota is not None,
            )
            for index, shape in enumerate(self.shapes)
            if shape["seen"]
        )

    def _run_after_timing(self) -> list[int]:
        """The unseen shapes the candidate runs last (index_limit.py). Off the GPU, or where
        every shape is seen, none: nothing runs on the meta device here, and the meta warm-up
        is not waited for."""
        if self.device != "cuda" or all(s["seen"] for s in self.shapes):
            return []
        # Imported here: it runs the reference on the meta device, which imports triton.
        from grader.index_limit import run_after_timing_of

        for thread in _META_WARMUP:
            thread.join()
        return run_after_timing_of(self.spec.reference_path, self.shapes, self.device)

    def _run_child(self, role: str, workdir: Path, job_path: Path, *, timeout_s: float) -> Outcome:
        """A child of this evaluation alone: the slot's, prepared, or one started cold."""
        warmup = self.slot.warmup if self.slot is not None else None
        if warmup is not None and role == "judge":
            warmup.settle()  # the judge's child is free of its warm-up, or gone
            self.result.environment["compile_warmup"] = warmup.report
        running = self.slot.take(role) if self.slot is not None else None
        if running is None and role == "candidate":
            # The one started for the second round (_plan_rounds), wherever it is the first
            # candidate without a prepared one: every such child is the harness, waiting.
            running, self.second_child = self.second_child, None
        if running is not None and running.proc.poll() is not None:
            # It died while waiting (the host's OOM killer, say): nothing of this job's doing,
            # so the job starts cold rather than be judged by a child that never ran it.
            running.discard()
            running = None
        if running is None:
            return self.launcher.run(role, workdir)
        running.hand(str(job_path))
        # It ends by itself before the evaluation goes on, as a cold child does: what a
        # candidate leaves running is seen, and a child's GPU memory is back before the
        # next child needs it (a killed one's comes back only a while after it is reaped).
        outcome = running.wait(timeout_s, self.options.stop)
        starts = self.result.environment.setdefault("child_start", {})
        starts[role] = start_report(running, self.started)
        return outcome

    def _raise_if_stopped(self) -> None:
        stop = self.options.stop
        if stop is not None and stop.is_set():
            raise EvaluationStopped("the caller stopped the evaluation")

    def _stopped_early(self, outcome: Outcome) -> bool:
        """Compile, construct, crash and timeout outcomes on the visible shapes (gates.py)."""
        facts = candidate_facts(outcome, self.shapes)
        decision = early_gates(facts, timeout_s=self.options.timeout_s)
        self.result.gates.update(decision.gates)
        if decision.stop is None:
            return False
        self._finish(decision.stop.status, decision.stop.reward)
        return True

    def _decoy_test(self, candidate: Outcome) -> None:
        """The solution once more on one visible case with its own kernels silenced, in a
        sandboxed child of its own (decoy.py); the judge compares what it wrote."""
        wanted = self.options.decoy_test
        if not (self.timed if wanted is None else wanted):
            return
        self.decoy_case = decoy.case_to_test(self.shapes, candidate.messages)
        if self.decoy_case is None:
            return
        decoy.clear_output(self.io_dir)
        try:
            self.decoy_outcome = self._child("decoy", self.candidate_dir, sandboxed=True)
        except SandboxError:
            self.decoy_outcome = None

    def _conclude(self, candidate: Outcome, judge: Outcome) -> None:
        rows, gates = self.result.per_shape, self.result.gates
        for index, reason in shape_failures(self.shapes, candidate, judge).items():
            rows[index].correct, rows[index].reason = (reason is None), (reason or "")
        record_errors(rows, judge)
        self.result.environment.update(judge_environment(judge))
        seen = [r for r in rows if r.seen]
        limited = self._index_limited(rows, judge)
        unseen = [r for r in rows if not r.seen and r not in limited]
        weights = sorted({m["weights"] for m in candidate.messages if m["event"] == "constructed"})
        atol, rtol = tolerance_for(self.spec.dtype, self.spec.tolerance)
        detail = {
            "weights": weights,
            "atol": atol,
            "rtol": rtol,
            "cases_per_shape": len(self.shapes[0]["cases"]),
            "candidate_rounds": 2 if self.second_round else 1,
            **self.budget.to_detail(),
            **bytes_compared(judge),
            **(
                {"stress_cases": [c.name for c in self.spec.stress_cases]}
                if self.spec.stress_cases
                else {}
            ),
        }
        gates["correctness"] = correctness_gate(seen, detail)
        seen_correct = gates["correctness"].passed is True
        self._generalization_gate(unseen, seen_correct=seen_correct)
        if self.timed and seen_correct:
            score_performance(
                self.result, self.spec, self.shapes, candidate, judge, self.cached_baselines
            )
        elif not self.timed:
            gates["performance"] = Gate(None, "CPU timings are not ranked")
        self.result.summary["library_share"] = library_share(candidate) if self.timed else None
        found = decoy.finding(
            self.decoy_case,
            self.decoy_outcome.messages if self.decoy_outcome is not None else None,
            judge.messages,
            self.shapes[self.decoy_case["shape"]]["shape"] if self.decoy_case else None,
        )
        self.result.flags = collect_flags(self.spec, self.result, candidate, judge, found)
        self._final_status()

    def _index_limited(self, rows: list[ShapeRow], judge: Outcome) -> list[ShapeRow]:
        """Failed unseen shapes past the 32-bit index limit where every visible shape is below
        it (gates.index_limited_reasons): reported as that limit, not counted as overfit."""
        reasons = index_limited_reasons(self.shapes, rows, largest_elements(judge))
        for index, reason in reasons.items():
            rows[index].reason = reason
        limited = [rows[i] for i in reasons]
        if limited:
            self.result.gates["generalization"].detail["index_limited"] = [r.shape for r in limited]
        return limited

    def _generalization_gate(self, unseen: list[ShapeRow], *, seen_correct: bool) -> None:
        decided = generalization_gate(
            unseen,
            self.result.gates["generalization"].detail,
            seen_correct=seen_correct,
            fixed_reason=self.spec.fixed_reason,
        )
        self.result.gates["generalization"] = decided.gate
        if decided.pass_rate is not None:
            self.result.summary["generalization_pass_rate"] = decided.pass_rate
        if decided.overfit is not None:
            self.result.flags.append(decided.overfit)

    def _final_status(self) -> None:
        stop = final_status(
            self.result.gates,
            timed=self.timed,
            speedup_vs_eager=self.result.summary.get("speedup_vs_eager"),
        )
        self._finish(stop.status, stop.reward)

    def _finish(self, status: str, reward: float | None) -> None:
        self.result.status, self.result.reward = status, reward

    def _sandbox_error(self, message: str) -> None:
        self.result.gates["compile"] = Gate(None, f"sandbox error: {message}")
        self._finish("error", REWARD_TIMEOUT_OR_SANDBOX)

    def _judge_failed(self, outcome: Outcome) -> None:
        shapes = {i: s["shape"] for i, s in enumerate(self.shapes)}
        error = grader_error_from(outcome, "judge", self.options.timeout_s, shapes)
        index = (outcome.last("grader_error") or {}).get("shape", -1)
        unseen = index in shapes and not self.shapes[index]["seen"]
        gate = "generalization" if unseen else "correctness"
        self._grader_error(gate, error.reason, error.detail)

    def _grader_error(self, gate: str, reason: str, detail: dict[str, Any]) -> None:
        """The grader's own failure: status "error", never counted against the solution."""
        self.result.gates[gate] = Gate(None, reason, detail)
        self._finish("error", REWARD_TIMEOUT_OR_SANDBOX)


def joined(first: Outcome, second: Outcome) -> Outcome:
    """Two candidate rounds' outcomes (or their judges') read as one: every message of both,
    in order, and what either process left or met."""
    return Outcome(
        second.returncode,
        first.timed_out or second.timed_out,
        first.wall_s + second.wall_s,
        messages=[*first.messages, *second.messages],
        log_path=second.log_path,
        leftover_processes=first.leftover_processes + second.leftover_processes,
        memory_exceeded=first.memory_exceeded or second.memory_exceeded,
    )


def stress_for(spec: TaskSpec, case: StressCase) -> Stress:
    """A stress case as the children apply it: its own tolerance over the dtype's defaults
    where it names one, else the task's."""
    atol, rtol = tolerance_for(spec.dtype, case.tolerance or spec.tolerance)
    return Stress(case.name, dict(case.input_scales), dict(case.state_scales), atol, rtol)
