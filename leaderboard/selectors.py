"""Reads of the leaderboard. Scores are aggregated in SQL over `RunScore` rows and cached under
the generation that `leaderboard_invalidate()` bumps, so a page costs a few small queries.
"""

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import Avg, Count, F, Max, Q, QuerySet, Sum, Window
from django.db.models.functions import Floor, Ln, RowNumber

from arena.models import Agent, LeaderboardGeneration, Run, RunScore, Submission
from evaluator.engine.roofline import compute_dtype_key, peaks_for
from evaluator.models import Evaluation, EvaluationShape
from leaderboard.scores import FAST_P_THRESHOLDS, AgentScore, mean_and_spread
from tasks.models import Task
from tasks.selectors import task_shape_rows

# A safety net: a process that missed an invalidation still catches up within this many seconds.
CACHE_TTL_S = 60
SPEEDUP_BIN_LOG2 = 0.25  # histogram bins of the speedup distribution, in powers of two
SORT_KEYS = {
    "fast_1": lambda s: s.fast_p[1.0],
    "fast_0": lambda s: s.fast_p[0.0],
    "fast_1_5": lambda s: s.fast_p[1.5],
    "fast_2": lambda s: s.fast_p[2.0],
    "speedup": lambda s: s.speedup_geomean_all or 0.0,
    "speedup_correct": lambda s: s.speedup_geomean_correct or 0.0,
    "roofline": lambda s: s.roofline_geomean or 0.0,
    "correct": lambda s: s.correctness_rate,
    "compile": lambda s: s.compile_rate,
    "generalization": lambda s: s.generalization_pass_rate or 0.0,
    "tasks": lambda s: s.tasks_attempted,
    "runs": lambda s: s.runs,
    # Cheaper first: sorted descending like the rest, so the key is negated.
    "cost": lambda s: -(s.cost_per_run_usd if s.cost_per_run_usd is not None else math.inf),
    "tokens": lambda s: -s.tokens_per_run,
}


@dataclass(frozen=True)
class ScoreFilters:
    category: str = ""
    gpu: str = ""
    suite_version: str = ""

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
    if filters.suite_version:
        scores = scores.filter(suite_version=filters.suite_version)
    return scores


# --- scores per agent -------------------------------------------------------------------------

_RANKED = Q(ranked=True, correct=True)
_TIMED = _RANKED & Q(speedup__gt=0)


def _score_aggregates() -> dict[str, Any]:
    fast = {
        _fast_name(p): Count("id", filter=_RANKED & Q(speedup__gt=p)) for p in FAST_P_THRESHOLDS
    }
    return {
        "n_runs": Count("id"),
        "n_tasks": Count("task_id", distinct=True),
        "n_compiled": Count("id", filter=Q(compiled=True)),
        "n_correct": Count("id", filter=_RANKED),
        **fast,
        "ln_speedup_sum": Sum(Ln("speedup"), filter=_TIMED),
        "ln_speedup_avg": Avg(Ln("speedup"), filter=_TIMED),
        "ln_roofline_avg": Avg(
            Ln("roofline_fraction"), filter=_RANKED & Q(roofline_fraction__gt=0)
        ),
        "unseen_ok": Sum("unseen_correct", filter=Q(correct=True)),
        "unseen_n": Sum("unseen_total", filter=Q(correct=True)),
        "n_overfit": Count("id", filter=Q(overfit=True)),
        "n_flagged": Count("id", filter=Q(flagged=True)),
        "tokens_sum": Sum("tokens"),
        "cost_avg": Avg("cost_usd"),
    }


def _fast_name(p: float) -> str:
    return "fast_" + f"{p:g}".replace(".", "_")


