"""What a run's grading means for the board, in the one vocabulary that the run page, the run
lists, the matrix and the API all use:

- ranked: correct on every shape graded, timed on a GPU, no flag; the only verdict that
  counts as correct (a slow one fails the performance gate and is still ranked).
- flagged: the grader raised a flag (its codes are part of the verdict); counted as attempted,
  never as correct or fast, whatever its gates say.
- failed: a gate failed (the first failing gate is part of the verdict); counted as attempted.
- grader error: the grader (or the platform) failed, not the agent; counted nowhere.
- unranked (CPU): graded on the CPU, where nothing is timed; counted nowhere.
- transcript only: a log with no kernel graded; counted nowhere.
- pending: still running or being graded.

Flagged comes before failed: a solution that both cheats and fails is read for the cheating,
which is what a reader of the board most needs to know of it. A grader error comes before both:
a result the grader could not finish says nothing about the solution.

Plain Python over plain values; `verdict_of_score`, `verdict_of_grading` and `verdict_of_run`
read the rows the pages hold.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from grader.scoring import eager_comparison

RANKED = "ranked"
FLAGGED = "flagged"
FAILED = "failed"
GRADER_ERROR = "grader_error"
UNRANKED_CPU = "unranked_cpu"
TRANSCRIPT_ONLY = "transcript_only"
PENDING = "pending"


@dataclass(frozen=True)
class Kind:
    label: str  # the words every page shows
    tone: str  # the colour: pass (green) is for ranked alone
    counts: bool  # an attempt on the board: ranked, flagged and failed runs are
    meaning: str


KINDS: dict[str, Kind] = {
    RANKED: Kind(
        "ranked",
        "pass",
        True,
        "correct on every shape graded, timed on a GPU, no flag: it counts on the board",
    ),
    FLAGGED: Kind(
        "flagged",
        "flag",
        True,
        "the grader flagged it: counted as attempted, never as correct or fast",
    ),
    FAILED: Kind("failed", "fail", True, "a gate failed: counted as attempted, never as correct"),
    GRADER_ERROR: Kind(
        "grader error",
        "neutral",
        False,
        "the grader failed, not the solution: not counted against the agent",
    ),
    UNRANKED_CPU: Kind(
        "unranked (CPU)",
        "neutral",
        False,
        "graded on the CPU, which checks correctness and times nothing: never ranked",
    ),
    TRANSCRIPT_ONLY: Kind(
        "transcript only",
        "neutral",
        False,
        "a log with no kernel graded: read it, it is not scored",
    ),
    PENDING: Kind("pending", "wait", False, "still running or being graded"),
}
VERDICT_CODES = tuple(KINDS)

# What each of the grader's flag codes means, for the headline's links (docs/result-schema.md
# holds the full table; a test keeps the two in step).
FLAG_MEANINGS: dict[str, str] = {
    "overfit": "correct on the visible shapes, wrong on shapes it never saw",
    "no_own_kernel": "forward() launched no kernel of its own: only aten ops and library kernels",
    "forbidden_op": "forward() called an op the task forbids",
    "decoy_kernel": "with its own kernels turned into no-ops the output was still right: "
    "they did nothing the output needs",
    "library_work": "over half of forward()'s time was outside its own kernels, where the "
    "decoy test could not silence them",
    "exception_fallback": "an except handler returns a result instead of raising",
    "precision_downgrade": "computed in a lower precision than the task's dtype",
    "tampering": "replaced a timer, comparison, synchronization or harness function",
    "file_access": "opened files outside its folder, or another process's /proc entries",
    "network": "connected, bound or resolved a name",
    "background_thread": "threads still running after forward() returned",
    "background_process": "processes still running after forward() returned",
    "side_stream_work": "work continued on another stream after forward() returned",
    "timing_implausible": "the GPU time it claims does not fit the wall clock observed",
    "timing_tampered": "the eager reference timed beside it and in the judge differ by over 2x",
    "roofline_exceeded": "measured above 1.05 times the GPU's peak: the timing cannot be right",
    "impossible_speedup": "faster than the GPU's roofline allows for the work the task does",
}
GATE_ORDER = ("compile", "correctness", "performance", "generalization")  # as the grader runs them
# Gates whose failure fails a grading; a slow run fails the performance gate and still passes.
FAILING_GATES = ("compile", "correctness", "generalization")
_UNFINISHED = ("queued", "running")
_RUN_ACTIVE = ("queued", "preparing", "agent_running", "collecting", "evaluating")
# A run's own failures that are the platform's, not the agent's (Run.FailureReason).
_PLATFORM_FAILURES = ("sandbox_error", "provider_error", "grader_error")


@dataclass(frozen=True)
class Verdict:
    code: str
    flags: tuple[str, ...] = ()  # flagged: the grader's codes, sorted
    gate: str = ""  # failed: the first failing gate, or what ended the run
    reason: str = ""  # failed, grader error: why, where the reader may see it

    @property
    def kind(self) -> Kind:
        return KINDS[self.code]

    @property
    def label(self) -> str:
        return self.kind.label

    @property
    def tone(self) -> str:
        return self.kind.tone

    @property
    def counts(self) -> bool:
        return self.kind.counts

    @property
    def detail(self) -> str:
        """The headline's second half: the flag codes, or the failing gate."""
        if self.code == FLAGGED:
            return ", ".join(self.flags)
        if self.code == FAILED:
            return self.gate
        return ""

    @property
    def headline(self) -> str:
        """ "flagged: forbidden_op, no_own_kernel", "failed: correctness", "ranked"."""
        return f"{self.label}: {self.detail}" if self.detail else self.label

    def flag_links(self) -> list[tuple[str, str]]:
        """(code, meaning) per flag, a code we have no words for explained as such."""
        return [(c, FLAG_MEANINGS.get(c, "a flag of the grader's")) for c in self.flags]


