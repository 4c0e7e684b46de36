"""Leaderboard scores over graded runs: plain functions, tested against hand-computed examples.

A run enters the speed scores only when it is ranked (status passed, no flags, graded on a GPU);
a flagged run counts as attempted and compiled as it was, but never as correct or fast. A run
whose grading ended in a grader error (status "error") is no record at all: it is not the
agent's failure. The selectors compute the same numbers in SQL; the tests hold both to these
definitions.

Every aggregate is monotone in each run: turning a correct run into a failure never raises it
(docs/leaderboard.md and the /scoring/ page say how each is taken). A failure counts as
FAILURE_SPEEDUP in the geometric mean, and a correct run slower than that counts as that floor
too, so no failure can stand above a correct run.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from grader.scoring import geomean

FAST_P_THRESHOLDS = (0.0, 1.0, 1.5, 2.0)
# What a failed, flagged or untimed run counts as in the geometric-mean speedup; a correct run
# slower than this counts as this floor too.
FAILURE_SPEEDUP = 0.01
# A board row over fewer tasks than this is marked preliminary: its interval is too wide to
# order it against the others with any confidence.
PRELIMINARY_BELOW_TASKS = 10
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_LEVEL = 0.95
# Up to this many runs of one task are redrawn one by one in a resample; more, by their sum's
# normal approximation.
EXACT_REPEATS = 30


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
    flag_codes: tuple[str, ...] = ()


Interval = tuple[float, float]


@dataclass
class AgentScore:
    agent: str
    runs: int
    tasks_attempted: int
    compile_rate: float
    correctness_rate: float
    fast_p: dict[float, float]
    # Descriptive only, never ranked: the geometric mean over the ranked runs alone.
    speedup_geomean_correct: float | None
    # Over every attempted run, a failure counting as FAILURE_SPEEDUP.
    speedup_geomean_all: float | None
    # Mean roofline fraction over every attempted run, a failure counting as 0.
    roofline_mean: float | None
    # Share of attempted runs correct on the visible shapes and on every unseen shape graded.
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
    # 95% bootstrap intervals over tasks and their repeats: "fast_0", "fast_1", ..., "speedup".
    intervals: dict[str, Interval] = field(default_factory=dict)
    flag_counts: dict[str, int] = field(default_factory=dict)  # runs per flag code
    ranked_runs: int = 0  # the runs that count as correct; the others failed or were flagged

    @property
    def unranked_runs(self) -> int:
        """Failed and flagged runs: shown as a count, never as the speedup floor they score."""
        return self.runs - self.ranked_runs

    @property
    def preliminary(self) -> bool:
        return self.tasks_attempted < PRELIMINARY_BELOW_TASKS

    @property
    def flagged_share(self) -> float:
        return self.flagged / self.runs if self.runs else 0.0


def fast_p(records: Sequence[RunRecord], p: float) -> float:
    """KernelBench's fast_p: share of attempted runs that are correct and faster than p."""
    if not records:
        return 0.0
    hits = sum(1 for r in records if _counts_fast(r, p))
    return hits / len(records)


def _counts_fast(record: RunRecord, p: float) -> bool:
    return record.ranked and record.correct and (record.speedup or 0.0) > p


def speed_log(ranked_correct: bool, speedup: float | None) -> float:
    """A run's term in the geometric-mean speedup: ln of its speedup floored at FAILURE_SPEEDUP,
    ln FAILURE_SPEEDUP for a failure or an untimed run."""
    if ranked_correct and speedup and speedup > 0:
        return math.log(max(speedup, FAILURE_SPEEDUP))
    return math.log(FAILURE_SPEEDUP)


