from django.db import models

from evaluator.models import Evaluation
from tasks.models import Task
from transcripts.models import Trajectory


class Agent(models.Model):
    """An agent as ranked: harness + model + effort + CLI version, named by its slug."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=100)
    harness = models.CharField(max_length=50, blank=True)
    model = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Run(models.Model):
    """One attempt of one agent at one task, uploaded or run in the arena."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        EVALUATING = "evaluating"
        DONE = "done"
        FAILED = "failed"

    class Source(models.TextChoices):
        UPLOAD = "upload"
        ARENA = "arena"

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="runs")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="runs")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.UPLOAD)
    trajectory = models.OneToOneField(
        Trajectory, null=True, blank=True, on_delete=models.SET_NULL, related_name="run"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.agent_id} on {self.task_id}"


class Submission(models.Model):
    """The solution a run produced, and the evaluation that grades it."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="submissions")
    evaluation = models.OneToOneField(
        Evaluation, on_delete=models.PROTECT, related_name="submission"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"submission {self.pk} of run {self.run_id}"
