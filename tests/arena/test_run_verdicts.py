"""One verdict per kind of run, read the same from a score row, a grading and a run; flags before
failures, grader errors before both; never green for a run that does not count."""

import re
from pathlib import Path

import pytest

from arena.run_verdicts import (
    FAILED,
    FLAG_MEANINGS,
    FLAGGED,
    GRADER_ERROR,
    KINDS,
    PENDING,
    RANKED,
    TRANSCRIPT_ONLY,
    UNRANKED_CPU,
    performance_gate_reading,
    verdict_of,
    verdict_of_grading,
    verdict_of_run,
    verdict_of_score,
)
from tests.leaderboard.factories import grader_result

DOCS = Path(__file__).resolve().parents[2] / "docs"


def score_row(**fields) -> dict:
    row = {
        "status": "passed",
        "compiled": True,
        "correct": True,
        "flag_codes": "",
        "gpu": "NVIDIA H200",
        "unseen_correct": 0,
        "unseen_total": 0,
    }
    return {**row, **fields}


def test_only_a_ranked_run_is_green_and_only_ranked_flagged_and_failed_runs_count():
    assert [code for code, kind in KINDS.items() if kind.tone == "pass"] == [RANKED]
    assert {code for code, kind in KINDS.items() if kind.counts} == {RANKED, FLAGGED, FAILED}
    assert len({kind.label for kind in KINDS.values()}) == len(KINDS)  # one word per meaning


def test_a_passed_grading_with_flags_is_flagged_with_its_codes_sorted():
    verdict = verdict_of(status="passed", flag_codes=["no_own_kernel", "forbidden_op"])
    assert verdict.code == FLAGGED and verdict.tone == "flag"
    assert verdict.flags == ("forbidden_op", "no_own_kernel")
    assert verdict.headline == "flagged: forbidden_op, no_own_kernel"
    assert verdict.flag_links()[0] == ("forbidden_op", FLAG_MEANINGS["forbidden_op"])


def test_flags_come_before_a_failure_and_a_grader_error_before_both():
    assert verdict_of(status="failed", flag_codes=["overfit"]).code == FLAGGED
    assert verdict_of(status="error", flag_codes=["overfit"]).code == GRADER_ERROR


def test_a_cpu_grading_that_passed_is_unranked_and_one_that_failed_is_failed():
    assert verdict_of(status="passed", on_cpu=True).code == UNRANKED_CPU
    assert verdict_of(status="failed", on_cpu=True, failed_gate="correctness").code == FAILED


def test_unfinished_gradings_are_pending_and_a_timeout_fails_on_the_time_limit():
    assert verdict_of(status="queued").code == PENDING
    assert verdict_of(status="running").code == PENDING
    timed_out = verdict_of(status="timeout")
    assert (timed_out.code, timed_out.gate) == (FAILED, "time limit")


@pytest.mark.parametrize(
    ("fields", "code", "gate"),
    [
        ({}, RANKED, ""),
        ({"gpu": "cpu"}, UNRANKED_CPU, ""),
        ({"status": "failed", "compiled": False, "correct": False}, FAILED, "compile"),
        ({"status": "failed", "correct": False}, FAILED, "correctness"),
        ({"status": "failed", "unseen_correct": 3, "unseen_total": 5}, FAILED, "generalization"),
        ({"status": "passed", "flag_codes": ",tampering,"}, FLAGGED, ""),
        ({"status": "error", "compiled": False}, GRADER_ERROR, ""),
    ],
)
def test_a_score_row_reads_as_its_verdict_with_the_failing_gate(fields, code, gate):
    verdict = verdict_of_score(score_row(**fields))
    assert (verdict.code, verdict.gate) == (code, gate)


def test_a_grading_names_its_first_failing_gate_with_the_reason():
    result = grader_result(outcome="incorrect")
    verdict = verdict_of_grading(status="failed", device="cuda", result=result)
    assert (verdict.code, verdict.gate) == (FAILED, "correctness")
    assert verdict.headline == "failed: correctness"
    no_compile = grader_result(outcome="no_compile")
    verdict = verdict_of_grading(status="failed", device="cuda", result=no_compile)
    assert (verdict.gate, verdict.reason) == ("compile", "SyntaxError at line 3")


def test_a_grader_error_quotes_the_gate_it_stopped_at_not_the_gates_never_run():
    result = grader_result(outcome="error")
    verdict = verdict_of_grading(status="error", device="cuda", result=result)
    assert (verdict.code, verdict.reason) == (GRADER_ERROR, "the reference could not run")


def test_a_slow_correct_grading_fails_the_performance_gate_and_is_still_ranked():
    result = grader_result(speedup=0.2)
    result["gates"]["performance"] = {"passed": False, "reason": "0.20x eager: slower"}
    assert verdict_of_grading(status="passed", device="cuda", result=result).code == RANKED


def test_a_run_without_a_grading_is_transcript_only_pending_or_failed_for_want_of_a_solution():
    assert verdict_of_run(run_status="done", has_trajectory=True).code == TRANSCRIPT_ONLY
    assert verdict_of_run(run_status="agent_running", has_trajectory=True).code == PENDING
    assert verdict_of_run(run_status="done", has_trajectory=True, grading_pending=True).code == (
        PENDING
    )
    lost = verdict_of_run(run_status="failed", has_trajectory=False, failure_reason="no_solution")
    assert (lost.code, lost.gate) == (FAILED, "no solution")
    sandbox = verdict_of_run(
        run_status="failed", has_trajectory=False, failure_reason="sandbox_error"
    )
    assert sandbox.code == GRADER_ERROR  # the platform's failure, not the agent's
    graded = verdict_of(status="passed")
    assert verdict_of_run(run_status="done", has_trajectory=True, grading=graded) is graded


def test_a_stored_performance_gate_is_read_again_at_the_boundary():
    """Gradings stored before the grader said "not faster" at 1.00x read as it says now."""
    old = {"passed": False, "reason": "1.00x eager (geometric mean): slower than PyTorch eager"}
    read = performance_gate_reading(old, 0.99997)
    assert read["reason"] == "1.00x eager (geometric mean): not faster than PyTorch eager"
    assert read["passed"] is False
    above = performance_gate_reading(old, 1.0006)
    assert above["passed"] is True and "faster than PyTorch eager, by 0.06%" in above["reason"]
    died = {"passed": False, "reason": "the solution's process ended while being timed"}
    assert performance_gate_reading(died, 0.5) == died  # a reason of another kind stays
    assert performance_gate_reading({"passed": None, "reason": "not run"}, 2.0)["passed"] is None


def test_every_flag_code_the_docs_list_has_words_on_the_pages():
    table = (DOCS / "result-schema.md").read_text().split("## Flags", 1)[1]
    documented = set(re.findall(r"^\| `([a-z_]+)`(?:, `([a-z_]+)`)? \|", table, re.M))
    codes = {code for pair in documented for code in pair if code}
    assert codes and codes <= set(FLAG_MEANINGS), codes - set(FLAG_MEANINGS)
