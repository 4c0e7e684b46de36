"""`evaluate(task, solution, device, options) -> EvalResult`: the grader's one entry point.

1. The candidate child (sandboxed) imports the solution and writes its outputs for every case of
   every shape, visible and unseen, and times itself interleaved with the eager reference.
2. The judge child, started only after the candidate is gone, draws the same inputs, computes
   the reference outputs and compares; expected outputs never exist while the candidate runs.
3. This process turns their reports into gates, per-shape rows, scores and flags. It never
   imports the candidate's code and never parses its stdout.
"""

import contextlib
import hashlib
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader import builds, caseplan, decoy, device_outputs, environment, feasibility, prepared
from grader.baselines import baseline_key, cache_load, cache_store
from grader.cases import Stress, cases_for
from grader.compare import tolerance_for
from grader.feasibility import POOL_FACTOR
from grader.generalization import INDEX_LIMIT_ELEMENTS, UnseenShape, index_limited
from grader.result import (
    REWARD_INCORRECT,
    REWARD_NOT_COMPILED,
    REWARD_NOT_CONSTRUCTED,
    REWARD_RUNTIME_FAILURE,
    REWARD_TIMEOUT_OR_SANDBOX,
    EvalResult,
    Gate,
    ShapeRow,
)
from grader.scoring import score_performance
from grader.taskspec import StressCase, TaskSpec, load_task
from grader.timing import percentile
from grader.verdicts import collect_flags, library_share, shape_failures
from sandboxes.backends import (
    Limits,
    Outcome,
    ProcessSandbox,
    Running,
    SandboxError,
    sandbox_for,
    scrubbed_env,
    unsafe_switch_on,
)

ENGINE_ROOT = Path(__file__).resolve().parents[1]
# What a grader child imports: bound read-only into its sandbox, never the whole checkout.
CHILD_CODE = (ENGINE_ROOT / "grader", ENGINE_ROOT / "sandboxes")
LOG_TAIL_BYTES = 64 * 1024
# The roles that run the solution's code: only ever in the isolating sandbox.
SANDBOXED_ROLES = ("candidate", "decoy")
BASE_SEED = 0
SHM_DIR = "/dev/shm"  # noqa: S108 - created private per evaluation by TemporaryDirectory
SHM_MIN_FREE_BYTES = 32 * 1024**3
# A scratch file system with less than this free (or 2% of its size) counts as full.
SCRATCH_FULL_BYTES = 1024**3


@dataclass
class EvaluateOptions:
    timeout_s: float = 300.0
    memory_bytes: int | None = 16 * 1024**3
    sandbox: str = "auto"
    unseen_count: int = 5
    # The grading service's secret; without one, unseen shapes are drawn from fresh randomness.
    # Defaults here, as for the paths below, are the environment's (environment.py); a
    # deployment passes its settings' values.
    hidden_seed: str | None = field(default_factory=environment.hidden_seed)
    # Where outputs pass from the candidate to the judge (None: /dev/shm when roomy, else the
    # system's temporary folder).
    scratch_dir: str | None = field(default_factory=environment.scratch_dir)
    # The cached eager and torch.compile timings, and the cached probes of the reference.
    baseline_cache: str = field(default_factory=environment.baseline_cache)
    probe_cache: str = field(default_factory=environment.probe_cache)
    # The docker sandbox's image (its default tag where None).
    sandbox_image: str | None = field(default_factory=environment.sandbox_image)
    # The catalogues a task given by slug is looked up in.
    catalogs: tuple[str, ...] = field(default_factory=environment.catalog_dirs)
    compile_baseline: bool = True
    # The operator's development switch (sandbox.UNSAFE_SWITCH, read when the options are made):
    # without it the candidate runs only in a sandbox that isolates, and grading stops with an
    # error where none works.
    allow_unisolated: bool = field(default_factory=unsafe_switch_on)
    # The share of the GPU's memory one evaluation may use, where a host runs several at once on
    # one GPU: the reference's memory budget is taken from it and each child is held to it.
    gpu_memory_share: float = 1.0
    # The build cache (builds.py) shared with the build stage; None: every evaluation builds.
    build_cache: str | None = None
    # TORCH_CUDA_ARCH_LIST for builds; None: the GPU's own (9.0a on Hopper).
    cuda_arch: str | None = None
    # Children started ahead (prepared.py): each evaluation takes the ones the last one left
    # ready and starts the next. For a process that grades one evaluation after another (a GPU
    # worker, grade_suite); a one-off evaluation would only start children it never uses.
    prepared: bool = False
    # How many evaluations' children are kept started ahead (prepared.Pool).
    prepared_ahead: int = 2
    # On CUDA, outputs pass from the candidate to the judge in exported device buffers
    # (device_outputs.py) within a budget of the GPU's memory; off, or past the budget, through
    # host memory (outputs.py).
    device_outputs: bool = True
    # Set from another thread to end the evaluation without a verdict (EvaluationStopped): the
    # running child is killed within a second, and no other starts. The grading service sets it
    # when another worker has taken the evaluation over.
    stop: threading.Event | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.gpu_memory_share <= 1.0:
            raise ValueError(f"gpu_memory_share must be in (0, 1], not {self.gpu_memory_share}")
        if self.prepared_ahead < 1:
            raise ValueError(f"prepared_ahead must be at least 1, not {self.prepared_ahead}")


