"""How one evaluation is configured (EvaluateOptions) and which sandbox runs the solution's code."""

import threading
from dataclasses import dataclass, field

from grader import environment
from sandboxes.backends import (
    ProcessSandbox,
    sandbox_for,
    unsafe_switch_on,
)

# EvaluateOptions.candidate_rounds' values.
CANDIDATE_ROUNDS = ("off", "auto", "always")


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
    # Triton's cache for the judge and the probe, which run only the grader and the task's
    # reference (the judge's fused comparison, torch.compile's baselines): kept from one
    # evaluation to the next, where no candidate can reach it. A candidate's cache is its own
    # folder's, gone with it.
    judge_kernel_cache: str = field(default_factory=environment.judge_kernel_cache)
    # The docker sandbox's image (its default tag where None).
    sandbox_image: str | None = field(default_factory=environment.sandbox_image)
    # The catalogues a task given by slug is looked up in.
    catalogs: tuple[str, ...] = field(default_factory=environment.catalog_dirs)
    compile_baseline: bool = True
    # Inductor's compile workers for torch.compile's baseline (TORCHINDUCTOR_COMPILE_THREADS in
    # the judge's child, the warm-up's and the warm judge's). 1 compiles in the child's own
    # process: a pool starts up to 32 workers that each import torch and inductor, seconds of
    # every core while the candidate and the probe start beside it, and a level-1 baseline has
    # one to three kernels to compile (docs/grading-pipeline.md, "The compile baseline's
    # cold start"). 0: torch's own choice (a worker per core, at most 32).
    compile_threads: int = field(default_factory=environment.compile_threads)
    # The trusted children (the probe's, the judge's) forked from a server that has imported
    # torch, triton and the grader once (forkserver.py), rather than each started as an
    # interpreter that imports them again; off, every child starts cold.
    fork_server: bool = field(default_factory=environment.fork_server)
    # A prepared candidate's child on a GPU makes CUDA's context and starts Triton's compiler
    # while it waits for its job (child._device_ahead, child._triton_compiler_ahead); off, the
    # job makes the context (0.2-0.45 s) and a Triton solution's first launch starts the
    # compiler (about 0.9 s), each evaluation.
    device_ahead: bool = True
    # The operator's development switch (sandbox.UNSAFE_SWITCH, read when the options are made):
    # without it the candidate runs only in a sandbox that isolates, and grading stops with an
    # error where none works.
    allow_unisolated: bool = field(default_factory=unsafe_switch_on)
    # The share of the GPU's memory one evaluation may use, where a host runs several at once on
    # one GPU: the reference's memory budget is taken from it and each child is held to it.
    gpu_memory_share: float = 1.0
    # How many evaluations grade on one GPU at once (one process each: a GPU worker's
    # concurrency, the bench's parts). Above 1 they share it by gpu_share.py's rules: one
    # candidate at a time, every timing alone, each within its memory share (1/N unless
    # gpu_memory_share says less). `gpu_share_root`: where the GPU's folder is made (the
    # host's temporary folder by default); every process sharing a GPU names the same.
    evaluations_per_gpu: int = 1
    gpu_share_root: str | None = None
    # The share an evaluation that takes the GPU whole may use (gpu_share.py, rule 3), and the
    # one its unseen shapes are screened and its cases planned on: gpu_memory_share as given,
    # before it is divided among the evaluations in flight. Set from it where not given (0).
    gpu_memory_whole: float = 0.0
    # The build cache (builds.py) shared with the build stage; None: every evaluation builds.
    build_cache: str | None = None
    # TORCH_CUDA_ARCH_LIST for builds; None: the GPU's own (9.0a on Hopper).
    cuda_arch: str | None = None
    # Children started ahead (prepared.py): each evaluation takes the ones the last one left
    # ready and starts the next. For a process that grades one evaluation after another (a GPU
    # worker, grade_suite), and for a one-off evaluation with prepared_ahead=0 (the CLI).
    prepared: bool = False
    # How many evaluations' children are kept started ahead (prepared.Pool). 0: none for a next
    # evaluation, but this one's children start together when it begins, so that their
    # interpreters import torch at the same time rather than one after another.
    prepared_ahead: int = 2
    # A warm judge (warm_judge.py): one long-lived judge child per process serves every
    # evaluation's judge job and keeps each case's expected outputs, within judge_cache_bytes
    # of its host memory, for the next solution of the same task. For a process that grades one
    # evaluation after another (a GPU worker); off, each evaluation starts a judge of its own.
    warm_judge: bool = False
    judge_cache_bytes: int = 4 * 1024**3
    # On CUDA, outputs pass from the candidate to the judge in exported device buffers
    # (device_outputs.py) within a budget of the GPU's memory; off, or past the budget, through
    # host memory (outputs.py).
    device_outputs: bool = True
    # Two candidate rounds (caseplan.two_rounds): the visible shapes in one candidate process,
    # judged and released, then the unseen shapes in a second, so that a plan whose outputs pass
    # the device budget keeps them on the device a round at a time rather than send the rest
    # through host memory. "auto" where that is so (on CUDA, outputs on the device); "always"
    # wherever there are unseen shapes (the CPU tests of the rounds); "off" never. "auto" by
    # default: on an H200 it took the GPU's busy share of a two-in-flight pass from 46.8% to
    # 54.4% (bench/results/README.md, fourteenth step).
    candidate_rounds: str = "auto"
    # Each child reports where its time went, step by step (steps.py): for the bench, never
    # for a verdict.
    trace_steps: bool = False
    # The decoy test (decoy.py: the solution once more with its own kernels silenced) decides
    # whether a grading may rank, so by default (None) it runs where one can: on CUDA. A CPU
    # grading is never ranked, and the extra child would only cost its time; True runs it on
    # any device (the CPU tests of the test itself), False nowhere.
    decoy_test: bool | None = None
    # Set from another thread to end the evaluation without a verdict (EvaluationStopped): the
    # running child is killed within a second, and no other starts. The grading service sets it
    # when another worker has taken the evaluation over.
    stop: threading.Event | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.gpu_memory_share <= 1.0:
            raise ValueError(f"gpu_memory_share must be in (0, 1], not {self.gpu_memory_share}")
        if self.evaluations_per_gpu < 1:
            raise ValueError(
                f"evaluations_per_gpu must be 1 or more, not {self.evaluations_per_gpu}"
            )
        if not self.gpu_memory_whole:
            self.gpu_memory_whole = self.gpu_memory_share
        if not 0.0 < self.gpu_memory_whole <= 1.0:
            raise ValueError(f"gpu_memory_whole must be in (0, 1], not {self.gpu_memory_whole}")
        if self.evaluations_per_gpu > 1:
            self.gpu_memory_share = min(self.gpu_memory_share, 1.0 / self.evaluations_per_gpu)
        if self.judge_cache_bytes < 0:
            raise ValueError(f"judge_cache_bytes must be 0 or more, not {self.judge_cache_bytes}")
        if self.compile_threads < 0:
            raise ValueError(f"compile_threads must be 0 or more, not {self.compile_threads}")
        if self.candidate_rounds not in CANDIDATE_ROUNDS:
            raise ValueError(
                f"candidate_rounds must be off, auto or always, not {self.candidate_rounds!r}"
            )
        if self.prepared_ahead < 0:
            raise ValueError(f"prepared_ahead must be 0 or more, not {self.prepared_ahead}")


def isolating_sandbox(options: EvaluateOptions) -> ProcessSandbox:
    """The sandbox the options name for the candidate's and the build's children."""
    return sandbox_for(
        options.sandbox, allow_unisolated=options.allow_unisolated, image=options.sandbox_image
    )


class EvaluationStopped(Exception):
    """The caller set `EvaluateOptions.stop`: the evaluation ended without a verdict."""


def resolve_device(device: str) -> str:
    if device == "auto":
        import torch  # here, not above: the command line starts its children before torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cuda", "cpu"):
        raise ValueError(f"device must be cuda, cpu or auto, not {device!r}")
    return device
