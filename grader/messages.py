"""Every message a grader child sends over its private channel (channel.py), in one place: who
sends it, what it carries, who reads it. The grading process stamps each on arrival with
`received_at`; nothing a child prints to stdout is read.

A child sends `channel.send(EVENT, **fields)`; the grading process reads them from its
`Outcome.messages` (outcomes.py, verdicts.py, scoring.py, decoy.py). The TypedDicts below are
the fields as sent (all JSON).
"""

from typing import Any, TypedDict

# ---- every role ---------------------------------------------------------------------------------


class Done(TypedDict):
    """The role finished its job (child.main); its absence with no error means it died."""


# The stage of a candidate's out-of-memory within its share of a shared GPU, on shapes planned
# for the whole of it (roles.common.runtime_error): the grading process grades it again alone.
BEYOND_SHARE = "beyond_share"


class Error(TypedDict, total=False):
    """A run-wide stage error (roles.common.StageError): compile, construct, runtime,
    device_busy, beyond_share, scratch_full, judge, decoy."""

    stage: str
    message: str
    shape: int | None


class Prepared(TypedDict):
    """A child started ahead (prepared.py) has imported what every job needs. `marks`: when
    each part of its start ended (interpreter, torch, triton, grader, profiler, triton_driver,
    compiler), on the host's monotonic clock (launch.start_report)."""

    marks: dict[str, float]


# ---- candidate (roles/candidate.py) -------------------------------------------------------------


class Compiled(TypedDict):
    fallback_lines: list[int]
    extensions: dict[str, Any]
    prebuilt_loaded: list[str]


class BuildFailed(TypedDict):
    error: str


class Constructed(TypedDict):
    shape: int
    weights: str  # "reference", "seeded" or "none"


class CaseReport(TypedDict, total=False):
    """event "case": the checks on one case's call (profile fields on the first case)."""

    shape: int
    case: int
    seen: bool
    violations: list[str]
    task_error: str
    new_threads: int
    new_processes: int
    aten_ops: list[str]
    own_kernels: list[str]
    own_us: float
    library_us: float
    top_library: list[list[Any]]


class CaseDone(TypedDict):
    shape: int
    case: int


class ShapeError(TypedDict):
    """An unseen shape that broke the solution: that shape fails generalization."""

    shape: int
    stage: str
    message: str


class TimingBegin(TypedDict):
    shape: int


class SideStream(TypedDict):
    shape: int
    stream_ms: list[float]
    drained_ms: list[float]
    sync_ms: list[float]
    kernel_streams: list[int]
    current_stream: int


class TimingEnd(TypedDict):
    shape: int
    candidate_ms: list[float]
    eager_ms: list[float]
    graphs: bool
    reps: int


class Tampered(TypedDict):
    stage: str  # "import" or "run"
    names: list[str]


class Audit(TypedDict):
    files: list[str]
    network: list[str]


class DeviceOutputs(TypedDict):
    """How much went through device_outputs.py, and why the device path stopped, if it did."""

    sent_bytes: int
    disabled: str


# ---- judge (roles/judge.py) ---------------------------------------------------------------------


class Environment(TypedDict, total=False):
    gpu: str
    capability: str
    sm_count: int
    memory_gib: float


class Judged(TypedDict, total=False):
    shape: int
    case: int
    reference_aliases: list[str]
    skipped: bool
    correct: bool
    reason: str
    max_abs_err: float | None
    max_rel_err: float | None
    precision: dict[str, Any]
    bytes: int  # the candidate's output bytes compared
    on_device: bool  # read where the candidate left them on the GPU
    largest_elements: int  # the largest input or reference output (generalization.index_limited)
    decoy_correct: bool  # the decoy child's silenced output on this case (decoy.judge_silenced)
    decoy_reason: str
    cached: bool  # a warm judge's: the reference's outputs came from its cache


class Baselines(TypedDict, total=False):
    shape: int
    graphs: bool
    eager_ms: list[float]
    compile_ms: list[float]
    sota_ms: list[float]
    compile_warmed: bool  # the compiled model the command line's warm-up left (roles/judge.py)


class BaselineError(TypedDict, total=False):
    shape: int
    baseline: str  # "compile" or "sota"
    message: str


