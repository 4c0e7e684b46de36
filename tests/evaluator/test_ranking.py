"""Which verdicts are ranked: passed, unflagged and timed; a CPU grading never is."""

import pytest

from grader.cli import render_verdict
from grader.result import EvalResult, Flag
from grader.scoring import eager_comparison


@pytest.mark.parametrize(
    ("status", "device", "flags", "ranked"),
    [
        ("passed", "cuda", [], True),
        ("passed", "cpu", [], False),
        ("passed", "cuda", [Flag("overfit", "wrong on unseen shapes")], False),
        ("failed", "cuda", [], False),
        ("error", "cuda", [], False),
    ],
)
def test_only_a_passed_unflagged_gpu_grading_is_ranked(status, device, flags, ranked):
    result = EvalResult(status=status, device=device, flags=flags)
    assert result.ranked is ranked
    assert result.to_dict()["ranked"] is ranked


def test_an_untimed_verdict_says_it_has_no_reward():
    result = EvalResult(status="passed", device="cpu", reward=None)
    assert result.to_dict()["reward"] is None
    assert render_verdict(result).splitlines()[0] == (
        "status: passed   reward: none (untimed)   device: cpu"
    )


@pytest.mark.parametrize(
    ("speedup", "words"),
    [
        (0.0066, "0.0066x eager (geometric mean): slower than PyTorch eager"),
        (0.79, "0.79x eager (geometric mean): slower than PyTorch eager"),
        (0.9997, "1.00x eager (geometric mean): not faster than PyTorch eager"),
        (1.0, "1.00x eager (geometric mean): not faster than PyTorch eager"),
        (1.0006, "1.00x eager (geometric mean): faster than PyTorch eager, by 0.06%"),
        (1.5, "1.50x eager (geometric mean): faster than PyTorch eager"),
    ],
)
def test_the_performance_gate_reads_right_at_the_boundary(speedup, words):
    """1.00x is "not faster", never "slower"; the gate passes where fast_1 counts a run."""
    assert eager_comparison(speedup) == words
