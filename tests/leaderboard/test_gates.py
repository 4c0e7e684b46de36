"""A grading's gates, read once: the run page's table and the grader's log say the same."""

from leaderboard.gates import gate_lines, gate_rows

GATES = {
    "compile": {"passed": True, "reason": "built"},
    "correctness": {"passed": False, "reason": "shape 2 differs", "detail": {"error": "max 3.1"}},
    "performance": {"passed": None, "reason": "not timed"},
    "generalization": "skipped by the plan",
}


def test_rows_keep_the_graders_order_and_read_each_outcome():
    rows = gate_rows(GATES)
    assert [(r.name, r.outcome) for r in rows] == [
        ("compile", "pass"),
        ("correctness", "fail"),
        ("performance", "skip"),
        ("generalization", "skip"),
    ]
    assert rows[1].error == "max 3.1"
    assert rows[3].bare and rows[3].reason == "skipped by the plan"
    assert gate_rows(None) == []


def test_the_log_prints_each_gate_with_its_error_output():
    lines = [line for row in gate_rows(GATES) for line in gate_lines(row)]
    assert lines == [
        "compile: PASS built",
        "correctness: FAIL shape 2 differs",
        "  error:",
        "max 3.1",
        "performance: not run not timed",
        "generalization: skipped by the plan",
    ]