def _isolating_sandbox(options: EvaluateOptions) -> ProcessSandbox:
    """The sandbox the options name for the candidate's and the build's children."""
    return sandbox_for(
        options.sandbox, allow_unisolated=options.allow_unisolated, image=options.sandbox_image
    )


class EvaluationStopped(Exception):
    """The caller set `EvaluateOptions.stop`: the evaluation ended without a verdict."""


def resolve_device(device: str) -> str:
    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cuda", "cpu"):
        raise ValueError(f"device must be cuda, cpu or auto, not {device!r}")
    return device


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def evaluate(
    task: TaskSpec | str | os.PathLike[str],
    solution: str | os.PathLike[str],
    device: str = "auto",
    options: EvaluateOptions | None = None,
) -> EvalResult:
    started = time.monotonic()
    options = options or EvaluateOptions()
    spec = task if isinstance(task, TaskSpec) else load_task(task, catalogs=options.catalogs)
    solution_path = Path(solution).resolve()
    device = resolve_device(device)
    result = _new_result(spec, solution_path, device)
    result.phases["setup"] = round(time.monotonic() - started, 3)
    launcher = _Launcher(device, target_arch(device, result.environment, options), options)
    with _scratch(launcher) as (tmp, slot):
        _Evaluation(spec, solution_path, launcher, tmp, result, slot).run()
    result.wall_s = round(time.monotonic() - started, 3)
    result.phases["other"] = round(result.wall_s - sum(result.phases.values()), 3)
    return result


def _new_result(spec: TaskSpec, solution: Path, device: str) -> EvalResult:
    return EvalResult(
        task=spec.to_dict(),
        task_version=spec.version_hash,
        solution_hash=file_sha256(solution),
        device=device,
        environment=host_environment(device),
    )


def build_failure_result(
    task: TaskSpec | str | os.PathLike[str],
    solution: str | os.PathLike[str],
    device: str,
    report: builds.BuildReport,
) -> EvalResult:
    """The verdict on a solution whose build failed in the build stage: no GPU was used. The
    environment names the GPU kind it was meant for (`device`) and this build host."""
    spec = task if isinstance(task, TaskSpec) else load_task(task)
    device = resolve_device(device)
    result = _new_result(spec, Path(solution).resolve(), "cpu")
    result.device = device
    result.environment["build"] = {
        "key": report.key,
        "source": "build stage",
        "status": report.status,
    }
    result.phases["build"] = report.build_s
    conclude_build_failure(result, report)
    result.wall_s = report.build_s
    return result


def scratch_root(configured: str | None = None) -> str | None:
    """Where outputs travel from the candidate to the judge: `configured`, else memory-backed
    when it is roomy.

    A GPU task's outputs run to gigabytes per evaluation; /dev/shm spares the disk, but
    containers often give it only 64 MB, so it is used only with room to spare.
    """
    if configured:
        return configured
    try:
        usage = shutil.disk_usage(SHM_DIR)
    except OSError:
        return None
    writable = os.access(SHM_DIR, os.W_OK)
    return SHM_DIR if writable and usage.free > SHM_MIN_FREE_BYTES else None


@contextlib.contextmanager
def _scratch(launcher: "_Launcher") -> Iterator[tuple[Path, prepared.Slot | None]]:
    """The evaluation's private folder: a prepared slot's, with its children waiting in it, or
    a new one where children start cold."""
    prepared.wait_removed()
    slot = _prepared_slot(launcher) if launcher.options.prepared else None
    if slot is None:
        with private_scratch("arena-eval", root=scratch_root(launcher.options.scratch_dir)) as tmp:
            yield tmp, None
        return
    try:
        yield slot.folder, slot
    finally:
        prepared.retire_slot(slot)


def _prepared_slot(launcher: "_Launcher") -> prepared.Slot | None:
    """None where the sandbox cannot start children ahead (docker) or cannot start at all: the
    evaluation then starts them cold, and reports a sandbox that fails as it always has."""
    try:
        if not launcher.sandbox(sandboxed=True).preparable:
            return None
        return prepared.POOL.take(
            launcher.key(),
            launcher.new_scratch,
            launcher.start,
            launcher.options.prepared_ahead,
        )
    except SandboxError:
        return None