def agent_score(agent: str, records: Sequence[RunRecord]) -> AgentScore:
    ranked_correct = [r for r in records if r.ranked and r.correct]
    speedups: dict[str, list[float]] = {}
    for r in ranked_correct:
        if r.speedup is not None:
            speedups.setdefault(r.task, []).append(r.speedup)
    by_repeat = split_by_repeat(records)
    flag_counts: dict[str, int] = {}
    for r in records:
        for code in r.flag_codes:
            flag_counts[code] = flag_counts.get(code, 0) + 1
    return AgentScore(
        agent=agent,
        runs=len(records),
        tasks_attempted=len({r.task for r in records}),
        compile_rate=_share(records, lambda r: r.compiled),
        correctness_rate=_share(records, lambda r: r.correct and r.ranked),
        fast_p={p: fast_p(records, p) for p in FAST_P_THRESHOLDS},
        speedup_geomean_correct=geomean(r.speedup for r in ranked_correct if r.speedup),
        speedup_geomean_all=speedup_geomean_all(records),
        roofline_mean=(
            sum(r.roofline_fraction or 0.0 for r in ranked_correct) / len(records)
            if records
            else None
        ),
        generalization_pass_rate=_share(
            records, lambda r: r.ranked and r.correct and r.unseen_correct == r.unseen_total
        )
        if records
        else None,
        overfit_count=sum(1 for r in records if r.overfit),
        flagged=sum(1 for r in records if r.flagged),
        tokens_per_run=sum(r.tokens for r in records) / len(records) if records else 0.0,
        cost_per_run_usd=_mean([r.cost_usd for r in records if r.cost_usd is not None]),
        fast_1_repeats=mean_and_spread([fast_p(rs, 1.0) for rs in by_repeat.values()]),
        speedup_geomean_all_repeats=mean_and_spread(
            [speedup_geomean_all(rs) or FAILURE_SPEEDUP for rs in by_repeat.values()]
        ),
        repeats=len(by_repeat),
        per_task_speedups=speedups,
        intervals=score_intervals([(r.task, r.ranked and r.correct, r.speedup) for r in records]),
        flag_counts=flag_counts,
        ranked_runs=len(ranked_correct),
    )


def speedup_geomean_all(records: Sequence[RunRecord]) -> float | None:
    """Geometric-mean speedup over every attempted run, a failure counting as FAILURE_SPEEDUP
    and a slower correct run floored there (speed_log)."""
    if not records:
        return None
    return math.exp(
        sum(speed_log(r.ranked and r.correct, r.speedup) for r in records) / len(records)
    )


# --- uncertainty ------------------------------------------------------------------------------


def rank_ranges(bounds: Sequence[Interval]) -> list[tuple[int, int]]:
    """Places (best, worst) of rows already sorted best first, from each row's interval of the
    sort key (higher is better), as LMArena shows them: a row can be no better than one plus the
    rows whose interval lies wholly above its own, and no worse than the rows less those whose
    interval lies wholly below. A row's own place always falls in its range; equal point values
    share a range."""
    n = len(bounds)
    ranges = []
    for place, (low, high) in enumerate(bounds, 1):
        above = sum(1 for other_low, _ in bounds if other_low > high)
        below = sum(1 for _, other_high in bounds if other_high < low)
        ranges.append((min(1 + above, place), max(n - below, place)))
    return ranges


def bootstrap_interval(
    groups: Sequence[Sequence[float]],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = BOOTSTRAP_LEVEL,
    seed: int = 0,
) -> Interval | None:
    """Percentile interval of the pooled mean of `groups` (one group of values per task, one
    value per run of it), by a two-stage bootstrap: tasks are drawn with replacement, then each
    drawn task's runs (its repeats) with replacement. Seeded, so a page shows the same interval
    on every load."""
    intervals = bootstrap_intervals(
        [[(v,) for v in g] for g in groups], resamples=resamples, level=level, seed=seed
    )
    return intervals[0] if intervals else None


@dataclass(frozen=True)
class TaskStats:
    """One task's runs as the bootstrap needs them, a row of statistics per run: every row
    while there are at most EXACT_REPEATS runs, else their count, mean, spread (population
    standard deviation), least and greatest value per statistic."""

    n: int
    mean: tuple[float, ...]
    spread: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    rows: tuple[tuple[float, ...], ...] = ()

    @classmethod
    def of_rows(cls, rows: Sequence[Sequence[float]]) -> "TaskStats":
        values = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)
        kept = tuple(tuple(map(float, r)) for r in values) if len(rows) <= EXACT_REPEATS else ()
        return cls(
            n=len(rows),
            mean=tuple(values.mean(axis=0)),
            spread=tuple(values.std(axis=0)),
            low=tuple(values.min(axis=0)),
            high=tuple(values.max(axis=0)),
            rows=kept,
        )


