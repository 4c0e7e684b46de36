"""Reads of the leaderboard. Scores are aggregated in SQL over `RunScore` rows and cached under
the generation that `leaderboard_invalidate()` bumps, so a page costs a few small queries.
"""

import hashlib
import math
from dataclasses import dataclass, replace
from typing import Any

from django.core.cache import cache
from django.db.models import (
    Avg,
    Case,
    Count,
    F,
    FloatField,
    Max,
    Min,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
    Window,
)
from django.db.models.functions import Floor, Greatest, Ln, RowNumber

from arena import run_verdicts
from arena.models import Agent, LeaderboardGeneration, Run, RunScore, Submission
from arena.run_verdicts import VERDICT_CODES, verdict_of_run, verdict_of_score
from arena.selectors import Reader, runs_public, runs_visible_to
from evaluator.models import Evaluation, EvaluationShape
from grader.roofline import compute_dtype_key, peaks_for
from leaderboard.figure_data import task_speedup_points
from leaderboard.head_to_head import Side, TaskDuel
from leaderboard.scores import (
    EXACT_REPEATS,
    FAILURE_SPEEDUP,
    FAST_P_THRESHOLDS,
    AgentScore,
    TaskStats,
    fast_key,
    mean_and_spread,
    rank_ranges,
    score_intervals,
)
from tasks.models import Task
from tasks.selectors import task_shape_rows

# A safety net: a process that missed an invalidation still catches up within this many seconds.
CACHE_TTL_S = 60
SPEEDUP_BIN_LOG2 = 0.25  # histogram bins of the speedup distribution, in powers of two
CPU = RunScore.CPU
# Sort keys of the ranking, each a visible column. After the chosen key, ties go to TIE_BREAKERS
# in order, then to the agent's name.
SORT_KEYS = {
    "fast_1": lambda s: s.fast_p[1.0],
    "fast_0": lambda s: s.fast_p[0.0],
    "fast_1_5": lambda s: s.fast_p[1.5],
    "fast_2": lambda s: s.fast_p[2.0],
    "speedup": lambda s: s.speedup_geomean_all or 0.0,
    "roofline": lambda s: s.roofline_mean or 0.0,
    "correct": lambda s: s.correctness_rate,
    "compile": lambda s: s.compile_rate,
    "generalization": lambda s: s.generalization_pass_rate or 0.0,
    "tasks": lambda s: s.tasks_attempted,
    "runs": lambda s: s.runs,
    # Cheaper first: sorted descending like the rest, so the key is negated.
    "cost": lambda s: -(s.cost_per_run_usd if s.cost_per_run_usd is not None else math.inf),
    "tokens": lambda s: -s.tokens_per_run,
}
# The geometric-mean speedup over every attempted run orders any board: a ranked run beats a
# failure, a faster run a slower one. fast_1 is 0 for every agent until one beats eager, and
# a board sorted by it is then ordered by its tie-breakers alone.
DEFAULT_SORT = "speedup"
TIE_BREAKERS = ("speedup", "correct", "fast_1")
# The sort keys whose 95% interval gives rank ranges (AgentScore.intervals' names); the others
# are exact counts and means, where only equal values share a range.
SORT_INTERVALS = {"speedup": "speedup", **{fast_key(p): fast_key(p) for p in FAST_P_THRESHOLDS}}


@dataclass(frozen=True)
class ScoreFilters:
    category: str = ""
    gpu: str = ""
    suite_version: str = ""  # a suite's name (all its versions) or one version, <suite>@<hex>

    def key(self) -> str:
        # Hashed: GPU names hold spaces, which some cache backends refuse in keys.
        raw = f"{self.category}|{self.gpu}|{self.suite_version}"
        return hashlib.sha1(raw.encode(), usedforsecurity=False).hexdigest()


def leaderboard_generation() -> int:
    return LeaderboardGeneration.objects.filter(pk=1).values_list("value", flat=True).first() or 0


def leaderboard_cached(name: str, build):
    """`build()`'s value, computed once per leaderboard generation (and at most CACHE_TTL_S)."""
    key = f"leaderboard:{leaderboard_generation()}:{name}"
    value = cache.get(key)
    if value is None:
        value = build()
        cache.set(key, value, CACHE_TTL_S)
    return value


def public_scores(filters: ScoreFilters | None = None) -> QuerySet[RunScore]:
    scores = RunScore.objects.filter(run__hidden=False)
    if filters is None:
        return scores
    if filters.category:
        scores = scores.filter(category=filters.category)
    if filters.gpu:
        scores = scores.filter(gpu=filters.gpu)
    if "@" in filters.suite_version:  # one version of a suite
        scores = scores.filter(suite_version=filters.suite_version)
    elif filters.suite_version:  # a suite, every version of it
        scores = scores.filter(suite_version__startswith=f"{filters.suite_version}@")
    return scores


def board_scores(filters: ScoreFilters) -> QuerySet[RunScore]:
    """The scores one board ranks: one GPU model's (never the CPU's), by the other filters."""
    return public_scores(board_filters(filters)).exclude(gpu=CPU)


