"""Leaderboard scores over graded runs: plain functions, tested against hand-computed examples.

A run enters the speed scores only when it is ranked (status passed, no flags); a flagged run
counts as attempted and compiled as it was, but never as correct or fast. A run whose grading
ended in a grader error (status "error") is no record at all: it is not the agent's failure.
The selectors compute the same numbers in SQL; the tests hold both to these definitions.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evaluator.engine.scoring import geomean

FAST_P_THRESHOLDS = (0.0, 1.0, 1.5, 2.0)


@dataclass(frozen=True)
class RunRecord:
    agent: str
    task: str
    category: str
    compiled: bool
    correct: bool
    ranked: bool
    speedup: float | None = None
    roofline_fraction: float | None = None
    unseen_correct: int = 0
    unseen_total: int = 0
    overfit: bool = False
    flagged: bool = False  # the grader raised at least one flag
    tokens: int = 0
    cost_usd: float | None = None
    repeat: int = 1  # 1 for the agent's first run on the task, 2 for its second...


@dataclass
class AgentScore:
    agent: str
    runs: int
    tasks_attempted: int
    compile_rate: float
    correctness_rate: float
    fast_p: dict[float, float]
    speedup_geomean_correct: float | None
    speedup_geomean_all: float | None
    roofline_geomean: float | None
    generalization_pass_rate: float | None
    overfit_count: int
    flagged: int
    tokens_per_run: float = 0.0
    cost_per_run_usd: float | None = None
    # (mean, sample standard deviation) of the score computed on each repeat separately.
    fast_1_repeats: tuple[float, float] | None = None
    speedup_geomean_all_repeats: tuple[float, float] | None = None
    repeats: int = 0
    per_task_speedups: dict[str, list[float]] = field(default_factory=dict)


def fast_p(records: Sequence[RunRecord], p: float) -> float:
    """KernelBench's fast_p: share of attempted runs that are correct and faster than p."""
    if not records:
        return 0.0
    hits = sum(1 for r in records if r.ranked and r.correct and (r.speedup or 0.0) > p)
    return hits / len(records)


def agent_score(agent: str, records: Sequence[RunRecord]) -> AgentScore:
    ranked_correct = [r for r in records if r.ranked and r.correct]
    seen_correct = [r for r in records if r.correct and r.unseen_total]
    unseen_total = sum(r.unseen_total for r in seen_correct)
    speedups: dict[str, list[float]] = {}
    for r in ranked_correct:
        if r.speedup is not None:
            speedups.setdefault(r.task, []).append(r.speedup)
    by_repeat = split_by_repeat(records)
    return AgentScore(
        agent=agent,
        runs=len(records),
        tasks_attempted=len({r.task for r in records}),
        compile_rate=_share(records, lambda r: r.compiled),
        correctness_rate=_share(records, lambda r: r.correct and r.ranked),
        fast_p={p: fast_p(records, p) for p in FAST_P_THRESHOLDS},
        speedup_geomean_correct=geomean(r.speedup for r in ranked_correct if r.speedup),
        speedup_geomean_all=speedup_geomean_all(records),
        roofline_geomean=geomean(
            r.roofline_fraction for r in ranked_correct if r.roofline_fraction
        ),
        generalization_pass_rate=(
            sum(r.unseen_correct for r in seen_correct) / unseen_total if unseen_total else None
        ),
        overfit_count=sum(1 for r in records if r.overfit),
        flagged=sum(1 for r in records if r.flagged),
        tokens_per_run=sum(r.tokens for r in records) / len(records) if records else 0.0,
        cost_per_run_usd=_mean([r.cost_usd for r in records if r.cost_usd is not None]),
        fast_1_repeats=mean_and_spread([fast_p(rs, 1.0) for rs in by_repeat.values()]),
        speedup_geomean_all_repeats=mean_and_spread(
            [speedup_geomean_all(rs) or 1.0 for rs in by_repeat.values()]
        ),
        repeats=len(by_repeat),
        per_task_speedups=speedups,
    )


def speedup_geomean_all(records: Sequence[RunRecord]) -> float | None:
    """Geometric-mean speedup over every attempted run, a failure counting as 1x."""
    return geomean((r.speedup if r.ranked and r.correct and r.speedup else 1.0) for r in records)


def split_by_repeat(records: Sequence[RunRecord]) -> dict[int, list[RunRecord]]:
    by_repeat: dict[int, list[RunRecord]] = {}
    for r in records:
        by_repeat.setdefault(r.repeat, []).append(r)
    return dict(sorted(by_repeat.items()))


def mean_and_spread(values: Sequence[float]) -> tuple[float, float] | None:
    """Mean over repeats and the sample standard deviation (0 for a single repeat)."""
    if not values:
        return None
    mean = sum(values) / len(values)
    if len(values) == 1:
        return mean, 0.0
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, math.sqrt(variance)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _share(records: Sequence[RunRecord], predicate: Callable[[RunRecord], bool]) -> float:
    return sum(1 for r in records if predicate(r)) / len(records) if records else 0.0
