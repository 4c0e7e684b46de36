"""Two agents on one GPU board, task by task: who has the better best run on each task they both
attempted, by how much, and whether the wins and losses say more than chance.

Plain functions over plain values, tested against hand-computed examples. On each task both
attempted, the side with a ranked run beats the side without one; two ranked runs are compared
by their best speedups, measured as they are (no floor: the board's floor is a penalty for
failures, and two correct kernels are told apart by their real times); two sides without one
tie. The ratio of speedups is taken over the tasks both have a ranked run on.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from leaderboard.scores import BOOTSTRAP_LEVEL, BOOTSTRAP_RESAMPLES, Interval

# Best speedups within 2% of each other tie: a difference that small is within the run-to-run
# spread of one kernel's timing, so it names no winner.
TIE_RATIO = 1.02
SIGNIFICANCE = 0.05

Outcome = Literal["a", "b", "tie"]


@dataclass(frozen=True)
class Side:
    """One agent's runs of one task on the board."""

    runs: int
    ranked: int = 0
    best: float | None = None  # best ranked speedup; None where no run is ranked
    slowest: float | None = None  # slowest ranked speedup, for the spread of repeats
    best_run_id: int | None = None
    flagged: int = 0  # of its runs, those the grader flagged


@dataclass(frozen=True)
class TaskDuel:
    task: str
    a: Side | None  # None: the agent did not attempt the task on this board
    b: Side | None

    @property
    def both(self) -> bool:
        return self.a is not None and self.b is not None

    @property
    def outcome(self) -> Outcome | None:
        if self.a is None or self.b is None:
            return None
        return duel_outcome(self.a.best, self.b.best)

    @property
    def ratio(self) -> float | None:
        """A's best over B's, where both have a ranked run."""
        if self.a is None or self.b is None or self.a.best is None or self.b.best is None:
            return None
        return self.a.best / self.b.best

    @property
    def spreads_overlap(self) -> bool:
        """Both ran it more than once and their ranked speedups' ranges meet: the best of
        either could have come out on the other side of the other's."""
        a, b = self.a, self.b
        if a is None or b is None or a.ranked < 2 or b.ranked < 2:
            return False
        assert a.best is not None and b.best is not None  # ranked runs have speedups
        return (a.slowest or a.best) <= b.best and (b.slowest or b.best) <= a.best


@dataclass
class HeadToHead:
    duels: list[TaskDuel]
    wins: int = 0  # tasks A won
    losses: int = 0
    ties: int = 0
    p_value: float = 1.0  # two-sided sign test over wins and losses
    # Geometric mean of A's best speedup over B's on the tasks both have a ranked run on, with
    # its paired bootstrap interval over those tasks.
    ratio: float | None = None
    ratio_interval: Interval | None = None
    ratio_tasks: int = 0
    only_a: list[str] = field(default_factory=list)  # tasks one of them did not attempt
    only_b: list[str] = field(default_factory=list)

    @property
    def paired(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def significant(self) -> bool:
        return self.wins + self.losses > 0 and self.p_value < SIGNIFICANCE

    @property
    def leader(self) -> Outcome:
        if self.wins == self.losses:
            return "tie"
        return "a" if self.wins > self.losses else "b"


def duel_outcome(
    a_best: float | None, b_best: float | None, *, tie_ratio: float = TIE_RATIO
) -> Outcome:
    """Who wins one task from each side's best ranked speedup (None: no ranked run): a ranked
    run beats none, two within `tie_ratio` of each other tie, and so do two sides with none."""
    if a_best is None or b_best is None:
        if a_best is None and b_best is None:
            return "tie"
        return "a" if b_best is None else "b"
    if abs(math.log(a_best / b_best)) <= math.log(tie_ratio):
        return "tie"
    return "a" if a_best > b_best else "b"


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test: the chance of a split at least this uneven between wins and
    losses if each task were a coin toss (ties dropped). 1.0 with no wins or losses."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1))
    return min(1.0, 2 * tail / 2**n)


def paired_bootstrap(
    differences: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = BOOTSTRAP_LEVEL,
    seed: int = 0,
) -> Interval | None:
    """Percentile interval of the mean of paired differences (one per task, here ln A - ln B),
    tasks drawn with replacement; seeded, so a page shows the same interval on every load."""
    if not differences:
        return None
    values = np.asarray(differences, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def head_to_head(duels: Sequence[TaskDuel]) -> HeadToHead:
    """Wins, losses and ties over the tasks both attempted, the sign test's p-value, and the
    geometric-mean ratio of best speedups over the tasks both have a ranked run on, with its
    paired bootstrap interval."""
    result = HeadToHead(duels=list(duels))
    differences = []
    for duel in duels:
        if duel.a is None or duel.b is None:
            (result.only_a if duel.a is not None else result.only_b).append(duel.task)
            continue
        if duel.ratio is not None:
            differences.append(math.log(duel.ratio))
        outcome = duel.outcome
        result.wins += outcome == "a"
        result.losses += outcome == "b"
        result.ties += outcome == "tie"
    result.p_value = sign_test(result.wins, result.losses)
    result.ratio_tasks = len(differences)
    if differences:
        result.ratio = math.exp(sum(differences) / len(differences))
        interval = paired_bootstrap(differences)
        assert interval is not None
        result.ratio_interval = (math.exp(interval[0]), math.exp(interval[1]))
    return result


def intervals_overlap(first: Interval | None, second: Interval | None) -> bool | None:
    """Whether two intervals meet; None where either is missing."""
    if first is None or second is None:
        return None
    return first[0] <= second[1] and second[0] <= first[1]
