"""The grader's verdict, as documented in docs/result-schema.md."""

from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("passed", "failed", "error", "timeout")
GATES = ("compile", "correctness", "performance", "generalization")

# KernelBench's dense reward for outcomes other than "correct" (speedup - 1 then; None when
# correct but untimed, on the CPU, where no speed was measured that a reward could stand for).
REWARD_INCORRECT = -2.0
REWARD_RUNTIME_FAILURE = -3.0
REWARD_NOT_CONSTRUCTED = -4.0
REWARD_NOT_COMPILED = -5.0
REWARD_TIMEOUT_OR_SANDBOX = -7.0


@dataclass
class Gate:
    passed: bool | None = None
    reason: str = "not run"
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Timing:
    median: float
    p10: float
    p90: float


@dataclass
class ShapeRow:
    shape: dict[str, int]
    seen: bool
    correct: bool | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    candidate_ms: Timing | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    sota_ms: float | None = None
    tflops: float | None = None
    gbps: float | None = None
    roofline_fraction: float | None = None
    reason: str = ""


@dataclass
class Flag:
    code: str
    message: str


@dataclass
class EvalResult:
    status: str = "error"
    gates: dict[str, Gate] = field(default_factory=lambda: {name: Gate() for name in GATES})
    per_shape: list[ShapeRow] = field(default_factory=list)
    summary: dict[str, float | None] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)
    reward: float | None = REWARD_TIMEOUT_OR_SANDBOX
    environment: dict[str, Any] = field(default_factory=dict)
    task: dict[str, Any] = field(default_factory=dict)
    task_version: str = ""
    solution_hash: str = ""
    device: str = ""
    wall_s: float = 0.0
    # Where wall_s went, in seconds (evaluate._phases): setup, probe, candidate_*, judge, other.
    phases: dict[str, float] = field(default_factory=dict)
    log: str = ""

    @property
    def ranked(self) -> bool:
        """Passed, unflagged and timed: a CPU grading measures no speed, so it is never ranked."""
        return self.status == "passed" and not self.flags and self.device != "cpu"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ranked"] = self.ranked
        return data