def board_filters(filters: ScoreFilters) -> ScoreFilters:
    """`filters` on a GPU: the one asked for when it has gradings, else the default board's."""
    gpus = board_gpus()
    gpu = filters.gpu if filters.gpu in gpus else (next(iter(gpus), ""))
    return replace(filters, gpu=gpu)


def board_gpus() -> dict[str, int]:
    """GPU models with public gradings and how many, most graded first (the default board)."""

    def build():
        rows = (
            public_scores()
            .exclude(gpu=CPU)
            .exclude(status=Evaluation.Status.ERROR)
            .values("gpu")
            .annotate(n=Count("id"))
            .order_by("-n", "gpu")
        )
        return {r["gpu"]: r["n"] for r in rows}

    return leaderboard_cached("board-gpus", build)


# --- scores per agent -------------------------------------------------------------------------

_RANKED = Q(ranked=True, correct=True)
_TIMED = _RANKED & Q(speedup__gt=0)
_LN_FLOOR = math.log(FAILURE_SPEEDUP)


def _score_aggregates() -> dict[str, Any]:
    fast = {fast_key(p): Count("id", filter=_RANKED & Q(speedup__gt=p)) for p in FAST_P_THRESHOLDS}
    return {
        "n_runs": Count("id"),
        "n_tasks": Count("task_id", distinct=True),
        "n_compiled": Count("id", filter=Q(compiled=True)),
        "n_correct": Count("id", filter=_RANKED),
        **fast,
        "n_timed": Count("id", filter=_TIMED),
        "ln_speedup_sum": Sum(Ln(Greatest("speedup", Value(FAILURE_SPEEDUP))), filter=_TIMED),
        "ln_speedup_avg": Avg(Ln("speedup"), filter=_TIMED),
        "roofline_sum": Sum("roofline_fraction", filter=_RANKED),
        "n_general": Count("id", filter=_RANKED & Q(unseen_correct=F("unseen_total"))),
        "n_overfit": Count("id", filter=Q(overfit=True)),
        "n_flagged": Count("id", filter=Q(flagged=True)),
        "tokens_sum": Sum("tokens"),
        "cost_avg": Avg("cost_usd"),
    }


def _speedup_all(row: dict[str, Any]) -> float:
    # Every run that is not correct and timed counts as the floor, FAILURE_SPEEDUP.
    untimed = row["n_runs"] - row["n_timed"]
    return math.exp(((row["ln_speedup_sum"] or 0.0) + untimed * _LN_FLOOR) / row["n_runs"])


def _score_from_row(agent: str, row: dict[str, Any], repeats: list[dict[str, Any]]) -> AgentScore:
    runs = row["n_runs"]
    return AgentScore(
        agent=agent,
        runs=runs,
        tasks_attempted=row["n_tasks"],
        compile_rate=row["n_compiled"] / runs,
        correctness_rate=row["n_correct"] / runs,
        fast_p={p: row[fast_key(p)] / runs for p in FAST_P_THRESHOLDS},
        speedup_geomean_correct=_exp(row["ln_speedup_avg"]),
        speedup_geomean_all=_speedup_all(row),
        roofline_mean=(row["roofline_sum"] or 0.0) / runs,
        generalization_pass_rate=row["n_general"] / runs,
        overfit_count=row["n_overfit"],
        flagged=row["n_flagged"],
        tokens_per_run=(row["tokens_sum"] or 0) / runs,
        cost_per_run_usd=row["cost_avg"],
        fast_1_repeats=mean_and_spread([r["fast_1"] / r["n_runs"] for r in repeats]),
        speedup_geomean_all_repeats=mean_and_spread([_speedup_all(r) for r in repeats]),
        repeats=len(repeats),
        ranked_runs=row["n_correct"],
    )


def _exp(value: float | None) -> float | None:
    return math.exp(value) if value is not None else None


def _graded(scores: QuerySet[RunScore]) -> QuerySet[RunScore]:
    # A grader error (the reference ran out of memory, say) is the grader's failure, not the
    # agent's: it counts in no rate, as an unfinished evaluation does; the matrix shows it ERR.
    return scores.exclude(status=Evaluation.Status.ERROR)


def _agent_scores(scores: QuerySet[RunScore], group: str) -> dict[Any, AgentScore]:
    aggregates = _score_aggregates()
    scores = _graded(scores)
    rows = scores.values(group).annotate(**aggregates).order_by()
    repeat_rows = (
        scores.values(group, "repeat")
        .annotate(**{k: aggregates[k] for k in ("n_runs", "fast_1", "n_timed", "ln_speedup_sum")})
        .order_by()
    )
    repeats: dict[Any, list[dict[str, Any]]] = {}
    for r in repeat_rows:
        repeats.setdefault(r[group], []).append(r)
    return {row[group]: _score_from_row(str(row[group]), row, repeats[row[group]]) for row in rows}


@dataclass
class RankingRow:
    agent: Agent
    score: AgentScore
    gpu: str = ""
    best_run_id: int | None = None  # its best ranked run: the transcript and solution links
    best_run_has_transcript: bool = False
    # Its possible places (rank_ranges): (2, 2) is second for sure, (1, 3) any of the first 3.
    rank_best: int = 0
    rank_worst: int = 0

    @property
    def rank_label(self) -> str:
        if self.rank_best == self.rank_worst:
            return str(self.rank_best)
        return f"{self.rank_best}\N{EN DASH}{self.rank_worst}"


