"""A failure that appears only past the index limit (2^31 elements; lowered here to 4096 so the
CPU can reach it), where every visible shape is below it, is reported as that limit, not as
overfit."""

from pathlib import Path

from grader import EvaluateOptions, evaluate, generalization
from tests.processes import fresh_interpreter

HERE = Path(__file__).resolve().parent
TASK = HERE / "tasks" / "relu_sized"
SOLUTION = HERE / "solutions" / "relu_32bit_offsets.py"


def test_a_failure_only_past_the_index_limit_is_that_limit_not_overfit(monkeypatch):
    monkeypatch.setattr(generalization, "INDEX_LIMIT_ELEMENTS", 4096)
    options = EvaluateOptions(timeout_s=180, hidden_seed="index-limit-test")
    result = evaluate(TASK, SOLUTION, "cpu", options)
    gate = result.gates["generalization"]
    limited = gate.detail["index_limited"]
    assert limited and all(shape["N"] >= 4096 for shape in limited)
    assert gate.passed is True, gate.reason
    assert "the 32-bit index limit, not overfit" in gate.reason
    assert [flag.code for flag in result.flags] == []
    rows = [r for r in result.per_shape if not r.seen and r.shape in limited]
    assert all(r.correct is False and "32-bit index limit" in r.reason for r in rows)


def test_the_same_failure_where_the_visible_shape_is_past_the_limit_is_overfit(monkeypatch):
    monkeypatch.setattr(generalization, "INDEX_LIMIT_ELEMENTS", 2048)
    options = EvaluateOptions(timeout_s=180, hidden_seed="index-limit-test")
    result = evaluate(TASK, SOLUTION, "cpu", options)
    assert result.gates["generalization"].passed is False
    assert "overfit" in {flag.code for flag in result.flags}


def test_the_meta_warm_up_runs_once_on_a_gpu_and_leaves_the_compiler_unimported():
    # In a fresh interpreter, as the command line's grading process: nothing off the GPU; on
    # it one thread per process, whose meta run imports sympy (the first run's cost) and not
    # the compiler.
    code = (
        "import importlib, sys\n"
        "evaluate = importlib.import_module('grader.evaluate')\n"
        "evaluate._warm_meta_ahead('cpu')\n"
        "print(len(evaluate._META_WARMUP))\n"
        "evaluate._warm_meta_ahead('cuda')\n"
        "evaluate._warm_meta_ahead('cuda')\n"
        "print(len(evaluate._META_WARMUP))\n"
        "evaluate._META_WARMUP[0].join()\n"
        "print('sympy' in sys.modules, 'torch._dynamo' in sys.modules)\n"
    )
    assert fresh_interpreter(code)[-3:] == ["0", "1", "True False"]
