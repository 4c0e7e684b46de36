"""Two agents task by task: outcomes, the sign test and the paired bootstrap against values
worked out by hand."""

import math

import pytest

from leaderboard.head_to_head import (
    Side,
    TaskDuel,
    duel_outcome,
    head_to_head,
    intervals_overlap,
    paired_bootstrap,
    sign_test,
)


def ranked(best: float, *, runs: int = 1, slowest: float | None = None) -> Side:
    return Side(runs=runs, ranked=runs, best=best, slowest=slowest if slowest else best)


def failed(runs: int = 1) -> Side:
    return Side(runs=runs)


def test_a_ranked_run_beats_none_and_two_agents_without_one_tie():
    assert duel_outcome(0.005, None) == "a"  # however slow: it is correct
    assert duel_outcome(None, 0.005) == "b"
    assert duel_outcome(None, None) == "tie"


def test_two_ranked_runs_are_compared_as_measured_with_a_two_percent_tie():
    assert duel_outcome(0.0070, 0.0066) == "a"  # under the board's floor, still told apart
    assert duel_outcome(1.0, 1.019) == "tie"
    assert duel_outcome(1.0, 1.03) == "b"


@pytest.mark.parametrize(
    ("wins", "losses", "p"),
    [
        (0, 0, 1.0),
        (5, 5, 1.0),
        (1, 0, 1.0),  # one task says nothing: 2 * 1/2
        (6, 0, 2 / 64),
        (9, 1, 2 * 11 / 1024),  # 2 * (C(10,0) + C(10,1)) / 2^10 = 0.0215
        (1, 9, 2 * 11 / 1024),  # two-sided: the same either way
        (8, 2, 2 * 56 / 1024),  # 2 * (1 + 10 + 45) / 1024 = 0.109
    ],
)
def test_sign_test_is_the_exact_two_sided_binomial(wins, losses, p):
    assert sign_test(wins, losses) == pytest.approx(p)


def test_paired_bootstrap_of_equal_differences_is_that_difference():
    assert paired_bootstrap([0.5, 0.5, 0.5]) == pytest.approx((0.5, 0.5))
    assert paired_bootstrap([]) is None


def test_paired_bootstrap_is_seeded_and_spans_the_mean():
    differences = [math.log(2), math.log(0.5), math.log(3), 0.0, math.log(1.5)]
    low, high = paired_bootstrap(differences)
    assert paired_bootstrap(differences) == (low, high)  # the same on every load
    mean = sum(differences) / len(differences)
    assert min(differences) <= low < mean < high <= max(differences)


def test_head_to_head_counts_tasks_both_attempted_and_lists_the_rest():
    duels = [
        TaskDuel("t1", ranked(2.0), ranked(1.0)),  # A: ratio 2
        TaskDuel("t2", ranked(1.0), ranked(1.01)),  # tie: within 2%, ratio 1/1.01
        TaskDuel("t3", ranked(0.5), failed()),  # A: ranked beats none, no ratio
        TaskDuel("t4", failed(), ranked(4.0)),  # B
        TaskDuel("t5", failed(), failed()),  # tie
        TaskDuel("t6", ranked(3.0), None),  # B never tried it
        TaskDuel("t7", None, failed()),
    ]
    result = head_to_head(duels)
    assert (result.wins, result.losses, result.ties) == (2, 1, 2)
    assert result.paired == 5
    assert (result.only_a, result.only_b) == (["t6"], ["t7"])
    assert result.p_value == pytest.approx(1.0)  # 2 of 3: 2 * (1 + 3) / 8
    assert not result.significant and result.leader == "a"
    assert result.ratio_tasks == 2
    assert result.ratio == pytest.approx(math.sqrt(2.0 / 1.01))
    low, high = result.ratio_interval
    assert low == pytest.approx(1 / 1.01) and high == pytest.approx(2.0)


def test_a_clean_sweep_over_enough_tasks_is_significant():
    duels = [TaskDuel(f"t{i}", ranked(2.0), ranked(1.0)) for i in range(8)]
    result = head_to_head(duels)
    assert (result.wins, result.losses) == (8, 0)
    assert result.p_value == pytest.approx(2 / 256) and result.significant
    assert result.ratio == pytest.approx(2.0) and result.ratio_interval == pytest.approx((2, 2))


def test_repeated_runs_whose_ranges_meet_are_marked():
    apart = TaskDuel("t", ranked(2.0, runs=3, slowest=1.8), ranked(1.0, runs=2, slowest=0.9))
    meet = TaskDuel("t", ranked(2.0, runs=3, slowest=1.1), ranked(1.2, runs=2, slowest=0.9))
    once = TaskDuel("t", ranked(2.0), ranked(1.9))
    assert not apart.spreads_overlap and meet.spreads_overlap and not once.spreads_overlap


def test_intervals_overlap_when_they_meet():
    assert intervals_overlap((0.1, 0.5), (0.4, 0.9)) is True
    assert intervals_overlap((0.1, 0.3), (0.4, 0.9)) is False
    assert intervals_overlap((0.1, 0.3), None) is None
