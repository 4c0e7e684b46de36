"""Gate decisions from typed facts (grader/gates.py): no child, no file."""

from grader.gates import (
    CandidateFacts,
    correctness_gate,
    early_gates,
    final_status,
    generalization_gate,
    index_limited_reasons,
)
from grader.generalization import INDEX_LIMIT_ELEMENTS
from grader.result import Flag, Gate, ShapeRow


def facts(**changes) -> CandidateFacts:
    base = {
        "compiled": True,
        "timed_out": False,
        "error_stage": None,
        "error_message": None,
        "done": True,
        "seen_cases_finished": True,
        "timing_interrupted": None,
        "exit_description": "the process exited with code 1 before reporting a result",
        "log_tail": "",
    }
    return CandidateFacts(**{**base, **changes})


def test_a_clean_run_goes_on_to_the_judge_with_compile_passed():
    decision = early_gates(facts(), timeout_s=300)
    assert decision.stop is None and decision.gates["compile"].passed is True


def test_a_timeout_before_import_fails_compile_and_after_it_correctness():
    before = early_gates(facts(compiled=False, timed_out=True), timeout_s=30)
    after = early_gates(facts(timed_out=True), timeout_s=30)
    assert before.gates["compile"].reason == "timed out after 30 s"
    assert after.gates["correctness"].reason == "timed out after 30 s"
    assert before.stop.status == after.stop.status == "timeout"


def test_a_silent_exit_names_the_exit_and_a_construct_error_its_gate():
    silent = early_gates(facts(compiled=False), timeout_s=300)
    assert silent.gates["compile"].detail["error"].startswith("the process exited")
    built = early_gates(facts(error_stage="construct", error_message="boom"), timeout_s=300)
    assert built.gates["correctness"].reason == "ModelNew could not be constructed"
    assert built.stop.reward == -4.0


def test_a_process_that_died_while_timed_fails_performance():
    decision = early_gates(facts(done=False, timing_interrupted={"N": 4}), timeout_s=300)
    assert decision.gates["performance"].passed is False
    assert "{'N': 4}" in decision.gates["performance"].reason
    assert decision.stop.status == "failed"


def test_correctness_names_the_first_wrong_visible_shape():
    rows = [
        ShapeRow({"N": 1}, True, correct=True),
        ShapeRow({"N": 2}, True, correct=False, reason="NaN"),
    ]
    gate = correctness_gate(rows, {})
    assert gate.passed is False and gate.reason == "incorrect on shape {'N': 2}: NaN"


def test_an_untimed_correct_run_has_no_reward_and_a_wrong_one_minus_two():
    gates = {"correctness": Gate(True), "generalization": Gate(None)}
    assert final_status(gates, timed=False, speedup_vs_eager=None).reward is None
    assert final_status(gates, timed=True, speedup_vs_eager=1.5).reward == 0.5
    gates["generalization"] = Gate(False)
    assert final_status(gates, timed=True, speedup_vs_eager=1.5).reward == -2.0


def unseen_row(n: int, correct: bool, reason: str = "") -> ShapeRow:
    return ShapeRow(shape={"n": n}, seen=False, correct=correct, reason=reason)


def test_generalization_passes_on_every_unseen_shape_and_reports_the_rate():
    decided = generalization_gate(
        [unseen_row(1, True), unseen_row(2, True)],
        {"unseen_drawn": 5},
        seen_correct=True,
        fixed_reason="",
    )
    assert decided.gate == Gate(
        True, "correct on all 2 unseen shapes", {"unseen_drawn": 5, "unseen_shapes": 2}
    )
    assert decided.pass_rate == 1.0 and decided.overfit is None


def test_a_wrong_unseen_shape_fails_generalization_and_is_overfit_only_where_visible_passed():
    rows = [unseen_row(1, True), unseen_row(2, False, "max abs err 3.0")]
    overfit = generalization_gate(rows, {}, seen_correct=True, fixed_reason="")
    assert overfit.gate.passed is False
    assert (
        overfit.gate.reason == "incorrect on 1 of 2 unseen shapes, e.g. {'n': 2}: max abs err 3.0"
    )
    assert overfit.pass_rate == 0.5
    assert overfit.overfit == Flag(
        "overfit", "correct on the visible shapes but not on 1 unseen shapes"
    )
    # Wrong on the visible shapes too: a wrong solution, not an overfit one.
    wrong = generalization_gate(rows, {}, seen_correct=False, fixed_reason="")
    assert wrong.gate.passed is False and wrong.overfit is None


def test_no_unseen_shape_graded_is_never_the_solutions_failure():
    limited = generalization_gate(
        [], {"index_limited": [{"n": 9}]}, seen_correct=True, fixed_reason=""
    )
    assert limited.gate.passed is None and "32-bit index limit" in limited.gate.reason
    unrunnable = generalization_gate(
        [],
        {"unseen_drawn": 4, "unseen_rejected_example": "n=99"},
        seen_correct=True,
        fixed_reason="",
    )
    assert unrunnable.gate.passed is None
    assert "of 4 drawn, none can be run" in unrunnable.gate.reason
    assert "(e.g. n=99)" in unrunnable.gate.reason
    fixed = generalization_gate([], {}, seen_correct=True, fixed_reason="a fixed-size task")
    assert fixed.gate == Gate(None, "no unseen shapes: a fixed-size task", {"unseen_shapes": 0})
    assert None is fixed.pass_rate is limited.pass_rate is unrunnable.pass_rate


def test_failures_past_the_index_limit_are_set_apart_only_where_every_visible_shape_is_below():
    shapes = [{"seen": True}, {"seen": False}, {"seen": False}]
    rows = [
        ShapeRow(shape={"n": 1}, seen=True, correct=True),
        unseen_row(2, True),
        unseen_row(3, False, "illegal address"),
    ]
    below, past = INDEX_LIMIT_ELEMENTS - 1, INDEX_LIMIT_ELEMENTS
    reasons = index_limited_reasons(shapes, rows, {0: below, 1: below, 2: past})
    assert list(reasons) == [2]
    assert reasons[2].startswith(f"past {INDEX_LIMIT_ELEMENTS:,} elements")
    assert reasons[2].endswith("not counted (illegal address)")
    assert rows[2].reason == "illegal address"  # decided, not applied
    # A visible shape past the limit too: the solution had to handle it; nothing is set apart.
    assert index_limited_reasons(shapes, rows, {0: past, 1: below, 2: past}) == {}
    # A shape the judge did not measure counts as not known: nothing is set apart.
    assert index_limited_reasons(shapes, rows, {1: below, 2: past}) == {}