def leaderboard_rows(*, filters: ScoreFilters, sort: str = DEFAULT_SORT) -> list[RankingRow]:
    """The ranking of one board (board_filters): one row per agent, sorted by `sort`, best
    first, each with its range of places. Ties go to TIE_BREAKERS (the geometric-mean speedup,
    the correctness rate, fast_1), then to the name: every one of them is a column."""
    rows = leaderboard_cached(f"rows:{filters.key()}", lambda: _ranking(board_filters(filters)))
    sort = sort if sort in SORT_KEYS else DEFAULT_SORT
    key = SORT_KEYS[sort]

    def order(row: RankingRow) -> tuple:
        score = row.score
        ties = tuple(-SORT_KEYS[name](score) for name in TIE_BREAKERS)
        return (-key(score), *ties, row.agent.name.lower(), row.agent.slug)

    ordered = [replace(row) for row in sorted(rows, key=order)]  # the cached rows stay unranked
    bounds = [_sort_bounds(row.score, sort) for row in ordered]
    for row, (best, worst) in zip(ordered, rank_ranges(bounds), strict=True):
        row.rank_best, row.rank_worst = best, worst
    return ordered


def _sort_bounds(score: AgentScore, sort: str) -> tuple[float, float]:
    """The row's 95% interval of the sort key where it has one, else the key's value alone."""
    interval = score.intervals.get(SORT_INTERVALS.get(sort, ""))
    if interval is not None:
        return interval
    value = SORT_KEYS[sort](score)
    return value, value


def _ranking(filters: ScoreFilters) -> list[RankingRow]:
    scores = board_scores(filters)
    by_agent = _agent_scores(scores, "agent_id")
    graded = _graded(scores)
    runs, summaries = _interval_inputs(graded)
    for agent_id, score in by_agent.items():
        score.intervals = score_intervals(
            runs.get(agent_id, []), summaries=summaries.get(agent_id, [])
        )
    flagged = graded.filter(flagged=True).values("agent_id", "flag_codes").annotate(n=Count("id"))
    for row in flagged.order_by():
        counts = by_agent[row["agent_id"]].flag_counts
        for code in filter(None, row["flag_codes"].split(",")):
            counts[code] = counts.get(code, 0) + row["n"]
    best = _best_run_per(graded.filter(ranked=True), ["agent_id"])
    with_transcript = _with_transcript(best.values())
    agents = Agent.objects.in_bulk(list(by_agent))
    return [
        RankingRow(
            agent=agents[pk],
            score=score,
            gpu=filters.gpu,
            best_run_id=best.get((pk,)),
            best_run_has_transcript=best.get((pk,)) in with_transcript,
        )
        for pk, score in by_agent.items()
    ]


def _interval_inputs(
    graded: QuerySet[RunScore],
) -> tuple[dict[int, list[tuple[Any, bool, float | None]]], dict[int, list[TaskStats]]]:
    """Per agent, what its intervals are drawn from: each run of a task it ran at most
    EXACT_REPEATS times, and SQL's summary (count, mean, spread, bounds of each run_statistics
    column) of a task it ran more often, so a board of 100,000 runs reads a row per task."""
    ln_speed = Case(
        When(_TIMED, then=Ln(Greatest("speedup", Value(FAILURE_SPEEDUP)))),
        default=Value(_LN_FLOOR),
        output_field=FloatField(),
    )
    hits = {fast_key(p): Count("id", filter=_RANKED & Q(speedup__gt=p)) for p in FAST_P_THRESHOLDS}
    groups = (
        graded.values("agent_id", "task_id")
        .annotate(
            n=Count("id"),
            **hits,
            ln_sum=Sum(ln_speed),
            ln_sq=Sum(ln_speed * ln_speed),
            ln_min=Min(ln_speed),
            ln_max=Max(ln_speed),
        )
        .order_by("agent_id", "task_id")
    )
    summaries: dict[int, list[TaskStats]] = {}
    small: list[tuple[int, int]] = []
    for g in groups:
        n = g["n"]
        if n <= EXACT_REPEATS:
            small.append((g["agent_id"], g["task_id"]))
            continue
        shares = [g[fast_key(p)] / n for p in FAST_P_THRESHOLDS]
        mean_ln = g["ln_sum"] / n
        summaries.setdefault(g["agent_id"], []).append(
            TaskStats(
                n=n,
                mean=(*shares, mean_ln),
                spread=(
                    *(math.sqrt(q * (1 - q)) for q in shares),
                    math.sqrt(max(g["ln_sq"] / n - mean_ln * mean_ln, 0.0)),
                ),
                low=(*(float(q == 1.0) for q in shares), g["ln_min"]),
                high=(*(float(q > 0.0) for q in shares), g["ln_max"]),
            )
        )
    runs: dict[int, list[tuple[Any, bool, float | None]]] = {}
    if small:
        wanted = set(small)
        fields = ("agent_id", "task_id", "ranked", "correct", "speedup")
        rows = graded.values_list(*fields).order_by()
        if summaries:  # some groups are summed up: read the rows of the others' agents and tasks
            rows = rows.filter(
                agent_id__in={a for a, _ in small}, task_id__in={t for _, t in small}
            )
        for agent_id, task_id, ranked, correct, speedup in rows:
            if (agent_id, task_id) in wanted:
                runs.setdefault(agent_id, []).append((task_id, ranked and correct, speedup))
    return runs, summaries


