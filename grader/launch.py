"""How a grader child is launched: its sandbox (the isolating one for the roles that run the
solution's code), environment, limits and folder, cold or prepared ahead; the phases of its life
read from its messages.
"""

import contextlib
import hashlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from grader import analyses, bytecode, hostinfo, preludes, prepared
from grader.baselines import compile_cached
from grader.forkserver import TrustedSandbox
from grader.options import EvaluateOptions, isolating_sandbox
from grader.scratch import new_private_folder, private_scratch, scratch_root
from grader.taskspec import TaskError, load_task
from sandboxes.backends import (
    Limits,
    Outcome,
    ProcessSandbox,
    Running,
    SandboxError,
    python_dirs,
    scrubbed_env,
)

ENGINE_ROOT = Path(__file__).resolve().parents[1]


# What a grader child imports: bound read-only into its sandbox, never the whole checkout.
CHILD_CODE = (ENGINE_ROOT / "grader", ENGINE_ROOT / "sandboxes")


LOG_TAIL_BYTES = 64 * 1024


# The roles that run the solution's code: only ever in the isolating sandbox.
SANDBOXED_ROLES = ("candidate", "decoy")


@contextlib.contextmanager
def evaluation_folder(launcher: "Launcher") -> Iterator[tuple[Path, prepared.Slot | None]]:
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


def start_children_now(
    device: str, options: EvaluateOptions, task: str | None = None
) -> prepared.Slot | None:
    """Start the children of the evaluation this process is about to run, before it imports
    torch or reads the task (the command line): their imports and its own run at once. The
    evaluation takes them as a prepared slot where its settings turn out the same (`device`
    "auto" is a guess until torch says); a slot for other settings is let go unused. Nothing
    is started where the evaluation would start none ahead, and a sandbox that cannot start
    is left for the evaluation to report. The caller lets go of the slot after the evaluation
    (prepared.POOL.let_go), in case the evaluation never took it.

    With `task` (a KernelBench file or a task folder), the children are handed their preludes
    (preludes.py): the probe's child analyses a KernelBench file, and on a GPU the judge's
    child warms the compile baseline up, both while this process imports torch."""
    if not options.prepared:
        return None
    device = guessed_device(device)
    launcher = Launcher(device, "", options)
    slot = None
    with contextlib.suppress(SandboxError):
        if launcher.sandbox(sandboxed=True).preparable:
            slot = prepared.POOL.start_now(
                launcher.key(), launcher.new_scratch, launcher.start, _slot_roles(options)
            )
    if slot is not None and task is not None:
        _hand_preludes(slot, device, options, task)
    return slot


def guessed_device(device: str) -> str:
    """The device an evaluation will run on, guessed before torch is imported: "auto" is the
    GPU where the host has NVIDIA's control node."""
    if device != "auto":
        return device
    return "cuda" if Path("/dev/nvidiactl").exists() else "cpu"


def _hand_preludes(slot: prepared.Slot, device: str, options: EvaluateOptions, task: str) -> None:
    """A task that cannot be read here is left for the evaluation to report."""
    path = Path(task).resolve()
    if path.suffix == ".py" and path.is_file():
        _hand_problem_preludes(slot, device, options, path)
        return
    if device != "cuda" or not options.compile_baseline:
        return
    try:  # a folder or a catalogue's slug: its manifest, read without torch
        spec = load_task(task, catalogs=options.catalogs)
    except (TaskError, OSError):
        return
    shapes = [dict(s) for s in spec.shapes_for("cuda")]
    if shapes:
        _hand_warmup(slot, options, spec.reference_path, shapes[0], (spec.version_hash, shapes))


def _hand_problem_preludes(
    slot: prepared.Slot, device: str, options: EvaluateOptions, path: Path
) -> None:
    """A KernelBench file analysed before (analyses.py) is not analysed again: the evaluation
    reads its shape from the cache, and so does the warm-up's check of the baseline cache."""
    try:
        version = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return
    known = analyses.cached(Path(options.probe_cache), version)
    probe = slot.children.get("probe")
    if known is None and probe is not None:
        analyse = {"role": "analyse", "device": "cpu", "path": str(path)}
        prelude = preludes.hand(probe, slot.folder / "probe", analyse, preludes.ANALYSIS_LIMIT_S)
        slot.analysis = (path, prelude)
    if device != "cuda" or not options.compile_baseline:
        return
    # The problem as written is its visible shape ({}), which the baseline cache names by the
    # analysis's shape. Where no analysis is cached the warm-up is handed at once, not after
    # the analysis: the compile's own cold start would wait those seconds.
    shapes = [dict(known["shape"])] if known is not None and not known.get("error") else None
    _hand_warmup(slot, options, path, {}, (version, shapes) if shapes else None)


