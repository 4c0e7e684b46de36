"""Leaderboard scores against examples computed by hand."""

import math

import pytest

from leaderboard.scores import RunRecord, agent_score, fast_p, geomean, mean_and_spread


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
    )


RECORDS = [
    run("t1", speedup=2.0, roofline=0.5, unseen=(5, 5)),
    run("t2", speedup=0.5, roofline=0.2, unseen=(3, 5), overfit=False),
    run("t3", compiled=False, correct=False),
    run("t4", correct=False, unseen=(0, 0)),
    # Correct but flagged (say, tampering): attempted, compiled, never correct or fast.
    run("t5", ranked=False, speedup=10.0, roofline=0.9),
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


def test_overfit_runs_are_counted():
    score = agent_score("a", [run("t1", correct=True, ranked=False, unseen=(0, 5), overfit=True)])
    assert score.overfit_count == 1
    assert score.generalization_pass_rate == 0.0
    assert score.correctness_rate == 0.0


def test_geomean_ignores_missing_values():
    assert geomean([4.0, None, 1.0]) == pytest.approx(2.0)
    assert geomean([]) is None


def test_mean_and_spread_over_repeats():
    assert mean_and_spread([1.0, 2.0, 3.0]) == pytest.approx((2.0, 1.0))
    assert mean_and_spread([1.5]) == (1.5, 0.0)
    assert mean_and_spread([]) is None


@pytest.mark.django_db
def test_agent_score_list_reads_graded_submissions(catalog_tasks):
    from django.utils import timezone

    from arena.models import Agent, Run, Submission
    from evaluator.models import Evaluation
    from leaderboard.selectors import agent_score_list
    from tasks.models import Task

    task = Task.objects.get(slug="silu")

    def graded(agent, *, correct, ranked, speedup, flags=()):
        evaluation = Evaluation.objects.create(
            task=task,
            task_version=task.version_hash,
            solution_code="#",
            solution_sha256="0",
            status="passed" if correct else "failed",
            ranked=ranked,
            finished_at=timezone.now(),
            result={
                "gates": {"compile": {"passed": True}, "correctness": {"passed": correct}},
                "summary": {"speedup_vs_eager": speedup},
                "per_shape": [{"seen": False, "correct": correct}] * 2,
                "flags": [{"code": c, "message": ""} for c in flags],
            },
        )
        run = Run.objects.create(agent=agent, task=task, status=Run.Status.DONE)
        Submission.objects.create(run=run, evaluation=evaluation)

    fast = Agent.objects.create(slug="fast", name="Fast")
    slow = Agent.objects.create(slug="slow", name="Slow")
    graded(fast, correct=True, ranked=True, speedup=3.0)
    graded(fast, correct=True, ranked=False, speedup=9.0, flags=["tampering"])
    graded(slow, correct=False, ranked=False, speedup=None)
    scores = agent_score_list()
    assert [s.agent for s in scores] == ["fast", "slow"]
    assert scores[0].fast_p[1.0] == pytest.approx(0.5)
    assert scores[0].flagged == 1
    assert scores[0].generalization_pass_rate == pytest.approx(1.0)
    assert scores[1].compile_rate == 1.0 and scores[1].correctness_rate == 0.0
    assert agent_score_list(category="hard") == []