def cpu_unranked_rows(*, filters: ScoreFilters) -> list[dict[str, Any]]:
    """Per agent, its CPU gradings under the board's other filters: shown, never ranked."""

    def build():
        scores = public_scores(replace(filters, gpu=CPU))
        rows = (
            _graded(scores)
            .values("agent__slug", "agent__name")
            .annotate(
                n_runs=Count("id"),
                n_tasks=Count("task_id", distinct=True),
                n_correct=Count("id", filter=Q(correct=True, flagged=False)),
                n_flagged=Count("id", filter=Q(flagged=True)),
            )
            .order_by("agent__name", "agent__slug")
        )
        return list(rows)

    return leaderboard_cached(f"cpu-rows:{replace(filters, gpu=CPU).key()}", build)


def leaderboard_filter_options() -> dict[str, Any]:
    def build():
        scores = public_scores()
        versions = sorted(scores.values_list("suite_version", flat=True).distinct().order_by())
        return {
            "categories": list(Task.Category.values),
            "gpus": board_gpus(),
            "suite_versions": versions,
            "suites": {
                suite: [v for v in versions if v.startswith(f"{suite}@")]
                for suite in sorted({v.split("@", 1)[0] for v in versions})
            },
        }

    return leaderboard_cached("options", build)


def agent_score_list(*, category: str = "") -> list[AgentScore]:
    """One score per agent (named by slug) on the default board, in the default order."""
    rows = leaderboard_rows(filters=ScoreFilters(category=category))
    return [_named(r.score, r.agent.slug) for r in rows]


def _named(score: AgentScore, name: str) -> AgentScore:
    score.agent = name
    return score


# --- figure data ------------------------------------------------------------------------------


def speedup_histogram(*, filters: ScoreFilters) -> list[dict[str, Any]]:
    """Per agent, counts of ranked runs in bins of log2(speedup) of width SPEEDUP_BIN_LOG2."""

    def build():
        # ln(x) / ln 2, not LOG(2, x): PostgreSQL has LOG(b, x) only for slow numerics.
        binned = Floor(Ln(F("speedup")) / (math.log(2) * SPEEDUP_BIN_LOG2))
        rows = (
            board_scores(filters)
            .filter(_TIMED)
            .annotate(bin=binned)
            .values("agent__slug", "bin")
            .annotate(n=Count("id"))
            .order_by("agent__slug", "bin")
        )
        return [
            {"agent": r["agent__slug"], "log2_low": r["bin"] * SPEEDUP_BIN_LOG2, "n": r["n"]}
            for r in rows
        ]

    return leaderboard_cached(f"histogram:{filters.key()}", build)


# --- per agent and per task -------------------------------------------------------------------


def head_to_head_duels(*, a: Agent, b: Agent, filters: ScoreFilters) -> list[TaskDuel]:
    """Per task either agent attempted on the board (board_filters), each one's runs there: how
    many, how many ranked, the best and slowest ranked speedups and the best run; by task."""

    def build() -> list[TaskDuel]:
        scores = _graded(board_scores(filters)).filter(agent_id__in=[a.pk, b.pk])
        rows = (
            scores.values("agent_id", "task__slug")
            .annotate(
                n=Count("id"),
                n_ranked=Count("id", filter=_TIMED),
                n_flagged=Count("id", filter=Q(flagged=True)),
                best=Max("speedup", filter=_TIMED),
                slowest=Min("speedup", filter=_TIMED),
            )
            .order_by()
        )
        best_runs = {
            (p["agent"], p["task"]): p["run_id"] for p in task_speedup_points(scores=scores)
        }
        slugs = {a.pk: a.slug, b.pk: b.slug}
        sides: dict[str, dict[int, Side]] = {}
        for r in rows:
            sides.setdefault(r["task__slug"], {})[r["agent_id"]] = Side(
                runs=r["n"],
                ranked=r["n_ranked"],
                best=r["best"],
                slowest=r["slowest"],
                best_run_id=best_runs.get((slugs[r["agent_id"]], r["task__slug"])),
                flagged=r["n_flagged"],
            )
        return [
            TaskDuel(task=task, a=by_agent.get(a.pk), b=by_agent.get(b.pk))
            for task, by_agent in sorted(sides.items())
        ]

    return leaderboard_cached(f"duels:{filters.key()}:{a.pk}:{b.pk}", build)


def agent_get(*, slug: str) -> Agent | None:
    return Agent.objects.filter(slug=slug).first()