class _Launcher:
    """How a grader child is started for this evaluation's device, architecture and options:
    cold, or ahead of its job for a prepared slot (the same sandbox, limits and environment)."""

    def __init__(self, device: str, arch: str, options: EvaluateOptions) -> None:
        self.device, self.arch, self.options = device, arch, options
        self._isolating: ProcessSandbox | None = None

    def key(self) -> tuple[object, ...]:
        return (
            self.device,
            self.arch,
            self.sandbox(sandboxed=True).name,
            self.memory_cap(),
            sys.executable,
            self.options.scratch_dir,
        )

    def new_scratch(self) -> Path:
        return new_private_folder("arena-eval", root=scratch_root(self.options.scratch_dir))

    def memory_cap(self) -> int | None:
        # A CUDA context reserves far more address space than it uses; RLIMIT_AS would kill it.
        return self.options.memory_bytes if self.device == "cpu" else None

    def sandbox(self, *, sandboxed: bool) -> ProcessSandbox:
        # The judge and the probe run only our child and the task's reference, never the
        # candidate's code.
        if not sandboxed:
            return ProcessSandbox()
        if self._isolating is None:
            options = self.options
            self._isolating = _isolating_sandbox(options)
        return self._isolating

    def env(self, workdir: Path) -> dict[str, str]:
        extra = {
            "PYTHONPATH": str(ENGINE_ROOT),
            "TORCH_EXTENSIONS_DIR": str(workdir / "ext"),
            "TRITON_CACHE_DIR": str(workdir / "triton"),
        }
        if self.device == "cpu":
            extra["TRITON_INTERPRET"] = "1"
            extra["CUDA_VISIBLE_DEVICES"] = ""
        if self.arch:
            extra["TORCH_CUDA_ARCH_LIST"] = self.arch
        return scrubbed_env(extra, home=workdir)

    def start(self, role: str, workdir: Path) -> Running:
        """A child started ahead of its job, for a prepared slot (preparable backends only)."""
        return self.sandbox(sandboxed=role == "candidate").start(
            [sys.executable, "-m", "grader.child", "--prepared"],
            workdir=workdir,
            env=self.env(workdir),
            limits=self.limits(),
            readable=CHILD_CODE,
            prepared=True,
        )

    def run(self, role: str, workdir: Path) -> Outcome:
        """A child started for its job (workdir/job.json) and supervised to its end; one the
        caller stops is killed then. A container (docker: not preparable) runs through the
        backend's own run(), to its end."""
        sandbox = self.sandbox(sandboxed=role in SANDBOXED_ROLES)
        argv = [sys.executable, "-m", "grader.child", str(workdir / "job.json")]
        env, limits = self.env(workdir), self.limits()
        if not sandbox.preparable:
            return sandbox.run(argv, workdir=workdir, env=env, limits=limits, readable=CHILD_CODE)
        running = sandbox.start(argv, workdir=workdir, env=env, limits=limits, readable=CHILD_CODE)
        return running.wait(self.options.timeout_s, self.options.stop)

    def limits(self) -> Limits:
        return Limits(timeout_s=self.options.timeout_s, memory_bytes=self.memory_cap())


@contextlib.contextmanager
def private_scratch(prefix: str, *, root: str | None = None) -> Iterator[Path]:
    """A private folder, removed when the block ends. Its name holds this process's pid, so that
    a later evaluation removes what a killed worker left (candidate outputs, built extensions)."""
    folder = Path(root or tempfile.gettempdir())
    _sweep_stale_scratch(folder, prefix)
    with tempfile.TemporaryDirectory(prefix=_owned_prefix(prefix), dir=folder) as tmp:
        yield Path(tmp)


def new_private_folder(prefix: str, *, root: str | None = None) -> Path:
    """A folder named as private_scratch names its own, for the caller to remove (a prepared
    slot's, prepared.discard_slot)."""
    folder = Path(root or tempfile.gettempdir())
    _sweep_stale_scratch(folder, prefix)
    return Path(tempfile.mkdtemp(prefix=_owned_prefix(prefix), dir=folder))


def _owned_prefix(prefix: str) -> str:
    # The pid in the name lets _sweep_stale_scratch remove what a killed worker left.
    return f"{prefix}-{os.getpid()}-"


def _sweep_stale_scratch(folder: Path, prefix: str) -> None:
    for stale in folder.glob(f"{prefix}-*-*"):
        owner = stale.name.removeprefix(f"{prefix}-").split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(stale, ignore_errors=True)


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
    from grader.generalization import draw_unseen_shapes, grading_order, hidden_seed_material

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


