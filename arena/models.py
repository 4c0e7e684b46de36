from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models

from evaluator.models import Evaluation
from tasks.models import Task
from transcripts.models import Trajectory


class Agent(models.Model):
    """An agent as ranked: harness + model + effort + CLI version, named by its slug."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=100)
    # The keys of its name (arena/agent_names.py), written only by agent_name_set: two spellings
    # with one name_key are one agent; a new name with another agent's lookalike_key (UTS #39
    # skeleton) is refused. Null only on agents from before the keys whose key or look an older
    # agent already had, and on names no longer accepted: those are found by slug alone.
    name_key = models.TextField(unique=True, null=True, blank=True, editable=False)
    lookalike_key = models.TextField(unique=True, null=True, blank=True, editable=False)
    harness = models.CharField(max_length=50, blank=True)
    model = models.CharField(max_length=100, blank=True)
    effort = models.CharField(max_length=30, blank=True)
    cli_version = models.CharField(max_length=50, blank=True)
    # How the arena runs it (arena/agents): the adapter's options and the default budget, e.g.
    # {"strategy": "weak"}, {"template": "mycli --prompt-file {prompt}"}, {"budget": {...}}.
    config = models.JSONField(default=dict, blank=True)
    # Who may submit under the agent, attach transcripts to its runs and withdraw them: its
    # owner and the members of its organisation (staff always). No owner: a platform agent,
    # run by the arena or made by staff, that only staff act for.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="agents",
    )
    organisation = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.SET_NULL, related_name="agents"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Run(models.Model):
    """One attempt of one agent at one task, uploaded or run in the arena."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        PREPARING = "preparing"
        AGENT_RUNNING = "agent_running"
        COLLECTING = "collecting"
        EVALUATING = "evaluating"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    class FailureReason(models.TextChoices):
        AGENT_ERROR = "agent_error"
        AGENT_TIMEOUT = "agent_timeout"
        BUDGET_EXHAUSTED = "budget_exhausted"
        NO_SOLUTION = "no_solution"
        SANDBOX_ERROR = "sandbox_error"
        PROVIDER_ERROR = "provider_error"
        GRADER_ERROR = "grader_error"

    class Source(models.TextChoices):
        UPLOAD = "upload"
        ARENA = "arena"
        IMPORTED = "imported"  # published by another benchmark, graded again here (ImportedRun)

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="runs")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    failure_reason = models.CharField(max_length=20, choices=FailureReason.choices, blank=True)
    failure_detail = models.TextField(blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.UPLOAD)
    # The account that uploaded the run or launched it; none for the platform's own runs.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="runs_created",
    )
    # Moderation: a hidden run stays in the database and the admin, off every public page.
    hidden = models.BooleanField(default=False)
    hidden_reason = models.CharField(max_length=200, blank=True)
    # What the agent spent, from its trajectory (input excludes the cached part).
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(null=True, blank=True)
    cost_computed = models.BooleanField(default=False)  # priced from our table, not the log
    duration_s = models.FloatField(null=True, blank=True)
    trajectory = models.OneToOneField(
        Trajectory, null=True, blank=True, on_delete=models.SET_NULL, related_name="run"
    )
    # An arena run records what ran and under which limits: the agent row can change later. An
    # uploaded run records what its log says it ran (the harness of the log's format).
    harness = models.CharField(max_length=50, blank=True)
    cli_version = models.CharField(max_length=50, blank=True)
    model = models.CharField(max_length=100, blank=True)
    # Whether its log names the task (its slug or files): no says the log may be another
    # task's work. None: no log, or not asked.
    log_names_task = models.BooleanField(null=True, blank=True)
    effort = models.CharField(max_length=30, blank=True)
    budget = models.JSONField(default=dict, blank=True)
    # Protected workspace files the agent changed, replaced or deleted; non-empty flags the run.
    protected_changed = models.JSONField(default=list, blank=True)
    # The worker holding an arena run renews its lease; an expired lease means the worker died
    # and the run may be claimed again (attempts counts the claims).
    attempts = models.PositiveIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "hidden"])]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.agent_id} on {self.task_id}"