def agent_boards(*, agent: Agent) -> list[dict[str, Any]]:
    """The agent's row on every GPU board it has gradings on, with its place there and the
    other agents of the board (to compare it with): most graded board first."""
    boards = []
    for gpu in board_gpus():
        rows = leaderboard_rows(filters=ScoreFilters(gpu=gpu))
        rivals = [r.agent for r in rows if r.agent.pk != agent.pk]
        for place, row in enumerate(rows, 1):
            if row.agent.pk == agent.pk:
                boards.append(
                    {"gpu": gpu, "row": row, "place": place, "of": len(rows), "rivals": rivals}
                )
    return sorted(boards, key=lambda b: -b["row"].score.runs)


def agent_main_boards() -> dict[int, RankingRow]:
    """Per agent with GPU gradings, its row on its most graded GPU's board."""

    def build():
        main: dict[int, RankingRow] = {}
        for gpu in board_gpus():
            for row in leaderboard_rows(filters=ScoreFilters(gpu=gpu)):
                held = main.get(row.agent.pk)
                if held is None or row.score.runs > held.score.runs:
                    main[row.agent.pk] = row
        return main

    return leaderboard_cached("agent-main-boards", build)


def agent_scores_by_category(*, agent: Agent) -> dict[str, AgentScore]:
    """Per category, the agent's scores on its most graded GPU (CPU gradings never count)."""

    def build():
        boards = agent_boards(agent=agent)
        if not boards:
            return {}
        scores = public_scores(ScoreFilters(gpu=boards[0]["gpu"])).filter(agent=agent)
        return _agent_scores(scores, "category")

    return leaderboard_cached(f"agent-categories:{agent.pk}", build)


def agent_task_rows(*, agent: Agent) -> list[dict[str, Any]]:
    """Per task: runs, ranked runs, the best and the mean ± spread of speedup over repeats."""
    return leaderboard_cached(f"agent-tasks:{agent.pk}", lambda: _agent_task_rows(agent))


def _agent_task_rows(agent: Agent) -> list[dict[str, Any]]:
    rows = (
        public_scores()
        .filter(agent=agent)
        .values("task__slug", "task__title", "category")
        .annotate(
            n_runs=Count("id"),
            n_ranked=Count("id", filter=_RANKED),
            n_flagged=Count("id", filter=Q(flagged=True)),
            best_speedup=Max("speedup", filter=_TIMED),
            mean_speedup=Avg("speedup", filter=_TIMED),
            n_timed=Count("id", filter=_TIMED),
            sum_sq_speedup=Sum(F("speedup") * F("speedup"), filter=_TIMED),
            best_roofline=Max("roofline_fraction", filter=_RANKED),
            cost_avg=Avg("cost_usd"),
            tokens_avg=Avg("tokens"),
        )
        .order_by("category", "task__slug")
    )
    return [{**row, "spread_speedup": _sample_sd(row)} for row in rows]


def _sample_sd(row: dict[str, Any]) -> float | None:
    # SQLite's STDDEV_SAMP fails on a single value, so the spread is taken from the sums.
    n, mean = row["n_timed"], row["mean_speedup"]
    if not n or mean is None:
        return None
    if n == 1:
        return 0.0
    return math.sqrt(max(row["sum_sq_speedup"] - n * mean * mean, 0.0) / (n - 1))


@dataclass(frozen=True)
class RunFilters:
    agent: str = ""
    task: str = ""
    category: str = ""
    suite: str = ""
    status: str = ""  # the run's status (a verdict's older name is read as that verdict)
    verdict: str = ""  # one of arena.run_verdicts.VERDICT_CODES
    gpu: str = ""
    flag: str = ""  # a flag code
    transcript: str = ""  # "yes" or "no"

    def query(self) -> dict[str, str]:
        return {k: v for k, v in self.__dict__.items() if v}


_ERROR = Evaluation.Status.ERROR
# Score rows of each verdict, as arena.run_verdicts decides it (flagged before failed, a grader
# error before both); a run is listed under a verdict when a grading of it has that verdict.
VERDICT_FILTERS = {
    run_verdicts.RANKED: Q(ranked=True),
    run_verdicts.FLAGGED: Q(flagged=True) & ~Q(status=_ERROR),
    run_verdicts.FAILED: Q(
        status__in=[Evaluation.Status.FAILED, Evaluation.Status.TIMEOUT], flagged=False
    ),
    run_verdicts.GRADER_ERROR: Q(status=_ERROR),
    run_verdicts.UNRANKED_CPU: Q(gpu=CPU, status=Evaluation.Status.PASSED, flagged=False),
}
# The run list's `status` values that named verdicts before `verdict` did, read as those: links
# made then still open the same runs. ("failed" is a run's status again.)
VERDICT_ALIASES = {
    "passed": run_verdicts.RANKED,
    "flagged": run_verdicts.FLAGGED,
    "error": run_verdicts.GRADER_ERROR,
    "unranked": run_verdicts.UNRANKED_CPU,
}
_ACTIVE_RUNS = [
    Run.Status.QUEUED,
    Run.Status.PREPARING,
    Run.Status.AGENT_RUNNING,
    Run.Status.COLLECTING,
    Run.Status.EVALUATING,
]