class _Evaluation:
    def __init__(
        self,
        spec: TaskSpec,
        solution: Path,
        launcher: "_Launcher",
        workdir: Path,
        result: EvalResult,
        slot: prepared.Slot | None = None,
    ) -> None:
        self.spec, self.result, self.slot, self.launcher = spec, result, slot, launcher
        self.device, self.options = launcher.device, launcher.options
        self.timed = self.device == "cuda"
        self.candidate_dir = workdir / "candidate"
        self.judge_dir = workdir / "judge"
        self.io_dir = self.candidate_dir / "io"
        self.io_dir.mkdir(parents=True, exist_ok=True)
        self.judge_dir.mkdir(exist_ok=True)
        self.solution = Path(shutil.copy(solution, self.candidate_dir / "solution.py"))
        self.reference = Path(shutil.copy(spec.reference_path, self.candidate_dir / "reference.py"))
        self.cached_baselines: dict[str, Any] = {}
        self.candidate_graphs: dict[str, bool] = {}
        self.arch = launcher.arch
        self.build_root = Path(self.options.build_cache) if self.options.build_cache else None
        self.build_key = builds.build_key(
            source=self.solution.read_bytes(),
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
        sota = spec.folder / "sota.py" if spec.reference_path.name == "reference.py" else None
        self.sota = (
            Path(shutil.copy(sota, self.judge_dir / "sota.py")) if sota and sota.is_file() else None
        )
        self.judge_reference = Path(
            shutil.copy(spec.reference_path, self.judge_dir / "reference.py")
        )

    def run(self) -> None:
        if self._built_and_failed():
            return None
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
        self.shapes, self.budget = caseplan.apply_budget(self.shapes, self.probe_entry)
        self.result.per_shape = [ShapeRow(shape=s["shape"], seen=s["seen"]) for s in self.shapes]
        self.result.gates["generalization"].detail.update(screening, unseen_seed=seed_source)
        try:
            self._open_broker()
            return self._candidate_then_judge()
        finally:
            if self.broker is not None:
                self.broker.close()

    def _open_broker(self) -> None:
        """The socket the candidate's outputs come through on the device (CUDA only)."""
        if self.device == "cuda" and self.options.device_outputs:
            cases = sum(len(s["cases"]) for s in self.shapes)
            self.broker = device_outputs.Broker(self.candidate_dir, max_cases=cases)

    def _device_output_budget(self) -> int | None:
        entry = self.probe_entry
        if not entry or entry.get("total_bytes") is None:
            return None  # the children apply the same rule to the GPU's memory
        return device_outputs.device_budget_bytes(
            int(entry["total_bytes"]), entry.get("visible_peak_bytes")
        )

    def _candidate_then_judge(self) -> None:
        try:
            candidate = self._child("candidate", self.candidate_dir, sandboxed=True)
        except SandboxError as exc:
            return self._sandbox_error(str(exc))
        if self.broker is not None:
            self.broker.stop()  # the candidate's tree is gone: nothing more comes
        self.result.log = _log_tail(candidate.log_path)
        self._store_build(candidate)
        busy = _device_busy(candidate) or _scratch_full(candidate, self.io_dir)
        if busy is not None:
            return self._grader_error(*busy)
        if self._stopped_early(candidate):
            return None
        self._decoy_test(candidate)
        self._load_baselines()
        self.candidate_graphs = {
            str(m["shape"]): bool(m.get("graphs"))
            for m in candidate.messages
            if m["event"] == "timing_end"
        }
        handoff = self.broker.serve(self.judge_dir) if self.broker is not None else None
        try:
            judge = self._child("judge", self.judge_dir, sandboxed=False)
        except SandboxError as exc:
            return self._sandbox_error(str(exc))
        finally:
            if handoff is not None:
                handoff.close()
        self._record_device_outputs(candidate)
        if judge.last("done") is None:
            return self._judge_failed(judge)
        self._store_baselines(judge)
        self._conclude(candidate, judge)
        return None

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
            memory_share=self.options.gpu_memory_share,
        )
        entry = cache_load(path).get(key)
        kept, rejected, unknown = _admit(pool, needed, entry)
        if unknown:
            entry = feasibility.merge_probe(entry, self._probe(unknown, needed - len(kept), entry))
            with contextlib.suppress(OSError):
                cache_store(path, {key: entry})
            kept, rejected, _ = _admit(pool, needed, entry)
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
        }
        outcome = self._launch(job, probe_dir, sandboxed=False)
        report = outcome.last("probe")
        if report is None:
            visible = {-1: dict(self.spec.shapes_for(self.device)[0])}
            raise _grader_error_from(outcome, "probe", self.options.timeout_s, visible)
        return report

    def _baseline_keys(self) -> dict[int, str]:
        environment = self.result.environment
        return {
            i: baseline_key(
                task_version=self.spec.version_hash,
                gpu=str(environment.get("gpu", "unknown")),
                torch_version=str(environment.get("torch", "")),
                triton_version=str(environment.get("triton", "")),
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
                    "compile_ms": _compile_median(message, cached, eager_ms),
                    "graphs": bool(message.get("graphs")),
                }
        # A read-only home only costs the next evaluation a recompile.
        with contextlib.suppress(OSError):
            cache_store(Path(self.options.baseline_cache), fresh)

    def _record_device_outputs(self, candidate: Outcome) -> None:
        if self.broker is None:
            return
        sent = candidate.last("device_outputs") or {}
        self.result.environment["device_outputs"] = {
            "descriptors": len(self.broker.held),
            "refused": self.broker.refused,
            "unused_because": str(sent.get("disabled") or "")[:300],
        }

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
            "cached_baselines": self.cached_baselines,
            "sota_path": str(self.sota) if self.sota else None,
            "stress_cases": {
                c.name: stress_for(self.spec, c).to_dict() for c in self.spec.stress_cases
            },
        }
        if role == "judge":
            job["candidate_graphs"] = self.candidate_graphs
        else:
            job["prebuilt"] = self.prebuilt
        job["decoy"] = self.decoy_case
        if self.broker is not None:
            folder = self.judge_dir if role == "judge" else self.candidate_dir
            job["output_socket"] = str(folder / device_outputs.SOCKET_NAME)
            job["device_output_budget_bytes"] = self._device_output_budget()
        return self._launch(job, workdir, sandboxed=sandboxed)

    def _launch(self, job: dict[str, Any], workdir: Path, *, sandboxed: bool) -> Outcome:
        self._raise_if_stopped()
        job_path = workdir / "job.json"
        job_path.write_text(json.dumps({**job, "memory_share": self.options.gpu_memory_share}))
        role = job["role"]
        if sandboxed:
            self.result.environment["sandbox"] = self.launcher.sandbox(sandboxed=True).name
        launched = time.monotonic()
        running = self.slot.take(role) if self.slot is not None else None
        if running is not None and running.proc.poll() is not None:
            # It died while waiting (the host's OOM killer, say): nothing of this job's doing,
            # so the job starts cold rather than be judged by a child that never ran it.
            running.discard()
            running = None
        if running is None:
            outcome = self.launcher.run(role, workdir)
        else:
            running.hand(str(job_path))
            # It ends by itself before the evaluation goes on, as a cold child does: what a
            # candidate leaves running is seen, and a child's GPU memory is back before the
            # next child needs it (a killed one's comes back only a while after it is reaped).
            outcome = running.wait(self.options.timeout_s, self.options.stop)
        self.result.phases.update(_phases(role, launched, time.monotonic(), outcome))
        self._raise_if_stopped()
        return outcome

    def _raise_if_stopped(self) -> None:
        stop = self.options.stop
        if stop is not None and stop.is_set():
            raise EvaluationStopped("the caller stopped the evaluation")

    def _stopped_early(self, outcome: Outcome) -> bool:
        """Compile, construct, crash and timeout outcomes on the visible shapes."""
        gates = self.result.gates
        error = outcome.last("error")
        compiled = outcome.last("compiled") is not None
        if compiled:
            gates["compile"] = Gate(True, "imported and defines ModelNew")
        if outcome.timed_out:
            stage = "correctness" if compiled else "compile"
            gates[stage] = Gate(False, f"timed out after {self.options.timeout_s:g} s")
            self._finish("timeout", REWARD_TIMEOUT_OR_SANDBOX)
            return True
        if not compiled:
            message = error["message"] if error else _exit_description(outcome)
            gates["compile"] = Gate(False, "did not compile", {"error": message})
            self._finish("failed", REWARD_NOT_COMPILED)
            return True
        if error and error.get("stage") == "construct":
            gates["correctness"] = Gate(
                False, "ModelNew could not be constructed", {"error": error["message"]}
            )
            self._finish("failed", REWARD_NOT_CONSTRUCTED)
            return True
        if error or (outcome.last("done") is None and not self._seen_shapes_finished(outcome)):
            message = error["message"] if error else _exit_description(outcome)
            gates["correctness"] = Gate(False, "failed while running", {"error": message})
            self._finish("failed", REWARD_RUNTIME_FAILURE)
            return True
        interrupted = self._timing_interrupted(outcome)
        if interrupted is not None:
            gates["performance"] = Gate(
                False,
                f"the solution's process ended while being timed on shape {interrupted}",
                {"error": _exit_description(outcome), "log": _log_tail(outcome.log_path)[-4000:]},
            )
            self._finish("failed", REWARD_RUNTIME_FAILURE)
            return True
        return False

    def _timing_interrupted(self, outcome: Outcome) -> dict[str, int] | None:
        """The shape whose timing began and never ended, where the process died without a
        word (a crash in a library, an abort): a solution that cannot be timed fails."""
        if outcome.last("done") is not None:
            return None
        ended = {m["shape"] for m in outcome.messages if m["event"] == "timing_end"}
        for message in outcome.messages:
            if message["event"] == "timing_begin" and message["shape"] not in ended:
                return dict(self.shapes[message["shape"]]["shape"])
        return None

    def _seen_shapes_finished(self, outcome: Outcome) -> bool:
        done = {(m["shape"], m["case"]) for m in outcome.messages if m["event"] == "case_done"}
        return all(
            (i, c) in done
            for i, s in enumerate(self.shapes)
            if s["seen"]
            for c in range(len(s["cases"]))
        )

    def _decoy_test(self, candidate: Outcome) -> None:
        """The solution once more on one visible case with its own kernels silenced, in a
        sandboxed child of its own (decoy.py); the judge compares what it wrote."""
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
        _record_errors(rows, judge)
        self.result.environment.update(_judge_environment(judge))
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
            **self.budget.to_detail(),
            **_bytes_compared(judge),
            **(
                {"stress_cases": [c.name for c in self.spec.stress_cases]}
                if self.spec.stress_cases
                else {}
            ),
        }
        failing = next((r for r in seen if not r.correct), None)
        if failing is not None:
            gates["correctness"] = Gate(
                False, f"incorrect on shape {failing.shape}: {failing.reason}", detail
            )
        else:
            gates["correctness"] = Gate(True, "all visible shapes match", detail)
        self._generalization_gate(unseen, seen_correct=failing is None)
        if self.timed and failing is None:
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
        it (generalization.index_limited): reported as that limit, not counted as overfit."""
        largest: dict[int, int] = {}
        for message in judge.messages:
            if message["event"] == "judged" and "largest_elements" in message:
                index = message["shape"]
                largest[index] = max(largest.get(index, 0), int(message["largest_elements"]))
        failed = [i for i, r in enumerate(rows) if not r.seen and r.correct is False]
        limited = [rows[i] for i in index_limited(self.shapes, failed, largest)]
        for row in limited:
            row.reason = (
                f"past {INDEX_LIMIT_ELEMENTS:,} elements, where every visible shape is below it: "
                f"the 32-bit index limit, not counted ({row.reason})"
            )
        if limited:
            self.result.gates["generalization"].detail["index_limited"] = [r.shape for r in limited]
        return limited

    def _generalization_gate(self, unseen: list[ShapeRow], *, seen_correct: bool) -> None:
        gates = self.result.gates
        detail = dict(gates["generalization"].detail, unseen_shapes=len(unseen))
        if not unseen and detail.get("index_limited"):
            gates["generalization"] = Gate(
                None,
                f"no unseen shape below {INDEX_LIMIT_ELEMENTS:,} elements was graded; wrong past "
                f"it on {detail['index_limited']}: the 32-bit index limit, not overfit",
                detail,
            )
            return
        if not unseen and detail.get("unseen_drawn"):
            example = detail.get("unseen_rejected_example") or "?"
            gates["generalization"] = Gate(
                None,
                f"no unseen shape was graded: of {detail['unseen_drawn']} drawn, none can be run "
                f"by the reference within the memory budget (e.g. {example}); this is not the "
                "solution's failure",
                detail,
            )
            return
        if not unseen:
            reason = self.spec.fixed_reason or "the task has no generalization rules"
            gates["generalization"] = Gate(None, f"no unseen shapes: {reason}", detail)
            return
        passed = sum(1 for r in unseen if r.correct)
        rate = passed / len(unseen)
        self.result.summary["generalization_pass_rate"] = rate
        if passed == len(unseen):
            limit = (
                f"; wrong past {INDEX_LIMIT_ELEMENTS:,} elements on {detail['index_limited']}: "
                "the 32-bit index limit, not overfit"
                if detail.get("index_limited")
                else ""
            )
            gates["generalization"] = Gate(
                True, f"correct on all {len(unseen)} unseen shapes{limit}", detail
            )
            return
        failing = next(r for r in unseen if not r.correct)
        gates["generalization"] = Gate(
            False,
            f"incorrect on {len(unseen) - passed} of {len(unseen)} unseen shapes, e.g. "
            f"{failing.shape}: {failing.reason}",
            detail,
        )
        if seen_correct:
            from grader.result import Flag

            self.result.flags.append(
                Flag(
                    "overfit",
                    "correct on the visible shapes but not on "
                    f"{len(unseen) - passed} unseen shapes",
                )
            )

    def _final_status(self) -> None:
        gates = self.result.gates
        if gates["correctness"].passed is False or gates["generalization"].passed is False:
            self._finish("failed", REWARD_INCORRECT)
            return
        if not self.timed:
            # Correct, but nothing was timed: no reward, rather than one that reads as 1x.
            self._finish("passed", None)
            return
        speedup = self.result.summary.get("speedup_vs_eager")
        self._finish("passed", (speedup - 1.0) if speedup else 0.0)

    def _finish(self, status: str, reward: float | None) -> None:
        self.result.status, self.result.reward = status, reward

    def _sandbox_error(self, message: str) -> None:
        self.result.gates["compile"] = Gate(None, f"sandbox error: {message}")
        self._finish("error", REWARD_TIMEOUT_OR_SANDBOX)

    def _judge_failed(self, outcome: Outcome) -> None:
        shapes = {i: s["shape"] for i, s in enumerate(self.shapes)}
        error = _grader_error_from(outcome, "judge", self.options.timeout_s, shapes)
        index = (outcome.last("grader_error") or {}).get("shape", -1)
        unseen = index in shapes and not self.shapes[index]["seen"]
        gate = "generalization" if unseen else "correctness"
        self._grader_error(gate, error.reason, error.detail)

    def _grader_error(self, gate: str, reason: str, detail: dict[str, Any]) -> None:
        """The grader's own failure: status "error", never counted against the solution."""
        self.result.gates[gate] = Gate(None, reason, detail)
        self._finish("error", REWARD_TIMEOUT_OR_SANDBOX)


