"""Gate decisions from typed facts (grader/gates.py): no child, no file."""

from grader.gates import CandidateFacts, correctness_gate, early_gates, final_status
from grader.result import Gate, ShapeRow


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