def run_list_public(filters: RunFilters | None = None, **fields: str) -> QuerySet[Run]:
    """Public runs, newest first; `runs_attach_scores` adds their verdicts to a page of them."""
    f = filters or RunFilters(**fields)
    runs = runs_public().select_related("agent", "task", "created_by")
    if f.agent:
        runs = runs.filter(agent__slug=f.agent)
    if f.task:
        runs = runs.filter(task__slug=f.task)
    if f.category:
        runs = runs.filter(task__category=f.category)
    if f.suite:
        runs = runs.filter(task__suite=f.suite)
    runs = _runs_of_verdict(runs, f.verdict or VERDICT_ALIASES.get(f.status, ""))
    if f.status and f.status not in VERDICT_ALIASES:
        runs = runs.filter(status=f.status)
    if f.gpu:
        runs = runs.filter(pk__in=RunScore.objects.filter(gpu=f.gpu).values("run_id"))
    if f.flag:
        code = f.flag.replace(",", "_")
        flagged = RunScore.objects.filter(flag_codes__contains=f",{code},")
        runs = runs.filter(pk__in=flagged.values("run_id"))
    if f.transcript in ("yes", "no"):
        runs = runs.filter(trajectory__isnull=f.transcript == "no")
    return runs.order_by("-pk")


def _runs_of_verdict(runs: QuerySet[Run], verdict: str) -> QuerySet[Run]:
    if verdict in VERDICT_FILTERS:
        # A semi-join: a JOIN with DISTINCT would sort every public run before paging.
        scores = RunScore.objects.filter(VERDICT_FILTERS[verdict])
        return runs.filter(pk__in=scores.values("run_id"))
    if verdict == run_verdicts.TRANSCRIPT_ONLY:
        with_log = runs.filter(trajectory__isnull=False, submissions__isnull=True)
        return with_log.exclude(status__in=_ACTIVE_RUNS)
    if verdict == run_verdicts.PENDING:
        return runs.filter(status__in=_ACTIVE_RUNS)
    return runs


def run_filter_options() -> dict[str, Any]:
    """Choices of the run list's filters, from what the public runs hold."""

    def build():
        scores = public_scores()
        return {
            "agents": list(Agent.objects.order_by("slug").values_list("slug", flat=True)),
            "suites": sorted(Task.objects.values_list("suite", flat=True).distinct().order_by()),
            "gpus": sorted(scores.values_list("gpu", flat=True).distinct().order_by()),
            "statuses": list(Run.Status.values),
            "verdicts": [(code, run_verdicts.KINDS[code].label) for code in VERDICT_CODES],
        }

    return leaderboard_cached("run-options", build)


def agent_list_public() -> list[dict[str, Any]]:
    """Every agent with public runs: its runs, tasks, GPUs graded on and flagged share."""

    def build():
        runs = (
            runs_public()
            .values("agent_id")
            .annotate(
                n_runs=Count("id"),
                n_tasks=Count("task_id", distinct=True),
                n_transcripts=Count("id", filter=Q(trajectory__isnull=False)),
                last_run=Max("created_at"),
            )
            .order_by()
        )
        by_agent = {r["agent_id"]: r for r in runs}
        gpus: dict[int, dict[str, int]] = {}
        flagged: dict[int, int] = {}
        graded: dict[int, int] = {}
        score_rows = (
            _graded(public_scores())
            .values("agent_id", "gpu")
            .annotate(n=Count("id"), n_flagged=Count("id", filter=Q(flagged=True)))
            .order_by()
        )
        for r in score_rows:
            gpus.setdefault(r["agent_id"], {})[r["gpu"]] = r["n"]
            flagged[r["agent_id"]] = flagged.get(r["agent_id"], 0) + r["n_flagged"]
            graded[r["agent_id"]] = graded.get(r["agent_id"], 0) + r["n"]
        agents = Agent.objects.in_bulk(list(by_agent))
        rows = [
            {
                "agent": agents[pk],
                **by_agent[pk],
                "gpus": sorted(gpus.get(pk, {}).items(), key=lambda kv: (-kv[1], kv[0])),
                "n_graded": graded.get(pk, 0),
                "n_flagged": flagged.get(pk, 0),
            }
            for pk in by_agent
        ]
        return sorted(rows, key=lambda r: (r["agent"].name.lower(), r["agent"].slug))

    return leaderboard_cached("agents", build)


SCORE_ATTRIBUTES = ("status", "ranked", "flagged", "speedup", "roofline_fraction", "gpu", "reward")
# What a verdict is read from, beside those.
_VERDICT_ATTRIBUTES = ("flag_codes", "compiled", "correct", "unseen_correct", "unseen_total")