def _score_from_row(agent: str, row: dict[str, Any], repeats: list[dict[str, Any]]) -> AgentScore:
    runs = row["n_runs"]
    per_repeat_fast_1 = [r["fast_1"] / r["n_runs"] for r in repeats]
    per_repeat_speedup = [math.exp((r["ln_speedup_sum"] or 0.0) / r["n_runs"]) for r in repeats]
    return AgentScore(
        agent=agent,
        runs=runs,
        tasks_attempted=row["n_tasks"],
        compile_rate=row["n_compiled"] / runs,
        correctness_rate=row["n_correct"] / runs,
        fast_p={p: row[_fast_name(p)] / runs for p in FAST_P_THRESHOLDS},
        speedup_geomean_correct=_exp(row["ln_speedup_avg"]),
        # A run that is not correct and timed counts as 1x: ln 1 = 0 adds nothing to the sum.
        speedup_geomean_all=math.exp((row["ln_speedup_sum"] or 0.0) / runs),
        roofline_geomean=_exp(row["ln_roofline_avg"]),
        generalization_pass_rate=(
            (row["unseen_ok"] or 0) / row["unseen_n"] if row["unseen_n"] else None
        ),
        overfit_count=row["n_overfit"],
        flagged=row["n_flagged"],
        tokens_per_run=(row["tokens_sum"] or 0) / runs,
        cost_per_run_usd=row["cost_avg"],
        fast_1_repeats=mean_and_spread(per_repeat_fast_1),
        speedup_geomean_all_repeats=mean_and_spread(per_repeat_speedup),
        repeats=len(repeats),
    )


def _exp(value: float | None) -> float | None:
    return math.exp(value) if value is not None else None


