"""The leaderboard's own tables: caches derived from graded runs, rebuilt at will.

A `RunScore` row is one finished evaluation of a submission flattened into the columns the
ranking aggregates in SQL, so a page never reads 100,000 result documents in Python.
"""

from django.db import models

from arena.models import Agent, Run, Submission
from tasks.models import Task


class RunScore(models.Model):
    submission = models.OneToOneField(Submission, on_delete=models.CASCADE, related_name="score")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="scores")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="scores")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="scores")
    category = models.CharField(max_length=20)
    # "<suite>@<12 hex>": the exact set of task versions in the suite when this was graded
    # (see docs/leaderboard.md); "<suite>@superseded" when the task has changed since.
    suite_version = models.CharField(max_length=120)
    gpu = models.CharField(max_length=100)  # the device's name, "cpu" for CPU gradings
    status = models.CharField(max_length=10)  # the evaluation's
    compiled = models.BooleanField()
    correct = models.BooleanField()  # the correctness gate passed on the visible shapes
    ranked = models.BooleanField()  # status passed and no flags
    flagged = models.BooleanField()
    overfit = models.BooleanField()
    speedup = models.FloatField(null=True)  # geometric mean over shapes, against eager
    roofline_fraction = models.FloatField(null=True)
    unseen_correct = models.PositiveIntegerField(default=0)
    unseen_total = models.PositiveIntegerField(default=0)
    reward = models.FloatField(null=True)
    tokens = models.BigIntegerField(default=0)  # input + output + cache tokens of the run
    cost_usd = models.FloatField(null=True)
    repeat = models.PositiveIntegerField(default=1)  # 1 for an agent's first run on a task
    finished_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["agent", "task"]),
            models.Index(fields=["category"]),
            models.Index(fields=["gpu"]),
            models.Index(fields=["suite_version"]),
        ]

    def __str__(self) -> str:
        return f"score of submission {self.submission_id}"


class LeaderboardGeneration(models.Model):
    """One row whose counter names the current state of the scores, for every process's cache."""

    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"leaderboard generation {self.value}"