def runs_attach_scores(runs: list[Run]) -> list[Run]:
    """Set `score_<field>` on each run from its latest score row (None while ungraded) and
    `verdict` (arena.run_verdicts), in one query for the whole page."""
    latest: dict[int, dict[str, Any]] = {}
    rows = RunScore.objects.filter(run__in=[r.pk for r in runs]).order_by("pk")
    for row in rows.values("run_id", *SCORE_ATTRIBUTES, *_VERDICT_ATTRIBUTES):
        latest[row["run_id"]] = row
    for run in runs:
        row = latest.get(run.pk, {})
        for field in SCORE_ATTRIBUTES:
            setattr(run, f"score_{field}", row.get(field))
        run.verdict = verdict_of_run(
            run_status=run.status,
            has_trajectory=run.trajectory_id is not None,
            failure_reason=run.failure_reason,
            # A run stays "evaluating" until its grading is in: that says pending.
            grading=verdict_of_score(row) if row else None,
        )
    return runs


def run_get_visible(*, run_id: int, user: Reader) -> Run | None:
    """A run with its submissions and shapes, and `disclosed` (whether `user` owns it); None
    when it does not exist or is not one `user` may read."""
    return (
        runs_visible_to(user=user)
        .select_related("agent", "task", "created_by")
        .prefetch_related("submissions__evaluation__shapes")
        .filter(pk=run_id)
        .first()
    )


def run_status(*, run_id: int, user: Reader) -> dict[str, Any] | None:
    """What the run page polls: the run's and each evaluation's state, small and uncached."""
    runs = runs_visible_to(user=user).filter(pk=run_id)
    run = runs.values("status", "failure_reason").first()
    if run is None:
        return None
    evaluations = (
        Evaluation.objects.filter(submission__run_id=run_id)
        .order_by("pk")
        .values("pk", "status", "reward", "ranked", "attempts")
    )
    evaluation_list = [{"id": e.pop("pk"), **e} for e in evaluations]
    finished = run["status"] in (Run.Status.DONE, Run.Status.FAILED, Run.Status.CANCELLED)
    finished = finished and all(e["status"] in Evaluation.FINISHED for e in evaluation_list)
    return {**run, "finished": finished, "evaluations": evaluation_list}


def submission_list_pending(*, limit: int = 20) -> QuerySet[Submission]:
    # Driven by the (status, created_at) index of evaluations: the queue is short, the table not.
    newest_unfinished = (
        Evaluation.objects.filter(status__in=[Evaluation.Status.QUEUED, Evaluation.Status.RUNNING])
        .order_by("-created_at")
        .values("pk")[:limit]
    )
    return (
        Submission.objects.filter(evaluation__in=newest_unfinished, run__hidden=False)
        .select_related("run__agent", "run__task", "evaluation")
        .defer("evaluation__solution_code", "evaluation__result")
        .order_by("-pk")[:limit]
    )


def score_list_recent(*, filters: ScoreFilters, limit: int = 15) -> QuerySet[RunScore]:
    """The board's latest gradings (its GPU's), newest first."""
    scores = board_scores(filters).select_related("agent", "task", "run__created_by")
    return scores.order_by("-pk")[:limit]


def task_runs(*, task: Task, limit: int = 300) -> list[RunScore]:
    scores = public_scores().filter(task=task).select_related("agent", "run")
    return list(scores.order_by("-pk")[:limit])


def matrix_cells(*, filters: ScoreFilters) -> dict[str, Any]:
    """Agent x task grid of one board: per pair its verdict (the best any of its runs reached),
    its best ranked speedup and the run to open; agents in the board's order."""
    return leaderboard_cached(f"matrix:{filters.key()}", lambda: _matrix(filters))


def _matrix(filters: ScoreFilters) -> dict[str, Any]:
    scores = board_scores(filters)
    rows = (
        scores.values("agent_id", "task_id")
        .annotate(
            n=Count("id"),
            n_ranked=Count("id", filter=VERDICT_FILTERS[run_verdicts.RANKED]),
            n_flagged=Count("id", filter=VERDICT_FILTERS[run_verdicts.FLAGGED]),
            n_failed=Count("id", filter=VERDICT_FILTERS[run_verdicts.FAILED]),
            best_roofline=Max("roofline_fraction", filter=Q(ranked=True)),
            best_speedup=Max("speedup", filter=_TIMED),
        )
        .order_by()
    )
    # The run a cell opens is the one its colour stands for: the fastest ranked run.
    best_runs = _best_run_per(scores, ["agent_id", "task_id"], speed_first=True)
    agents = Agent.objects.in_bulk({r["agent_id"] for r in rows})
    tasks = Task.objects.in_bulk({r["task_id"] for r in rows})
    with_transcript = _with_transcript(best_runs.values())
    cells = {}
    for r in rows:
        run_id = best_runs[(r["agent_id"], r["task_id"])]
        cells[(r["agent_id"], r["task_id"])] = {
            **r,
            "verdict": _cell_verdict(r),
            "run_id": run_id,
            "has_transcript": run_id in with_transcript,
        }
    task_list = sorted(tasks.values(), key=lambda t: (t.category, t.slug))
    grid = [
        {"agent": a, "cells": [cells.get((a.pk, t.pk)) for t in task_list]}
        for a in _board_order(filters, agents)
    ]
    return {"tasks": task_list, "grid": grid}


def _board_order(filters: ScoreFilters, agents: dict[int, Agent]) -> list[Agent]:
    """The agents in the board's default order; those with grader errors alone (no row on the
    board) after them, by slug."""
    ranked = [row.agent.pk for row in leaderboard_rows(filters=filters)]
    rest = sorted((pk for pk in agents if pk not in ranked), key=lambda pk: agents[pk].slug)
    return [agents[pk] for pk in [*ranked, *rest] if pk in agents]