def _agent_scores(scores: QuerySet[RunScore], group: str) -> dict[Any, AgentScore]:
    aggregates = _score_aggregates()
    # A grader error (the reference ran out of memory, say) is the grader's failure, not the
    # agent's: it counts in no rate, as an unfinished evaluation does; the matrix shows it ERR.
    scores = scores.exclude(status=Evaluation.Status.ERROR)
    rows = scores.values(group).annotate(**aggregates).order_by()
    repeat_rows = (
        scores.values(group, "repeat")
        .annotate(
            n_runs=aggregates["n_runs"],
            fast_1=aggregates["fast_1"],
            ln_speedup_sum=aggregates["ln_speedup_sum"],
        )
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


def leaderboard_rows(*, filters: ScoreFilters, sort: str = "fast_1") -> list[RankingRow]:
    """The ranking: one row per agent, sorted by `sort`, best first. Ties go to fast_1, then to
    the higher correctness rate, then to the geometric-mean speedup with failures as 1x, and
    only then to the name: an agent that fails everything never outranks one that is correct
    at no speedup because its name sorts first."""
    rows = leaderboard_cached(f"rows:{filters.key()}", lambda: _ranking(filters))
    key = SORT_KEYS.get(sort, SORT_KEYS["fast_1"])

    def order(row: RankingRow) -> tuple[float, float, float, float, str]:
        score = row.score
        return (
            -key(score),
            -score.fast_p[1.0],
            -score.correctness_rate,
            -(score.speedup_geomean_all or 0.0),
            row.agent.slug,
        )

    return sorted(rows, key=order)


def _ranking(filters: ScoreFilters) -> list[RankingRow]:
    by_agent = _agent_scores(public_scores(filters), "agent_id")
    agents = Agent.objects.in_bulk(list(by_agent))
    return [RankingRow(agent=agents[pk], score=score) for pk, score in by_agent.items()]


def leaderboard_filter_options() -> dict[str, list[str]]:
    def build():
        scores = public_scores()
        return {
            "categories": list(Task.Category.values),
            "gpus": sorted(scores.values_list("gpu", flat=True).distinct().order_by()),
            "suite_versions": sorted(
                scores.values_list("suite_version", flat=True).distinct().order_by()
            ),
        }

    return leaderboard_cached("options", build)


def agent_score_list(*, category: str = "") -> list[AgentScore]:
    """One score per agent (named by slug), best fast_1 first."""
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
            public_scores(filters)
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


def agent_get(*, slug: str) -> Agent | None:
    return Agent.objects.filter(slug=slug).first()


def agent_scores_by_category(*, agent: Agent) -> dict[str, AgentScore]:
    def build():
        return _agent_scores(public_scores().filter(agent=agent), "category")

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


def run_list_public(
    *,
    agent: str = "",
    task: str = "",
    category: str = "",
    status: str = "",
    gpu: str = "",
) -> QuerySet[Run]:
    """Public runs, newest first; `runs_attach_scores` adds their verdicts to a page of them."""
    runs = Run.objects.filter(hidden=False).select_related("agent", "task", "created_by")
    if agent:
        runs = runs.filter(agent__slug=agent)
    if task:
        runs = runs.filter(task__slug=task)
    if category:
        runs = runs.filter(task__category=category)
    if status:
        runs = runs.filter(status=status)
    if gpu:
        # A semi-join: a JOIN with DISTINCT would sort every public run before paging.
        runs = runs.filter(pk__in=RunScore.objects.filter(gpu=gpu).values("run_id"))
    return runs.order_by("-pk")


SCORE_ATTRIBUTES = ("status", "ranked", "flagged", "speedup", "roofline_fraction", "gpu", "reward")


def runs_attach_scores(runs: list[Run]) -> list[Run]:
    """Set `score_<field>` on each run from its latest score row (None while ungraded), in one
    query for the whole page."""
    latest: dict[int, dict[str, Any]] = {}
    rows = RunScore.objects.filter(run__in=[r.pk for r in runs]).order_by("pk")
    for row in rows.values("run_id", *SCORE_ATTRIBUTES):
        latest[row["run_id"]] = row
    for run in runs:
        row = latest.get(run.pk, {})
        for field in SCORE_ATTRIBUTES:
            setattr(run, f"score_{field}", row.get(field))
    return runs


def run_get_public(*, run_id: int) -> Run | None:
    """A run with its submissions and shapes; None when it does not exist or is hidden."""
    return (
        Run.objects.select_related("agent", "task", "created_by")
        .prefetch_related("submissions__evaluation__shapes")
        .filter(pk=run_id, hidden=False)
        .first()
    )


def run_status(*, run_id: int) -> dict[str, Any] | None:
    """What the run page polls: the run's and each evaluation's state, small and uncached."""
    run = Run.objects.filter(pk=run_id, hidden=False).values("status", "failure_reason").first()
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


def score_list_recent(*, limit: int = 15) -> QuerySet[RunScore]:
    return (
        public_scores().select_related("agent", "task", "run__created_by").order_by("-pk")[:limit]
    )


def task_runs(*, task: Task, limit: int = 300) -> list[RunScore]:
    return list(public_scores().filter(task=task).select_related("agent").order_by("-pk")[:limit])


def matrix_cells(*, filters: ScoreFilters) -> dict[str, Any]:
    """Agent x task grid: per pair the verdict class, its best roofline and the run to open."""
    return leaderboard_cached(f"matrix:{filters.key()}", lambda: _matrix(filters))


def _matrix(filters: ScoreFilters) -> dict[str, Any]:
    scores = public_scores(filters)
    rows = (
        scores.values("agent_id", "task_id")
        .annotate(
            n=Count("id"),
            n_ranked=Count("id", filter=Q(ranked=True)),
            n_flagged=Count("id", filter=Q(flagged=True)),
            n_failed=Count("id", filter=Q(status=Evaluation.Status.FAILED, flagged=False)),
            best_roofline=Max("roofline_fraction", filter=Q(ranked=True)),
            best_speedup=Max("speedup", filter=Q(ranked=True)),
        )
        .order_by()
    )
    best_runs = _best_run_per_pair(scores)
    agents = Agent.objects.in_bulk({r["agent_id"] for r in rows})
    tasks = Task.objects.in_bulk({r["task_id"] for r in rows})
    cells = {
        (r["agent_id"], r["task_id"]): {
            **r,
            "verdict": _verdict(r),
            "run_id": best_runs[(r["agent_id"], r["task_id"])],
        }
        for r in rows
    }
    agent_list = sorted(agents.values(), key=lambda a: a.slug)
    task_list = sorted(tasks.values(), key=lambda t: (t.category, t.slug))
    grid = [{"agent": a, "cells": [cells.get((a.pk, t.pk)) for t in task_list]} for a in agent_list]
    return {"tasks": task_list, "grid": grid}


def _best_run_per_pair(scores: QuerySet[RunScore]) -> dict[tuple[int, int], int]:
    """The run a matrix cell opens: ranked before not, then by roofline, speedup, newest."""
    order = [
        F("ranked").desc(),
        F("roofline_fraction").desc(nulls_last=True),
        F("speedup").desc(nulls_last=True),
        F("run_id").desc(),
    ]
    # One pass with a window function rather than a correlated subquery per cell.
    first = scores.annotate(
        position=Window(RowNumber(), partition_by=[F("agent_id"), F("task_id")], order_by=order)
    ).filter(position=1)
    return {
        (r["agent_id"], r["task_id"]): r["run_id"]
        for r in first.values("agent_id", "task_id", "run_id")
    }


def _verdict(row: dict[str, Any]) -> str:
    # The best outcome the agent reached on the task decides the cell.
    if row["n_ranked"]:
        return "PASS"
    if row["n_flagged"]:
        return "FLAGGED"
    if row["n_failed"]:
        return "FAIL"
    return "ERR"


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