def _hand_warmup(
    slot: prepared.Slot,
    options: EvaluateOptions,
    reference: Path,
    shape: dict[str, int],
    cached_as: tuple[str, list[dict[str, int]]] | None,
) -> None:
    """The warm-up of the compile baseline on `shape`, unless the baseline cache holds the
    compiled time of every visible shape named in `cached_as` (task version, shapes): decided
    on the warm-up's watch (nvidia-smi names the GPU), so that nothing here waits for it."""
    needless = None
    if cached_as is not None:
        version, shapes = cached_as

        def needless() -> bool:
            torch_version, triton_version = hostinfo.cache_libraries()
            return compile_cached(
                Path(options.baseline_cache),
                task_version=version,
                gpu=(hostinfo.nvidia_smi_query("name").splitlines() or [""])[0].strip(),
                torch_version=torch_version,
                triton_version=triton_version,
                shapes=shapes,
            )

    job = {
        "role": "warmup",
        "device": "cuda",
        "reference_path": str(reference),
        "shape": shape,
        "memory_share": options.gpu_memory_share,
    }
    slot.warmup = preludes.start_warmup(slot.children, slot.folder, job, needless)


def _slot_roles(options: EvaluateOptions) -> tuple[str, ...]:
    # A warm judge serves the judge's job: a slot starts none.
    return tuple(r for r in prepared.ROLES if r != "judge" or not options.warm_judge)


def _prepared_slot(launcher: "Launcher") -> prepared.Slot | None:
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
            roles=_slot_roles(launcher.options),
        )
    except SandboxError:
        return None