def stress_for(spec: TaskSpec, case: StressCase) -> Stress:
    """A stress case as the children apply it: its own tolerance over the dtype's defaults
    where it names one, else the task's."""
    atol, rtol = tolerance_for(spec.dtype, case.tolerance or spec.tolerance)
    return Stress(case.name, dict(case.input_scales), dict(case.state_scales), atol, rtol)


def target_arch(device: str, environment: dict[str, Any], options: EvaluateOptions) -> str:
    """TORCH_CUDA_ARCH_LIST for this evaluation's builds: none on the CPU; the option where
    given; else the GPU's own compute capability."""
    if device == "cpu":
        return ""
    if options.cuda_arch is not None:
        return options.cuda_arch
    return builds.arch_for_capability(str(environment.get("compute_capability", "")))


def conclude_build_failure(result: EvalResult, report: builds.BuildReport) -> None:
    """A compile failure decided by the build stage: the solution's, graded without a GPU."""
    result.gates["compile"] = Gate(
        False,
        f"did not compile: {report.reason}",
        {"error": report.error[-8000:], "build_key": report.key},
    )
    result.status, result.reward = "failed", REWARD_NOT_COMPILED


def build_solution(
    task: TaskSpec | str | os.PathLike[str],
    solution: str | os.PathLike[str],
    *,
    arch: str,
    options: EvaluateOptions,
) -> builds.BuildReport:
    """The build stage for one solution (builds.py): a cached outcome, or the solution imported
    in the sandbox on this host's CPU with TORCH_CUDA_ARCH_LIST=arch, its outcome stored."""
    import torch

    if not options.build_cache:
        raise ValueError("the build stage needs a build cache (EvaluateOptions.build_cache)")
    root = Path(options.build_cache)
    spec = task if isinstance(task, TaskSpec) else load_task(task, catalogs=options.catalogs)
    source = Path(solution).read_bytes()
    key = builds.build_key(
        source=source, torch_version=torch.__version__, cuda=torch.version.cuda, arch=arch
    )
    cached = builds.cache_lookup(root, key)
    if cached is not None:
        return cached
    checked = builds.static_check(key, source)
    if checked is not None:
        builds.cache_store(root, checked, {})
        return checked
    started = time.monotonic()
    with private_scratch("arena-build") as workdir:
        path = workdir / "solution.py"
        path.write_bytes(source)
        shutil.copy(spec.reference_path, workdir / "reference.py")
        (workdir / "job.json").write_text(
            json.dumps({"role": "build", "device": "cpu", "solution_path": str(path)})
        )
        extra = {
            "PYTHONPATH": str(ENGINE_ROOT),
            "TORCH_EXTENSIONS_DIR": str(workdir / "ext"),
            "CUDA_VISIBLE_DEVICES": "",
            "TORCH_CUDA_ARCH_LIST": arch,
        }
        outcome = _isolating_sandbox(options).run(
            [sys.executable, "-m", "grader.child", str(workdir / "job.json")],
            workdir=workdir,
            env=scrubbed_env(extra, home=workdir),
            limits=Limits(timeout_s=options.timeout_s, memory_bytes=options.memory_bytes),
            readable=CHILD_CODE,
        )
        report = _build_report(key, outcome, options.timeout_s)
        report.build_s = round(time.monotonic() - started, 3)
        libraries = builds.collected_libraries(report.extensions, workdir)
        if report.status == builds.BUILT and libraries is None:
            report = builds.BuildReport(key, builds.DEFERRED, "a built library was not found")
        builds.cache_store(root, report, libraries or {})
    return report