def _best_run_per(
    scores: QuerySet[RunScore], keys: list[str], *, speed_first: bool = False
) -> dict[tuple, int]:
    """Per group of `keys`, the run to open: ranked before not, then by roofline (comparable
    across tasks) and speedup, or speedup first (`speed_first`, within one task), then newest."""
    by_roofline = F("roofline_fraction").desc(nulls_last=True)
    by_speedup = F("speedup").desc(nulls_last=True)
    speeds = [by_speedup, by_roofline] if speed_first else [by_roofline, by_speedup]
    order = [F("ranked").desc(), *speeds, F("run_id").desc()]
    # One pass with a window function rather than a correlated subquery per group.
    first = scores.annotate(
        position=Window(RowNumber(), partition_by=[F(k) for k in keys], order_by=order)
    ).filter(position=1)
    return {tuple(r[k] for k in keys): r["run_id"] for r in first.values(*keys, "run_id")}


def _with_transcript(run_ids) -> set[int]:
    """Which of these runs have a transcript, in one query (for their one-click links)."""
    runs = Run.objects.filter(pk__in=list(run_ids), trajectory__isnull=False)
    return set(runs.values_list("pk", flat=True))


def _cell_verdict(row: dict[str, Any]) -> str:
    # The best outcome the agent reached on the task decides the cell, in the order of the
    # verdicts (arena.run_verdicts): a grader error only where nothing else happened.
    if row["n_ranked"]:
        return run_verdicts.RANKED
    if row["n_flagged"]:
        return run_verdicts.FLAGGED
    if row["n_failed"]:
        return run_verdicts.FAILED
    return run_verdicts.GRADER_ERROR


# --- the roofline chart of a task -------------------------------------------------------------

ROOFLINE_RUN_LIMIT = 40  # runs drawn on a task's chart, best first


def shape_label(shape: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in shape.items())


def task_roofline(*, task: Task) -> dict[str, Any]:
    """Inputs of the task's roofline chart: achieved rate per visible shape of its best timed
    runs, the eager and SOTA baselines on the same GPU, and that GPU's peak."""
    best = list(
        public_scores()
        .filter(task=task, correct=True, speedup__isnull=False)
        .select_related("agent")
        .order_by(F("roofline_fraction").desc(nulls_last=True), "-speedup")[:ROOFLINE_RUN_LIMIT]
    )
    field = "tflops" if task.regime == "compute" else "gbps"
    shapes = EvaluationShape.objects.filter(
        evaluation__submission__score__in=[s.pk for s in best], seen=True
    ).values("evaluation__submission__run_id", "shape", field)
    achieved: dict[int, dict[str, float | None]] = {}
    for row in shapes:
        by_shape = achieved.setdefault(row["evaluation__submission__run_id"], {})
        by_shape[shape_label(row["shape"])] = row[field]
    shape_rows = task_shape_rows(task=task)
    labels = [shape_label(r["shape"]) for r in shape_rows]
    gpu = best[0].gpu if best else ""
    baselines = _baseline_lines(shape_rows, gpu, field)
    peaks = peaks_for(gpu or (baselines[0]["gpu"] if baselines else ""))
    peak = None
    if peaks is not None and field == "gbps":
        peak = peaks.hbm_gbps
    elif peaks is not None:
        try:
            key = compute_dtype_key(task.dtype, allow_tf32=bool(task.manifest.get("allow_tf32")))
        except ValueError:
            key = ""
        peak = peaks.tflops.get(key)
    return {
        "regime": task.regime,
        "shape_labels": labels,
        "runs": [
            {
                "label": f"#{s.run_id} {s.agent.slug}",
                "agent": s.agent.slug,
                "agent_id": s.agent_id,
                "run_id": s.run_id,
                "values": [achieved.get(s.run_id, {}).get(label) for label in labels],
            }
            for s in best
        ],
        "baselines": baselines,
        "peak": peak,
        "peak_label": f"peak of {peaks.name}" if peaks else "peak",
    }


def _baseline_lines(shape_rows: list[dict[str, Any]], gpu: str, field: str) -> list[dict]:
    """Eager and SOTA achieved rates from the catalogue's measured baseline times."""
    measured_gpus = [name for name, _ in shape_rows[0]["measured"]] if shape_rows else []
    chosen = gpu if gpu in measured_gpus else (measured_gpus[0] if measured_gpus else "")
    if not chosen:
        return []
    lines = []
    for key, name in (("eager_ms", "eager"), ("sota_ms", "SOTA")):
        values = []
        for row in shape_rows:
            ms = dict(row["measured"]).get(chosen, {}).get(key)
            work = row["gflop"] if field == "tflops" else row["mbytes"]
            # GFLOP per ms is TFLOP/s; MB per ms is GB/s.
            values.append(work / ms if ms and work else None)
        lines.append({"name": f"{name} on {chosen}", "gpu": chosen, "values": values})
    return lines
