from django.conf import settings
from django.db import models

from tasks.models import Task


class Evaluation(models.Model):
    """One grading of one solution on one task; the row is the job's source of truth."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        PASSED = "passed"
        FAILED = "failed"
        ERROR = "error"
        TIMEOUT = "timeout"

    FINISHED = (Status.PASSED, Status.FAILED, Status.ERROR, Status.TIMEOUT)

    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="evaluations")
    task_version = models.CharField(max_length=64)
    solution_name = models.CharField(max_length=200, default="solution.py")
    solution_code = models.TextField()
    solution_sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    device = models.CharField(max_length=10, blank=True)
    reward = models.FloatField(null=True, blank=True)
    ranked = models.BooleanField(default=False)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    # The account that asked for a grading outside any run (POST /api/v1/evaluations): only it
    # (and staff) may read that grading. A run's grading is read as its run is, which the layer
    # that owns runs decides (arena.selectors.evaluations_visible_to).
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="evaluations_submitted",
    )
    attempts = models.PositiveIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"evaluation {self.pk} of {self.task_id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class EvaluationShape(models.Model):
    """One row of the per-shape table: correctness and timing on one shape."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="shapes")
    index = models.PositiveIntegerField()
    shape = models.JSONField()
    seen = models.BooleanField(default=True)
    correct = models.BooleanField(null=True)
    reason = models.TextField(blank=True)
    max_abs_err = models.FloatField(null=True)
    max_rel_err = models.FloatField(null=True)
    candidate_median_ms = models.FloatField(null=True)
    candidate_p10_ms = models.FloatField(null=True)
    candidate_p90_ms = models.FloatField(null=True)
    eager_ms = models.FloatField(null=True)
    compile_ms = models.FloatField(null=True)
    sota_ms = models.FloatField(null=True)
    tflops = models.FloatField(null=True)
    gbps = models.FloatField(null=True)
    roofline_fraction = models.FloatField(null=True)

    class Meta:
        ordering = ["evaluation", "index"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "index"], name="unique_shape_index")
        ]

    def __str__(self) -> str:
        return f"shape {self.index} of evaluation {self.evaluation_id}"