def _build_report(key: str, outcome: Outcome, timeout_s: float) -> builds.BuildReport:
    message = outcome.last("build")
    if outcome.timed_out:
        return builds.BuildReport(key, builds.DEFERRED, f"the build ran past {timeout_s:g} s")
    if message is None:
        said = _exit_description(outcome)
        return builds.BuildReport(key, builds.DEFERRED, f"the build child ended early: {said}")
    return builds.BuildReport(
        key,
        str(message["status"]),
        str(message.get("reason", "")),
        str(message.get("error", "")),
        dict(message.get("extensions") or {}),
    )


def _compile_median(
    message: dict[str, Any], cached: dict[str, Any] | None, eager_ms: float
) -> float | None:
    """The compiled time the judge measured, or the cached one carried over to its eager time."""
    if message.get("compile_ms"):
        return percentile(message["compile_ms"], 0.5)
    if cached and cached.get("compile_ms") and cached.get("eager_ms"):
        return float(cached["compile_ms"]) * eager_ms / float(cached["eager_ms"])
    return None


def _phases(role: str, launched: float, ended: float, outcome: Outcome) -> dict[str, float]:
    """Seconds of a child's life: the probe and the judge whole; the candidate split at its
    messages into start-up (interpreter, torch, the sandbox), compile (importing the solution:
    its builds), correctness (every shape's cases), timing and the rest (exit, clean-up)."""
    if role != "candidate":
        return {role: round(ended - launched, 3)}
    marks = {"launched": launched}
    for message in outcome.messages:
        event = message["event"]
        if event in ("started", "compiled", "timing_begin") and event not in marks:
            marks[event] = message["received_at"]
        if event == "timing_end":
            marks["timing_end"] = message["received_at"]
    order = ["launched", "started", "compiled", "timing_begin", "timing_end"]
    names = ["candidate_startup", "candidate_compile", "candidate_correctness", "candidate_timing"]
    phases: dict[str, float] = {}
    last = launched
    for name, start, end in zip(names, order[:-1], order[1:], strict=True):
        if start in marks and end in marks:
            phases[name] = round(marks[end] - marks[start], 3)
            last = marks[end]
    if "timing_begin" not in marks and "compiled" in marks:
        # Untimed (CPU) or stopped before timing: correctness runs to the end of the messages.
        final = max(m["received_at"] for m in outcome.messages)
        phases["candidate_correctness"] = round(final - marks["compiled"], 3)
        last = final
    phases["candidate_exit"] = round(ended - last, 3)
    return phases


