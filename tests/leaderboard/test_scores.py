"""Leaderboard scores against examples computed by hand, in Python and in SQL."""

import math

import pytest

from grader.scoring import geomean
from leaderboard.scores import (
    FAILURE_SPEEDUP,
    RunRecord,
    agent_score,
    bootstrap_interval,
    fast_p,
    mean_and_spread,
    rank_ranges,
    score_intervals,
    speedup_geomean_all,
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
    flag_codes=(),
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
        flag_codes=flag_codes,
    )


RECORDS = [
    run("t1", speedup=2.0, roofline=0.5, unseen=(5, 5), tokens=1000, cost=0.5),
    run("t2", speedup=0.5, roofline=0.2, unseen=(3, 5), tokens=3000, cost=1.5),
    run("t3", compiled=False, correct=False, tokens=2000),
    run("t4", correct=False, unseen=(0, 0), tokens=2000, cost=1.0),
    # Correct but flagged (say, tampering): attempted, compiled, never correct or fast.
    run(
        "t5",
        ranked=False,
        speedup=10.0,
        roofline=0.9,
        flagged=True,
        tokens=2000,
        cost=2.0,
        flag_codes=("tampering", "timing"),
    ),
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
    # Failures and the flagged run count as the 0.01x floor: (2 * 0.5 * 0.01 ** 3) ** (1/5).
    assert score.speedup_geomean_all == pytest.approx(10**-1.2)
    # Over the five runs, the three that are not ranked counting 0.
    assert score.roofline_mean == pytest.approx((0.5 + 0.2) / 5)
    # Ranked and correct on every unseen shape: t1 only (t2 is 3 of 5; t5 is flagged).
    assert score.generalization_pass_rate == pytest.approx(1 / 5)
    assert score.flagged == 1 and score.flagged_share == pytest.approx(1 / 5)
    assert score.flag_counts == {"tampering": 1, "timing": 1}
    assert score.preliminary
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
    # geomean over all: repeat 1 sqrt(4 * 0.01) = 0.2, repeat 2 sqrt(1 * 0.25) = 0.5.
    assert score.speedup_geomean_all_repeats == pytest.approx((0.35, math.sqrt(2 * 0.15**2)))


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


def test_no_failure_scores_above_a_correct_run():
    """The issue's case: an agent that fails everything against one correct at 0.19x."""
    broken = [run(f"t{i}", compiled=False, correct=False, ranked=False) for i in range(5)]
    starter = [run(f"t{i}", speedup=0.19, roofline=0.05, unseen=(2, 2)) for i in range(5)]
    a, b = agent_score("broken", broken), agent_score("starter", starter)
    assert a.speedup_geomean_all == pytest.approx(FAILURE_SPEEDUP)
    assert b.speedup_geomean_all == pytest.approx(0.19)
    for field in ("speedup_geomean_all", "roofline_mean", "generalization_pass_rate"):
        assert getattr(a, field) < getattr(b, field), field
    assert a.correctness_rate < b.correctness_rate and a.fast_p[0.0] < b.fast_p[0.0]


@pytest.mark.parametrize("speedup", [5.0, 1.0, 0.3, 0.001])
def test_turning_a_correct_run_into_a_failure_never_raises_an_aggregate(speedup):
    base = [run("t1", speedup=2.0, roofline=0.4), run("t2", speedup=0.5, roofline=0.1)]
    good = agent_score("a", [*base, run("t3", speedup=speedup, roofline=0.2)])
    bad = agent_score("a", [*base, run("t3", correct=False, ranked=False)])
    assert bad.speedup_geomean_all <= good.speedup_geomean_all
    assert bad.roofline_mean <= good.roofline_mean
    assert bad.generalization_pass_rate <= good.generalization_pass_rate
    assert all(bad.fast_p[p] <= good.fast_p[p] for p in good.fast_p)


def test_a_correct_run_slower_than_the_floor_counts_as_the_floor():
    assert speedup_geomean_all([run("t1", speedup=0.001)]) == pytest.approx(FAILURE_SPEEDUP)
    assert speedup_geomean_all([]) is None


# Bootstrap intervals against distributions worked out by hand. With tasks as the unit, a
# resample of n tasks from values v is the mean of n draws with replacement; its 95% interval
# is the 2.5th and 97.5th percentiles of that distribution.


def test_interval_of_two_tasks_zero_and_one():
    # Two draws from {0, 1}: mean 0 (p 1/4), 1/2 (p 1/2), 1 (p 1/4): 2.5% -> 0, 97.5% -> 1.
    assert bootstrap_interval([[0.0], [1.0]]) == pytest.approx((0.0, 1.0))


def test_interval_of_one_success_in_four_tasks():
    # k successes in 4 draws at p = 1/4: P(k <= 2) = 0.949 < 0.975 <= P(k <= 3) = 0.996, and
    # P(k = 0) = 0.316 > 0.025: the interval is [0, 3/4].
    assert bootstrap_interval([[0.0], [0.0], [0.0], [1.0]]) == pytest.approx((0.0, 0.75))


def test_interval_resamples_the_repeats_within_a_task():
    # One task, two repeats 0 and 1: the task is always drawn, its two runs are resampled:
    # mean 0, 1/2 or 1 as above. Tasks alone would give the degenerate [1/2, 1/2].
    assert bootstrap_interval([[0.0, 1.0]]) == pytest.approx((0.0, 1.0))


def test_interval_of_identical_tasks_is_a_point_and_of_nothing_is_none():
    assert bootstrap_interval([[2.0], [2.0], [2.0, 2.0]]) == pytest.approx((2.0, 2.0))
    assert bootstrap_interval([]) is None and bootstrap_interval([[]]) is None


def test_interval_of_many_tasks_matches_the_normal_approximation():
    # 100 tasks, 30 of them fast: the share's sd is sqrt(0.3 * 0.7 / 100) = 0.0458, so the
    # interval is about 0.3 -+ 1.96 * 0.0458 = [0.21, 0.39].
    low, high = bootstrap_interval([[1.0]] * 30 + [[0.0]] * 70)
    assert low == pytest.approx(0.21, abs=0.02) and high == pytest.approx(0.39, abs=0.02)


def test_score_intervals_name_fast_p_and_the_speedup():
    runs = [("t1", True, 2.0), ("t2", False, None)]
    intervals = score_intervals(runs)
    assert intervals["fast_1"] == pytest.approx((0.0, 1.0))
    assert intervals["fast_2"] == pytest.approx((0.0, 0.0))  # 2.0 is not faster than 2x
    # The speedup's interval is on the geometric mean: ln 2 and ln 0.01 as above, e^mean.
    assert intervals["speedup"] == pytest.approx((FAILURE_SPEEDUP, 2.0))
    assert agent_score("a", [run("t1", speedup=2.0)]).intervals["speedup"] == pytest.approx(
        (2.0, 2.0)
    )


def test_interval_of_a_task_with_many_repeats_uses_their_spread():
    # One task, 100 repeats, half fast: its redrawn share has sd sqrt(0.25 / 100) = 0.05, so
    # about 0.5 -+ 0.098 (past EXACT_REPEATS runs the sum's normal law stands for the draws).
    low, high = bootstrap_interval([[0.0] * 50 + [1.0] * 50])
    assert low == pytest.approx(0.402, abs=0.02) and high == pytest.approx(0.598, abs=0.02)
    # Every repeat alike: no spread, a point, by either path.
    assert bootstrap_interval([[1.5] * 100, [1.5]]) == pytest.approx((1.5, 1.5))


def test_rank_ranges_span_the_rows_whose_intervals_overlap():
    """LMArena's ranges: no better than 1 + the rows wholly above, no worse than the rows
    less those wholly below."""
    bounds = [(0.06, 0.52), (0.03, 0.32), (0.01, 0.01), (0.01, 0.01)]
    assert rank_ranges(bounds) == [(1, 2), (1, 2), (3, 4), (3, 4)]
    apart = [(3.0, 4.0), (2.0, 2.5), (1.0, 1.5)]
    assert rank_ranges(apart) == [(1, 1), (2, 2), (3, 3)]
    chain = [(2.0, 3.0), (1.5, 2.5), (1.0, 1.8)]  # 1 and 3 never meet; 2 meets both
    assert rank_ranges(chain) == [(1, 2), (1, 3), (2, 3)]
    assert rank_ranges([]) == []


def test_a_rows_own_place_is_always_in_its_range():
    # An interval that leaves out its own point estimate (a bootstrap can) still holds it.
    assert rank_ranges([(5.0, 5.0), (6.0, 7.0)]) == [(1, 2), (1, 2)]
