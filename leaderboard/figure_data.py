"""Rows the leaderboard's figures draw, read from the score projection. Queries only: the
figures themselves are built in leaderboard/figures.py from what these return."""

from typing import Any

from django.db.models import F, QuerySet, Window
from django.db.models.functions import RowNumber

from arena.models import RunScore


def task_speedup_points(*, scores: QuerySet[RunScore]) -> list[dict[str, Any]]:
    """Per (agent, task), the ranked, correct and timed run with the highest speedup, ties to
    the newest run: {"agent", "task" (slugs), "speedup", "run_id"}, by agent then task.

    `scores` is already narrowed to what the board shows (public runs, its GPU, category and
    suite): the best is taken among those rows only.
    """
    timed = scores.filter(ranked=True, correct=True, speedup__gt=0)
    # One pass with a window function rather than a correlated subquery per pair.
    best = timed.annotate(
        position=Window(
            RowNumber(),
            partition_by=[F("agent_id"), F("task_id")],
            order_by=[F("speedup").desc(), F("run_id").desc()],
        )
    ).filter(position=1)
    rows = best.values("agent__slug", "task__slug", "speedup", "run_id")
    return [
        {
            "agent": r["agent__slug"],
            "task": r["task__slug"],
            "speedup": r["speedup"],
            "run_id": r["run_id"],
        }
        for r in rows.order_by("agent__slug", "task__slug")
    ]