def _stage_error(outcome: Outcome, stage: str) -> dict[str, Any] | None:
    """The candidate's first error message of `stage` (the whole run's or one shape's)."""
    for message in outcome.messages:
        if message["event"] in ("error", "shape_error") and message.get("stage") == stage:
            return message
    return None


def _device_busy(outcome: Outcome) -> tuple[str, str, dict[str, Any]] | None:
    """(gate, reason, detail) where the candidate ran out of GPU memory that other processes
    held: the device was shared, so the run says nothing of the solution."""
    message = _stage_error(outcome, "device_busy")
    if message is None:
        return None
    reason = (
        "grader error: the GPU ran out of memory while other processes held it: "
        "this is not the solution's failure"
    )
    return "correctness", reason, {"error": message["message"][-4000:]}


def _scratch_full(outcome: Outcome, io_dir: Path) -> tuple[str, str, dict[str, Any]] | None:
    """(gate, reason, detail) where the candidate's process could not write a case's outputs
    because the grader's scratch space is full, and this process sees that it is (a solution
    that only says so fails as any other error would)."""
    message = _stage_error(outcome, "scratch_full")
    if message is None:
        return None
    usage = shutil.disk_usage(io_dir)
    if usage.free > max(SCRATCH_FULL_BYTES, usage.total // 50):
        return None
    reason = (
        "grader error: the grader's scratch space for outputs is full "
        f"({usage.free / 2**30:.1f} GiB free of {usage.total / 2**30:.1f} GiB): "
        "this is not the solution's failure"
    )
    return "correctness", reason, {"error": message["message"][-4000:]}


class GraderError(Exception):
    """The grader could not judge (the reference failed or ran out of memory): not the solution's
    failure. reason starts with "grader error:" and says so."""

    def __init__(self, gate: str, reason: str, detail: dict[str, Any]) -> None:
        super().__init__(reason)
        self.gate, self.reason, self.detail = gate, reason, detail


_CAUSES = {
    "out_of_memory": "the reference ran out of device memory",
    "reference_failed": "the reference failed",
    "task_error": "the task is at fault",
}


def _grader_error_from(
    outcome: Outcome, role: str, timeout_s: float, shapes: dict[int, dict[str, int]]
) -> GraderError:
    """A grader child (judge or probe) that ended without its result, as a named grader error."""
    reported = outcome.last("grader_error")
    error = outcome.last("error")
    message = error["message"] if error else _exit_description(outcome)
    if outcome.timed_out:
        what = f"the {role} timed out after {timeout_s:g} s"
    elif reported is not None:
        shape = shapes.get(reported["shape"], shapes.get(-1, {}))
        where = "the visible shape" if reported["shape"] == -1 else "shape"
        what = f"{_CAUSES.get(reported['cause'], 'the reference failed')} on {where} {shape}"
        message = reported["message"]
        if reported["cause"] == "task_error":  # a plain sentence, not a traceback
            what = f"{what} ({message})"
    else:
        what = f"the {role} ended without a result ({_exit_description(outcome)})"
    detail = {"error": message, "log": _log_tail(outcome.log_path)[-4000:]}
    gate = "correctness"
    return GraderError(gate, f"grader error: {what}: this is not the solution's failure", detail)


def _admit(
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


def _record_errors(rows: list[ShapeRow], judge: Outcome) -> None:
    for message in judge.messages:
        if message["event"] != "judged" or message.get("max_abs_err") is None:
            continue
        row = rows[message["shape"]]
        row.max_abs_err = max(row.max_abs_err or 0.0, message["max_abs_err"])
        row.max_rel_err = max(row.max_rel_err or 0.0, message.get("max_rel_err") or 0.0)


def _bytes_compared(judge: Outcome) -> dict[str, int]:
    """The candidate's output bytes the judge compared, and how many of them it read where the
    candidate left them on the device (device_outputs.py) rather than through host memory."""
    judged = [m for m in judge.messages if m["event"] == "judged"]
    return {
        "bytes_compared": sum(int(m.get("bytes") or 0) for m in judged),
        "bytes_on_device": sum(int(m.get("bytes") or 0) for m in judged if m.get("on_device")),
    }


def _judge_environment(judge: Outcome) -> dict[str, Any]:
    message = judge.last("environment") or {}
    return {k: v for k, v in message.items() if k not in ("event", "received_at")}


def _exit_description(outcome: Outcome) -> str:
    returncode = outcome.returncode
    if outcome.memory_exceeded:
        # The cgroup's OOM kill; bwrap passes it on as exit code 137, which says nothing.
        return "the process was killed: its processes together went over the memory limit"
    if returncode is None:
        return "the process did not exit"
    if returncode < 0:
        return f"the process was killed by signal {-returncode}"
    return f"the process exited with code {returncode} before reporting a result"


def _log_tail(path: Path | None) -> str:
    if path is None or not path.exists():
        return ""
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
        return fh.read().decode("utf-8", errors="replace")


def host_environment(device: str) -> dict[str, Any]:
    import torch
    import triton

    environment: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "host": platform.machine(),
    }
    if device == "cuda":
        environment.update(_nvidia_smi())
    return environment


def _nvidia_smi() -> dict[str, Any]:
    fields = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,compute_cap"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    values = [v.strip() for v in out.split(",")]
    keys = [
        "gpu",
        "driver",
        "sm_clock_mhz",
        "max_sm_clock_mhz",
        "mem_clock_mhz",
        "power_limit_w",
        "compute_capability",
    ]
    return dict(zip(keys, values, strict=False))
