"""Gate decisions as pure functions of typed facts: no process, no file, no message parsing.

outcomes.py turns a finished child's messages into facts (CandidateFacts); evaluate.py applies
what these functions decide. Flags are decided in verdicts.py and scoring.py, the
generalization gate still in evaluate.py (its rules are issue 33's, being settled there).
"""

from dataclasses import dataclass, field

from grader.result import (
    REWARD_INCORRECT,
    REWARD_NOT_COMPILED,
    REWARD_NOT_CONSTRUCTED,
    REWARD_RUNTIME_FAILURE,
    REWARD_TIMEOUT_OR_SANDBOX,
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


def final_status(gates: dict[str, Gate], *, timed: bool, speedup_vs_eager: float | None) -> Stop:
    """The status and KernelBench's reward once every gate ran."""
    if gates["correctness"].passed is False or gates["generalization"].passed is False:
        return Stop("failed", REWARD_INCORRECT)
    if not timed:
        # Correct, but nothing was timed: no reward, rather than one that reads as 1x.
        return Stop("passed", None)
    return Stop("passed", (speedup_vs_eager - 1.0) if speedup_vs_eager else 0.0)
