"""Which verdicts are ranked: passed, unflagged and timed; a CPU grading never is."""

import pytest

from evaluator.engine.cli import render_verdict
from evaluator.engine.result import EvalResult, Flag


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