class Launcher:
    """How a grader child is started for this evaluation's device, architecture and options:
    cold, or ahead of its job for a prepared slot (the same sandbox, limits and environment)."""

    def __init__(self, device: str, arch: str, options: EvaluateOptions) -> None:
        self.device, self.arch, self.options = device, arch, options
        self._isolating: ProcessSandbox | None = None

    def key(self) -> tuple[object, ...]:
        return (
            self.device,
            self.sandbox(sandboxed=True).name,
            self.memory_cap(),
            sys.executable,
            self.options.scratch_dir,
            self.options.warm_judge,
            self.options.judge_kernel_cache,
            self.options.compile_threads,
            self.options.fork_server,
            self.options.device_ahead,
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
            return TrustedSandbox() if self.options.fork_server else ProcessSandbox()
        if self._isolating is None:
            options = self.options
            self._isolating = isolating_sandbox(options)
        return self._isolating

    def env(self, workdir: Path, role: str) -> dict[str, str]:
        extra = {
            "PYTHONPATH": str(ENGINE_ROOT),
            "TORCH_EXTENSIONS_DIR": str(workdir / "ext"),
            "TRITON_CACHE_DIR": str(
                workdir / "triton"
                if role in SANDBOXED_ROLES
                else Path(self.options.judge_kernel_cache) / "triton"
            ),
        }
        if role not in SANDBOXED_ROLES:
            # torch.compile's caches (the baseline's graphs, generated code and kernels) are
            # kept beside Triton's, out of every candidate's reach: a task compiled once on
            # this host compiles from them the next time, where its baselines are not cached.
            extra["TORCHINDUCTOR_CACHE_DIR"] = str(
                Path(self.options.judge_kernel_cache) / "inductor"
            )
            if self.options.compile_threads:
                extra["TORCHINDUCTOR_COMPILE_THREADS"] = str(self.options.compile_threads)
            extra.update(bytecode.child_env(self.options.judge_kernel_cache))
        elif (kept := self._bytecode_to_read(role)) is not None:
            # Read, never written: the child keeps PYTHONDONTWRITEBYTECODE, and the folder is
            # bound read-only (readable()).
            extra[bytecode.PREFIX_VARIABLE] = str(kept)
        if self.device == "cpu":
            extra["TRITON_INTERPRET"] = "1"
            extra["CUDA_VISIBLE_DEVICES"] = ""
        # The builds' architecture (TORCH_CUDA_ARCH_LIST) comes with the job, not here: a
        # child's start does not wait for the GPU to be asked its compute capability.
        return scrubbed_env(extra, home=workdir)

    def _bytecode_to_read(self, role: str) -> Path | None:
        """The grader's bytecode folder (bytecode.py), for a sandboxed child that runs this
        host's own interpreter (bwrap, or the process backend; a container has its own) once
        the trusted processes have kept torch's bytecode there; None elsewhere."""
        if role not in SANDBOXED_ROLES:
            return None
        try:
            name = self.sandbox(sandboxed=True).name
        except SandboxError:
            return None
        if name not in ("bwrap", "process"):
            return None
        return bytecode.kept_for_reading(self.options.judge_kernel_cache)

    def readable(self, role: str) -> tuple[Path, ...]:
        """What a child may read besides the system and Python: the grader's code, and for a
        sandboxed child, where it reads the grader's bytecode folder, the folder's subtrees that
        mirror the sources it may read (bytecode.readable_subtrees)."""
        kept = self._bytecode_to_read(role)
        if kept is None:
            return CHILD_CODE
        sources = [*python_dirs(), Path("/usr"), *CHILD_CODE]
        return (*CHILD_CODE, *bytecode.readable_subtrees(kept, sources))

    def start(self, role: str, workdir: Path) -> Running:
        """A child started ahead of its job, for a prepared slot (preparable backends only).
        The candidate's child on a GPU makes CUDA's context and starts Triton's compiler
        ahead (child._device_ahead), where the options keep it: the job would otherwise wait
        for both."""
        argv = [sys.executable, "-m", "grader.child", "--prepared", role]
        if role == "candidate" and self.device == "cuda" and self.options.device_ahead:
            argv.append("--device-ahead")
        return self.sandbox(sandboxed=role in SANDBOXED_ROLES).start(
            argv,
            workdir=workdir,
            env=self.env(workdir, role),
            limits=self.limits(),
            readable=self.readable(role),
            prepared=True,
        )

    def start_warm_judge(self) -> tuple[Running, Path]:
        """A warm judge (warm_judge.py) in a folder of its own, removed when it goes."""
        folder = new_private_folder("arena-judge", root=scratch_root(self.options.scratch_dir))
        try:
            running = self.sandbox(sandboxed=False).start(
                [sys.executable, "-m", "grader.child", "--warm"],
                workdir=folder,
                env=self.env(folder, "judge"),
                limits=self.limits(),
                readable=CHILD_CODE,
                prepared=True,
            )
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return running, folder

    def run(self, role: str, workdir: Path) -> Outcome:
        """A child started for its job (workdir/job.json) and supervised to its end; one the
        caller stops is killed then. A container (docker: not preparable) runs through the
        backend's own run(), to its end."""
        sandbox = self.sandbox(sandboxed=role in SANDBOXED_ROLES)
        argv = [sys.executable, "-m", "grader.child", str(workdir / "job.json")]
        env, limits, readable = self.env(workdir, role), self.limits(), self.readable(role)
        if not sandbox.preparable:
            return sandbox.run(argv, workdir=workdir, env=env, limits=limits, readable=readable)
        running = sandbox.start(argv, workdir=workdir, env=env, limits=limits, readable=readable)
        return running.wait(self.options.timeout_s, self.options.stop)

    def limits(self) -> Limits:
        return Limits(timeout_s=self.options.timeout_s, memory_bytes=self.memory_cap())


def phases(role: str, launched: float, ended: float, outcome: Outcome) -> dict[str, float]:
    """Seconds of a child's life: the probe and the judge whole; the candidate split at its
    messages into start-up (interpreter, torch, the sandbox), compile (importing the solution:
    its builds), correctness (every shape's cases: the visible shapes' before timing, the unseen
    shapes' after it), timing and the rest (exit, clean-up)."""
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
    if "compiled" in marks:
        # Untimed (CPU) or stopped before timing, correctness runs to the end of the messages;
        # timed, the unseen shapes' cases after the timing are correctness too.
        final = max(m["received_at"] for m in outcome.messages)
        before = phases.get("candidate_correctness", 0.0) if "timing_begin" in marks else 0.0
        phases["candidate_correctness"] = round(before + max(0.0, final - last), 3)
        last = max(last, final)
    phases["candidate_exit"] = round(ended - last, 3)
    return phases


def start_report(running: Running, origin: float) -> dict[str, float | None]:
    """Where a prepared child's start went, in seconds from `origin` (an evaluation's start;
    negative: before it, as the command line's children start while it imports): its launch,
    the end of each part of its start (child.START_MARKS: the interpreter, torch, triton, the
    grader, the profiler's first use, Triton's driver, the compiler stack, as the role makes
    them; for a child forked by the fork server, the fork, its imports being the server's),
    its readiness as read here (later than the hand-over: the job waited for it; None: it never
    said), and the hand-over of its job."""
    ready = running.readiness()
    marks = ready.get("marks", {}) if ready else {}
    report: dict[str, float | None] = {"launched": round(running.launched - origin, 3)}
    for name, at in marks.items():
        report[name] = round(float(at) - origin, 3)
    report["ready"] = round(ready["received_at"] - origin, 3) if ready else None
    report["handed"] = round(running.started - origin, 3)
    return report


def exit_description(outcome: Outcome) -> str:
    returncode = outcome.returncode
    if outcome.memory_exceeded:
        # The cgroup's OOM kill; bwrap passes it on as exit code 137, which says nothing.
        return "the process was killed: its processes together went over the memory limit"
    if returncode is None:
        return "the process did not exit"
    if returncode < 0:
        return f"the process was killed by signal {-returncode}"
    return f"the process exited with code {returncode} before reporting a result"


def log_tail(path: Path | None) -> str:
    if path is None or not path.exists():
        return ""
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
        return fh.read().decode("utf-8", errors="replace")