def verdict_of(
    *,
    status: str,
    flag_codes: Iterable[str] = (),
    on_cpu: bool = False,
    failed_gate: str = "",
    reason: str = "",
) -> Verdict:
    """A grading's verdict from its status (the evaluation's), its flags and where it ran.

    Ranked is decided here, not read from a stored flag: passed, unflagged, on a GPU."""
    flags = tuple(sorted({str(c) for c in flag_codes if c}))
    if status in _UNFINISHED or not status:
        return Verdict(PENDING)
    if status == "error":
        return Verdict(GRADER_ERROR, reason=reason)
    if flags:
        return Verdict(FLAGGED, flags=flags)
    if status == "timeout":
        return Verdict(FAILED, gate="time limit", reason=reason)
    if status != "passed":
        return Verdict(FAILED, gate=failed_gate or "grading", reason=reason)
    return Verdict(UNRANKED_CPU) if on_cpu else Verdict(RANKED)


def verdict_of_score(score: Any) -> Verdict:
    """The verdict of a score row (arena.models.RunScore, or a dict of its fields)."""
    row = score if isinstance(score, Mapping) else vars(score)
    gate = ""
    if not row.get("compiled"):
        gate = "compile"
    elif not row.get("correct"):
        gate = "correctness"
    elif (row.get("unseen_correct") or 0) < (row.get("unseen_total") or 0):
        gate = "generalization"
    return verdict_of(
        status=row.get("status") or "",
        flag_codes=str(row.get("flag_codes") or "").split(","),
        on_cpu=row.get("gpu") == "cpu",
        failed_gate=gate,
    )


def verdict_of_grading(*, status: str, device: str, result: Mapping[str, Any]) -> Verdict:
    """The verdict of an evaluation from its result as the reader may see it
    (evaluator.redaction.result_seen): the failing gate named with its reason."""
    gates = result.get("gates") or {}
    flags = [f.get("code") for f in result.get("flags") or [] if isinstance(f, Mapping)]
    gate, reason = _first_failing_gate(gates, error=status == "error")
    on_cpu = device == "cpu" or result.get("device") == "cpu"
    return verdict_of(
        status=status, flag_codes=flags, on_cpu=on_cpu, failed_gate=gate, reason=reason
    )


def _first_failing_gate(gates: Mapping[str, Any], *, error: bool) -> tuple[str, str]:
    """The gate that failed the grading and its reason: the first of FAILING_GATES that failed,
    else the performance gate (a process that died while timed); for a grader error, the first
    gate left undecided with a reason of its own."""
    order = [*FAILING_GATES, "performance"] if not error else [*GATE_ORDER, *gates]
    for name in order:
        gate = gates.get(name)
        if not isinstance(gate, Mapping):
            continue
        reason = str(gate.get("reason") or "")
        if not error and gate.get("passed") is False:
            return name, reason
        if error and gate.get("passed") is None and reason not in ("", "not run"):
            return name, reason
    return "", ""


def verdict_of_run(
    *,
    run_status: str,
    has_trajectory: bool,
    failure_reason: str = "",
    grading: Verdict | None = None,
    grading_pending: bool = False,
) -> Verdict:
    """A run's verdict: its latest finished grading's, else what it holds without one (a
    grading under way, or a log alone)."""
    if grading is not None:
        return grading
    if run_status in _RUN_ACTIVE or grading_pending:
        return Verdict(PENDING)
    if has_trajectory:
        return Verdict(TRANSCRIPT_ONLY)
    if failure_reason in _PLATFORM_FAILURES:
        return Verdict(GRADER_ERROR, reason=failure_reason.replace("_", " "))
    return Verdict(FAILED, gate="no solution", reason=failure_reason.replace("_", " "))


def performance_gate_reading(gate: Mapping[str, Any], speedup: Any) -> dict[str, Any]:
    """The performance gate as the grader words it today, for gradings stored before it said
    "not faster" at 1.00x: the same gate with its reason and pass read again from the speedup."""
    if not isinstance(speedup, int | float) or speedup <= 0 or gate.get("passed") is None:
        return dict(gate)
    if not str(gate.get("reason", "")).endswith("than PyTorch eager"):
        return dict(gate)  # a reason of another kind (the process died while timed, say)
    return {**gate, "passed": speedup > 1.0, "reason": eager_comparison(float(speedup))}
