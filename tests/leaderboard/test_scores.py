"""Leaderboard scores against examples computed by hand, in Python and in SQL."""

import math

import pytest

from evaluator.engine.scoring import geomean
from leaderboard.scores import (
    RunRecord,
    agent_score,
    fast_p,
    mean_and_spread,
    split_by_repeat,
)


def run(
    task,
    *,
    compiled=True,
    correct=True,
    ranked=True,
    speedup=None,
    roofline=None,
    unseen=(0, 0),
    overfit=False,
    flagged=False,
    tokens=0,
    cost=None,
    repeat=1,
):
    return RunRecord(
        agent="a",
        task=task,
        category="torch2triton",
        compiled=compiled,
        correct=correct,
        ranked=ranked,
        speedup=speedup,
        roofline_fraction=roofline,
        unseen_correct=unseen[0],
        unseen_total=unseen[1],
        overfit=overfit,
        flagged=flagged,
        tokens=tokens,
        cost_usd=cost,
        repeat=repeat,
    )


RECORDS = [
    run("t1", speedup=2.0, roofline=0.5, unseen=(5, 5), tokens=1000, cost=0.5),
    run("t2", speedup=0.5, roofline=0.2, unseen=(3, 5), tokens=3000, cost=1.5),
    run("t3", compiled=False, correct=False, tokens=2000),
    run("t4", correct=False, unseen=(0, 0), tokens=2000, cost=1.0),
    # Correct but flagged (say, tampering): attempted, compiled, never correct or fast.
    run("t5", ranked=False, speedup=10.0, roofline=0.9, flagged=True, tokens=2000, cost=2.0),
]


def test_fast_p_counts_correct_and_faster_runs_over_all_attempted():
    assert fast_p(RECORDS, 0.0) == pytest.approx(2 / 5)
    assert fast_p(RECORDS, 1.0) == pytest.approx(1 / 5)
    assert fast_p(RECORDS, 1.5) == pytest.approx(1 / 5)
    assert fast_p(RECORDS, 2.0) == 0.0  # strictly faster than 2x
    assert fast_p([], 1.0) == 0.0


def test_agent_score_by_hand():
    score = agent_score("a", RECORDS)
    assert score.runs == 5 and score.tasks_attempted == 5
    assert score.compile_rate == pytest.approx(4 / 5)
    assert score.correctness_rate == pytest.approx(2 / 5)
    assert score.speedup_geomean_correct == pytest.approx(math.sqrt(2.0 * 0.5))
    # Failures and the flagged run count as 1x: (2 * 0.5 * 1 * 1 * 1) ** (1/5) = 1.
    assert score.speedup_geomean_all == pytest.approx(1.0)
    assert score.roofline_geomean == pytest.approx(math.sqrt(0.5 * 0.2))
    # Correct on seen shapes: t1 (5 of 5 unseen), t2 (3 of 5), t5 has no unseen shapes.
    assert score.generalization_pass_rate == pytest.approx(8 / 10)
    assert score.flagged == 1
    assert score.per_task_speedups == {"t1": [2.0], "t2": [0.5]}
    # 10,000 tokens over 5 runs; cost known for 4 runs: (0.5 + 1.5 + 1 + 2) / 4.
    assert score.tokens_per_run == pytest.approx(2000)
    assert score.cost_per_run_usd == pytest.approx(1.25)


def test_mean_and_spread_over_repeats_by_hand():
    records = [
        run("t1", speedup=4.0, repeat=1),
        run("t2", correct=False, ranked=False, repeat=1),
        run("t1", speedup=1.0, repeat=2),  # correct but not faster than 1x
        run("t2", speedup=0.25, repeat=2),
    ]
    assert list(split_by_repeat(records)) == [1, 2]
    score = agent_score("a", records)
    # fast_1 per repeat: 1/2 and 0/2 -> mean 0.25, sample sd sqrt(2 * 0.25^2) = 0.3536.
    assert score.repeats == 2
    assert score.fast_1_repeats == pytest.approx((0.25, math.sqrt(0.125)))
    # geomean over all: repeat 1 sqrt(4 * 1) = 2, repeat 2 sqrt(1 * 0.25) = 0.5.
    assert score.speedup_geomean_all_repeats == pytest.approx((1.25, math.sqrt(2 * 0.75**2)))


def test_overfit_runs_are_counted():
    score = agent_score(
        "a", [run("t1", correct=True, ranked=False, unseen=(0, 5), overfit=True, flagged=True)]
    )
    assert score.overfit_count == 1
    assert score.generalization_pass_rate == 0.0
    assert score.correctness_rate == 0.0


def test_geomean_ignores_missing_values():
    assert geomean([4.0, None, 1.0]) == pytest.approx(2.0)
    assert geomean([]) is None


def test_mean_and_spread():
    assert mean_and_spread([1.0, 2.0, 3.0]) == pytest.approx((2.0, 1.0))
    assert mean_and_spread([1.5]) == (1.5, 0.0)
    assert mean_and_spread([]) is None