class ImportedRun(models.Model):
    """Where an imported run came from (arena/imported_runs.py) and the result its benchmark
    published for it, kept beside our own grading: outcome, score, audit verdict, trace link."""

    class Origin(models.TextChoices):
        KERNELBENCH_HARD = "kernelbench-hard", "KernelBench-Hard"

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="imported")
    origin = models.CharField(max_length=40, choices=Origin.choices)
    external_id = models.CharField(max_length=200)  # the run's id in its benchmark
    published = models.JSONField(default=dict, blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["origin", "external_id"], name="imported_run_unique_per_origin"
            )
        ]

    def __str__(self) -> str:
        return f"{self.origin} run {self.external_id}"


class Batch(models.Model):
    """Solutions uploaded together for one agent (POST /api/v1/batches), each graded as its own
    submission. A client names its batch (`key`): sending it again adds only what it lacks."""

    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="batches")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    key = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["created_by", "key"],
                condition=~models.Q(key=""),
                name="batch_key_unique_per_account",
            )
        ]

    def __str__(self) -> str:
        return f"batch {self.pk} of {self.agent}"


class Submission(models.Model):
    """The solution a run produced, and the evaluation that grades it."""

    class KernelSource(models.TextChoices):
        ATTACHED = "attached"  # uploaded beside its log
        LOG = "log"  # the last content the log's agent wrote to it (kernel_* say where)

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="submissions")
    # Where an uploaded log's kernel came from, so a reader can judge the link between the
    # two; blank for solutions uploaded alone and for arena runs'.
    kernel_source = models.CharField(max_length=10, choices=KernelSource.choices, blank=True)
    kernel_path = models.CharField(max_length=500, blank=True)  # as the log wrote it
    kernel_turn = models.PositiveIntegerField(null=True, blank=True)  # the turn of its last write
    kernel_thread = models.CharField(max_length=200, blank=True)  # that turn's thread
    kernel_tool = models.CharField(max_length=100, blank=True)  # the tool that wrote it
    evaluation = models.OneToOneField(
        Evaluation, on_delete=models.PROTECT, related_name="submission"
    )
    batch = models.ForeignKey(
        Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="submissions"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"submission {self.pk} of run {self.run_id}"


class RunScore(models.Model):
    """One finished evaluation of a submission flattened into the columns the ranking
    aggregates in SQL, so a page never reads 100,000 result documents in Python. A projection,
    written by arena/run_scores.py when a grading finishes and rebuilt at will."""

    CPU = "cpu"  # the `gpu` of a CPU grading: untimed, so never ranked

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
    ranked = models.BooleanField()  # status passed, no flags, graded on a GPU
    flagged = models.BooleanField()
    # The grader's flag codes as ",code,other," (sorted), so one code is found by containment.
    flag_codes = models.CharField(max_length=500, blank=True, default="")
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
        # The tables were made when the projection belonged to the leaderboard app.
        db_table = "leaderboard_runscore"
        indexes = [
            models.Index(fields=["agent", "task"], name="leaderboard_agent_i_b766c5_idx"),
            models.Index(fields=["category"], name="leaderboard_categor_d22be4_idx"),
            models.Index(fields=["gpu"], name="leaderboard_gpu_2d5734_idx"),
            models.Index(fields=["suite_version"], name="leaderboard_suite_v_e6f1f9_idx"),
        ]

    def __str__(self) -> str:
        return f"score of submission {self.submission_id}"


class LeaderboardGeneration(models.Model):
    """One row whose counter names the current state of the scores, for every process's cache."""

    value = models.BigIntegerField(default=0)

    class Meta:
        db_table = "leaderboard_leaderboardgeneration"

    def __str__(self) -> str:
        return f"leaderboard generation {self.value}"
