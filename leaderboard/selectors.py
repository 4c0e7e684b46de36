from django.db.models import QuerySet

from arena.models import Run, Submission
from evaluator.models import Evaluation
from leaderboard.scores import AgentScore, RunRecord, agent_score


def submission_list_graded(*, limit: int = 200) -> QuerySet[Submission]:
    return (
        Submission.objects.filter(evaluation__status__in=Evaluation.FINISHED)
        .select_related("run__agent", "run__task", "evaluation")
        .order_by("-evaluation__finished_at")[:limit]
    )


def submission_list_pending(*, limit: int = 50) -> QuerySet[Submission]:
    return (
        Submission.objects.exclude(evaluation__status__in=Evaluation.FINISHED)
        .select_related("run__agent", "run__task", "evaluation")
        .order_by("-created_at")[:limit]
    )


def run_get_with_submissions(*, run_id: int) -> Run | None:
    return (
        Run.objects.select_related("agent", "task")
        .prefetch_related("submissions__evaluation__shapes")
        .filter(pk=run_id)
        .first()
    )


def run_record_from(submission: Submission) -> RunRecord:
    evaluation = submission.evaluation
    gates = evaluation.result.get("gates", {})
    summary = evaluation.result.get("summary", {})
    unseen = [row for row in evaluation.result.get("per_shape", []) if not row.get("seen", True)]
    return RunRecord(
        agent=submission.run.agent.slug,
        task=submission.run.task.slug,
        category=submission.run.task.category,
        compiled=gates.get("compile", {}).get("passed") is True,
        correct=gates.get("correctness", {}).get("passed") is True,
        ranked=evaluation.ranked,
        speedup=summary.get("speedup_vs_eager"),
        roofline_fraction=summary.get("roofline_fraction"),
        unseen_correct=sum(1 for row in unseen if row.get("correct")),
        unseen_total=len(unseen),
        overfit=any(f.get("code") == "overfit" for f in evaluation.result.get("flags", [])),
    )


def agent_score_list(*, category: str = "") -> list[AgentScore]:
    """One score per agent over its graded submissions, best fast_1 first."""
    submissions = Submission.objects.filter(evaluation__status__in=Evaluation.FINISHED)
    if category:
        submissions = submissions.filter(run__task__category=category)
    by_agent: dict[str, list[RunRecord]] = {}
    for submission in submissions.select_related("run__agent", "run__task", "evaluation"):
        record = run_record_from(submission)
        by_agent.setdefault(record.agent, []).append(record)
    scores = [agent_score(agent, records) for agent, records in by_agent.items()]
    return sorted(scores, key=lambda s: (-s.fast_p[1.0], -(s.speedup_geomean_all or 0), s.agent))