def bootstrap_intervals(
    groups: Sequence[Sequence[Sequence[float]] | TaskStats],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = BOOTSTRAP_LEVEL,
    seed: int = 0,
) -> list[Interval]:
    """bootstrap_interval for several statistics at once: each run is a row of values (or a
    task is given as its TaskStats), and every statistic is taken over the same drawn tasks.
    [] when there are no runs.

    A task with more than EXACT_REPEATS runs has the sum of its redrawn runs taken from the
    normal law with the same mean and variance (the central limit theorem at that size), so a
    board of many repeats costs resamples x tasks, not resamples x runs."""
    tasks = [g if isinstance(g, TaskStats) else TaskStats.of_rows(g) for g in groups if _n(g)]
    if not tasks:
        return []
    sizes = np.array([t.n for t in tasks], dtype=np.int64)
    n_tasks, n_stats = len(tasks), len(tasks[0].mean)
    small = sizes <= EXACT_REPEATS
    values = np.array(
        [row for t in tasks if t.n <= EXACT_REPEATS for row in t.rows], dtype=np.float64
    ).reshape(-1, n_stats)
    starts = np.zeros(n_tasks, dtype=np.int64)
    starts[small] = np.concatenate([[0], np.cumsum(sizes[small])[:-1]]) if small.any() else []
    means = np.array([t.mean for t in tasks])  # per task and statistic
    spreads = np.array([t.spread for t in tasks])
    low_ends = np.array([t.low for t in tasks]) * sizes[:, None]
    high_ends = np.array([t.high for t in tasks]) * sizes[:, None]
    rng = np.random.default_rng(seed)
    pooled = np.empty((resamples, n_stats))
    chunk = max(1, min(resamples, 1_000_000 // (n_tasks * EXACT_REPEATS)))
    for first in range(0, resamples, chunk):
        count = min(chunk, resamples - first)
        picked = rng.integers(0, n_tasks, size=(count, n_tasks)).ravel()
        slot_sums = np.empty((len(picked), n_stats))
        exact = small[picked]
        slots = np.flatnonzero(exact)
        if len(slots):
            drawn_tasks = np.repeat(picked[slots], sizes[picked[slots]])  # a task per drawn run
            owner = np.repeat(np.arange(len(slots)), sizes[picked[slots]])
            within = (rng.random(len(drawn_tasks)) * sizes[drawn_tasks]).astype(np.int64)
            drawn = values[starts[drawn_tasks] + within]
            for column in range(n_stats):
                slot_sums[slots, column] = np.bincount(owner, drawn[:, column], len(slots))
        slots = np.flatnonzero(~exact)
        if len(slots):
            t = picked[slots]
            n = sizes[t][:, None]
            noise = rng.standard_normal((len(slots), n_stats))
            normal = n * means[t] + np.sqrt(n) * spreads[t] * noise
            slot_sums[slots] = np.clip(normal, low_ends[t], high_ends[t])
        totals = sizes[picked].reshape(count, n_tasks).sum(axis=1)
        sums = slot_sums.reshape(count, n_tasks, n_stats).sum(axis=1)
        pooled[first : first + count] = sums / totals[:, None]
    tail = (1.0 - level) / 2 * 100
    bounds = np.percentile(pooled, [tail, 100 - tail], axis=0)
    return [(float(bounds[0, c]), float(bounds[1, c])) for c in range(n_stats)]


def _n(group: Sequence[Sequence[float]] | TaskStats) -> int:
    return group.n if isinstance(group, TaskStats) else len(group)


def run_statistics(ok: bool, speedup: float | None) -> tuple[float, ...]:
    """A run's row for the intervals: a hit for each fast_p threshold, then its speed_log."""
    hits = tuple(float(ok and (speedup or 0.0) > p) for p in FAST_P_THRESHOLDS)
    return (*hits, speed_log(ok, speedup))


def score_intervals(
    runs: Sequence[tuple[str, bool, float | None]], *, summaries: Sequence[TaskStats] = ()
) -> dict[str, Interval]:
    """95% intervals of fast_p (each threshold) and of the geometric-mean speedup, from runs as
    (task, ranked and correct, speedup), and tasks already summed up (TaskStats of
    run_statistics rows, as SQL gives them for tasks of many runs)."""
    by_task: dict[str, list[tuple[float, ...]]] = {}
    for task, ok, speedup in runs:
        by_task.setdefault(task, []).append(run_statistics(ok, speedup))
    intervals = bootstrap_intervals([*by_task.values(), *summaries])
    if not intervals:
        return {}
    named = {fast_key(p): intervals[i] for i, p in enumerate(FAST_P_THRESHOLDS)}
    low, high = intervals[-1]
    return {**named, "speedup": (math.exp(low), math.exp(high))}


def fast_key(p: float) -> str:
    return "fast_" + f"{p:g}".replace(".", "_")


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