class GraderErrorReport(TypedDict):
    """event "grader_error": the judge's or the probe's own failure, never the solution's."""

    shape: int
    cause: str  # "out_of_memory", "reference_failed" or "task_error"
    message: str


# ---- probe, build, decoy ------------------------------------------------------------------------


class Probe(TypedDict, total=False):
    """feasibility.VISIBLE_KEYS, and one verdict per drawn shape probed."""

    visible_index: int
    visible_peak_bytes: int
    visible_footprint_bytes: int | None
    visible_output_bytes: int | None
    meta_supported: bool
    total_bytes: int
    budget_bytes: int
    shapes: list[dict[str, Any]]


class Build(TypedDict, total=False):
    status: str  # builds.BUILT, FAILED or DEFERRED
    reason: str
    error: str
    extensions: dict[str, Any]


class Decoy(TypedDict, total=False):
    """decoy.run_child: the silenced run's failure, or how many launches and calls it skipped,
    how many it could not stand in for, and its own kernels that still ran."""

    failed: str
    silenced: int
    unrecorded: int
    own_kernels: list[str]


class Served(TypedDict):
    """event "served": a warm judge (child.warm_main) has ended one job, or a prepared child
    one prelude (child.prepared_main); `code` is what a one-job child would have exited with
    (0 done, 3 a stage error, 1 anything else)."""

    code: int


class TimingGate(TypedDict):
    """event "timing_gate": the candidate waited this long at its timing gate for the command
    line's warm-up (preludes.py) before it timed anything."""

    waited_s: float


# ---- preludes (roles/prelude.py) ----------------------------------------------------------------


class Analysis(TypedDict, total=False):
    """event "analysis": a KernelBench file's analysis, done by the probe's child for the
    command line (taskspec.load_task takes it where `sha256` is of the same bytes): its shape
    rules, or `error`, the grading process's own words for a file it refuses."""

    sha256: str
    shape: dict[str, int]
    rules: dict[str, Any]
    fixed_reason: str
    error: str


class Warmed(TypedDict):
    """event "warmed": the judge's child compiled the torch.compile baseline ahead of the
    judge's job, in `seconds`."""

    seconds: float


class JudgeCache(TypedDict):
    """event "judge_cache": a warm judge's reference cache after one job (reference_cache.py):
    this job's hits and misses, and what the cache holds."""

    hits: int
    misses: int
    entries: int
    held_bytes: int
    budget_bytes: int


class StepSeconds(TypedDict, total=False):
    """event "steps" (steps.py, only where EvaluateOptions.trace_steps): where a child's time
    went in one case (shape, case) or one stage of a shape (shape, stage), by step."""

    shape: int
    case: int
    stage: str
    seconds: dict[str, float]


# Every event, by name: the role that sends it and its fields.
MESSAGES: dict[str, tuple[str, type]] = {
    "done": ("every role", Done),
    "error": ("every role", Error),
    "prepared": ("every role", Prepared),
    "started": ("candidate", Done),
    "compiled": ("candidate", Compiled),
    "build_failed": ("candidate", BuildFailed),
    "constructed": ("candidate", Constructed),
    "case": ("candidate", CaseReport),
    "case_done": ("candidate", CaseDone),
    "shape_error": ("candidate", ShapeError),
    "timing_begin": ("candidate", TimingBegin),
    "side_stream": ("candidate", SideStream),
    "timing_end": ("candidate", TimingEnd),
    "tampered": ("candidate", Tampered),
    "audit": ("candidate", Audit),
    "device_outputs": ("candidate", DeviceOutputs),
    "environment": ("judge", Environment),
    "judged": ("judge", Judged),
    "baselines": ("judge", Baselines),
    "baseline_error": ("judge", BaselineError),
    "grader_error": ("judge, probe", GraderErrorReport),
    "probe": ("probe", Probe),
    "build": ("build", Build),
    "decoy": ("decoy", Decoy),
    "steps": ("candidate, judge", StepSeconds),
    "served": ("warm judge; a child after a prelude", Served),
    "timing_gate": ("candidate", TimingGate),
    "analysis": ("probe, prelude", Analysis),
    "warmed": ("judge, prelude", Warmed),
    "judge_cache": ("judge", JudgeCache),
}
