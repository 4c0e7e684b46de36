"""Gate decisions as pure functions of typed facts: no process, no file, no message parsing.

outcomes.py turns a finished child's messages into facts (CandidateFacts, each shape's largest
tensor); evaluate.py applies what these functions decide. The gates are decided here, the
performance gate in scoring.py; the flags in verdicts.py and scoring.py, but for `overfit`,
which the generalization gate decides here.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.generalization import INDEX_LIMIT_ELEMENTS, index_limited
from grader.result import (
    REWARD_INCORRECT,
    REWARD_NOT_COMPILED,
    REWARD_NOT_CONSTRUCTED,
    REWARD_RUNTIME_FAILURE,
    REWARD_TIMEOUT_OR_SANDBOX,
    Flag,
    Gate,
    ShapeRow,
)


@dataclass(frozen=True)
class CandidateFacts:
    """What the candidate's child did, as far as the early gates care."""

    compiled: bool
    timed_out: bool
    # The first run-wide error the child reported: its stage and message.
    error_stage: str | None
    error_message: str | None
    done: bool
    seen_cases_finished: bool
    # The shape whose timing began and never ended, where the process died without a word.
    timing_interrupted: dict[str, int] | None
    exit_description: str
    log_tail: str


@dataclass(frozen=True)
class Stop:
    """The evaluation ends here: its status and reward."""

    status: str
    reward: float | None


@dataclass
class Decision:
    gates: dict[str, Gate] = field(default_factory=dict)
    stop: Stop | None = None


def early_gates(facts: CandidateFacts, *, timeout_s: float) -> Decision:
    """Compile, construct, crash, timeout and timing-abort outcomes on the visible shapes; no
    stop where the candidate ran every visible case and the judge is needed."""
    decision = Decision()
    if facts.compiled:
        decision.gates["compile"] = Gate(True, "imported and defines ModelNew")
    if facts.timed_out:
        stage = "correctness" if facts.compiled else "compile"
        decision.gates[stage] = Gate(False, f"timed out after {timeout_s:g} s")
        decision.stop = Stop("timeout", REWARD_TIMEOUT_OR_SANDBOX)
        return decision
    message = facts.error_message or facts.exit_description
    if not facts.compiled:
        decision.gates["compile"] = Gate(False, "did not compile", {"error": message})
        decision.stop = Stop("failed", REWARD_NOT_COMPILED)
        return decision
    if facts.error_stage == "construct":
        decision.gates["correctness"] = Gate(
            False, "ModelNew could not be constructed", {"error": facts.error_message}
        )
        decision.stop = Stop("failed", REWARD_NOT_CONSTRUCTED)
        return decision
    if facts.error_stage is not None or (not facts.done and not facts.seen_cases_finished):
        decision.gates["correctness"] = Gate(False, "failed while running", {"error": message})
        decision.stop = Stop("failed", REWARD_RUNTIME_FAILURE)
        return decision
    if facts.timing_interrupted is not None:
        decision.gates["performance"] = Gate(
            False,
            f"the solution's process ended while being timed on shape {facts.timing_interrupted}",
            {"error": facts.exit_description, "log": facts.log_tail[-4000:]},
        )
        decision.stop = Stop("failed", REWARD_RUNTIME_FAILURE)
    return decision


def correctness_gate(seen: list[ShapeRow], detail: dict[str, object]) -> Gate:
    failing = next((r for r in seen if not r.correct), None)
    if failing is not None:
        return Gate(False, f"incorrect on shape {failing.shape}: {failing.reason}", detail)
    return Gate(True, "all visible shapes match", detail)


def index_limited_reasons(
    shapes: Sequence[Mapping[str, Any]], rows: Sequence[ShapeRow], largest: Mapping[int, int]
) -> dict[int, str]:
    """The failed unseen shapes past the 32-bit index limit where every visible shape is below it
    (generalization.index_limited), given each shape's largest tensor as the judge saw it, by
    index, each with the reason its row then reads. The generalization gate counts them
    neither way."""
    failed = [i for i, r in enumerate(rows) if not r.seen and r.correct is False]
    return {
        i: (
            f"past {INDEX_LIMIT_ELEMENTS:,} elements, where every visible shape is below it: "
            f"the 32-bit index limit, not counted ({rows[i].reason})"
        )
        for i in index_limited(shapes, failed, largest)
    }


@dataclass(frozen=True)
class Generalization:
    """The generalization gate, the pass rate on the graded unseen shapes (None where none was
    graded) and the `overfit` flag where the visible shapes passed and an unseen one did not."""

    gate: Gate
    pass_rate: float | None = None
    overfit: Flag | None = None


def generalization_gate(
    unseen: Sequence[ShapeRow],
    detail: Mapping[str, Any],
    *,
    seen_correct: bool,
    fixed_reason: str,
) -> Generalization:
    """From the graded unseen shapes (those past the index limit already set apart), the gate's
    detail so far (the screening of the drawn shapes, `index_limited`), whether every visible
    shape was correct, and the task's reason for having no generalization rules."""
    detail = dict(detail, unseen_shapes=len(unseen))
    limited = detail.get("index_limited")
    if not unseen and limited:
        return Generalization(
            Gate(
                None,
                f"no unseen shape below {INDEX_LIMIT_ELEMENTS:,} elements was graded; wrong past "
                f"it on {limited}: the 32-bit index limit, not overfit",
                detail,
            )
        )
    if not unseen and detail.get("unseen_drawn"):
        example = detail.get("unseen_rejected_example") or "?"
        return Generalization(
            Gate(
                None,
                f"no unseen shape was graded: of {detail['unseen_drawn']} drawn, none can be run "
                f"by the reference within the memory budget (e.g. {example}); this is not the "
                "solution's failure",
                detail,
            )
        )
    if not unseen:
        reason = fixed_reason or "the task has no generalization rules"
        return Generalization(Gate(None, f"no unseen shapes: {reason}", detail))
    passed = sum(1 for r in unseen if r.correct)
    rate = passed / len(unseen)
    if passed == len(unseen):
        limit = (
            f"; wrong past {INDEX_LIMIT_ELEMENTS:,} elements on {limited}: "
            "the 32-bit index limit, not overfit"
            if limited
            else ""
        )
        return Generalization(
            Gate(True, f"correct on all {len(unseen)} unseen shapes{limit}", detail), rate
        )
    failing = next(r for r in unseen if not r.correct)
    wrong = len(unseen) - passed
    gate = Gate(
        False,
        f"incorrect on {wrong} of {len(unseen)} unseen shapes, e.g. "
        f"{failing.shape}: {failing.reason}",
        detail,
    )
    overfit = (
        Flag("overfit", f"correct on the visible shapes but not on {wrong} unseen shapes")
        if seen_correct
        else None
    )
    return Generalization(gate, rate, overfit)


def final_status(gates: dict[str, Gate], *, timed: bool, speedup_vs_eager: float | None) -> Stop:
    """The status and KernelBench's reward once every gate ran."""
    if gates["correctness"].passed is False or gates["generalization"].passed is False:
        return Stop("failed", REWARD_INCORRECT)
    if not timed:
        # Correct, but nothing was timed: no reward, rather than one that reads as 1x.
        return Stop("passed", None)
    return Stop("passed", (speedup_vs_eager - 1.0) if speedup_vs_eager else 0.0)
