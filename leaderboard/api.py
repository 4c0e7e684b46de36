"""The public read API: leaderboard, agents, tasks and runs. No authentication needed; hidden
runs appear to their owners alone, by id (arena.selectors.runs_visible_to), and a grading's
solution output only to its owners. One view per operation; query parameters are validated by
an InputSerializer."""

from dataclasses import fields as dataclass_fields

from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.models import Run
from arena.run_verdicts import VERDICT_CODES, Verdict, verdict_of_grading, verdict_of_run
from evaluator.redaction import result_seen
from leaderboard.scores import (
    FAILURE_SPEEDUP,
    FAST_P_THRESHOLDS,
    PRELIMINARY_BELOW_TASKS,
    AgentScore,
)
from leaderboard.selectors import (
    DEFAULT_SORT,
    SORT_KEYS,
    VERDICT_ALIASES,
    RunFilters,
    ScoreFilters,
    agent_boards,
    agent_get,
    agent_list_public,
    agent_main_boards,
    agent_scores_by_category,
    agent_task_rows,
    leaderboard_cached,
    leaderboard_rows,
    run_get_visible,
    run_list_public,
    runs_attach_scores,
)
from tasks.models import Task
from tasks.selectors import task_get_active, task_list
from web.page_cache import public_page

RUN_STATUSES = Run.Status.values
CATEGORIES = Task.Category.values


class Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 500


def _paginated(view: APIView, request, items, serializer_class, *, prepare=None) -> Response:
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(items, request, view=view)
    if prepare is not None:
        page = prepare(page)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


def _query(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


# --- output shapes ----------------------------------------------------------------------------


class AgentOutputSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    harness = serializers.CharField()
    model = serializers.CharField()
    effort = serializers.CharField()
    cli_version = serializers.CharField()


class SpreadSerializer(serializers.Serializer):
    mean = serializers.FloatField()
    spread = serializers.FloatField(help_text="sample standard deviation over repeats")


class FastPSerializer(serializers.Serializer):
    p0 = serializers.FloatField(help_text="correct (ranked) runs over attempted")
    p1 = serializers.FloatField(help_text="correct and faster than eager")
    p1_5 = serializers.FloatField()
    p2 = serializers.FloatField()


class IntervalsSerializer(serializers.Serializer):
    """95% bootstrap intervals over tasks and their repeats, [low, high]."""

    fast_0 = serializers.ListField(child=serializers.FloatField())
    fast_1 = serializers.ListField(child=serializers.FloatField())
    fast_1_5 = serializers.ListField(child=serializers.FloatField())
    fast_2 = serializers.ListField(child=serializers.FloatField())
    speedup_geomean_all = serializers.ListField(child=serializers.FloatField())


def _fast_key(p: float) -> str:
    return "p" + f"{p:g}".replace(".", "_")


class ScoreOutputSerializer(serializers.Serializer):
    runs = serializers.IntegerField()
    tasks_attempted = serializers.IntegerField()
    compile_rate = serializers.FloatField()
    correctness_rate = serializers.FloatField()
    fast_p = serializers.SerializerMethodField()
    speedup_geomean_correct = serializers.FloatField(
        allow_null=True,
        help_text="geometric mean over the ranked runs alone; descriptive, never ranked",
    )
    speedup_geomean_all = serializers.FloatField(
        allow_null=True,
        help_text=f"geometric mean over every attempted run, a failure counting as "
        f"{FAILURE_SPEEDUP}x and slower correct runs floored there",
    )
    roofline_mean = serializers.FloatField(
        allow_null=True, help_text="mean roofline fraction over attempted runs, failures as 0"
    )
    generalization_pass_rate = serializers.FloatField(
        allow_null=True,
        help_text="share of attempted runs correct on visible and on every unseen shape",
    )
    overfit_count = serializers.IntegerField()
    ranked_runs = serializers.IntegerField(help_text="runs that count as correct")
    unranked_runs = serializers.IntegerField(
        help_text=f"failed and flagged runs, each counted as {FAILURE_SPEEDUP}x in the speedup"
    )
    flagged = serializers.IntegerField()
    flagged_share = serializers.FloatField(help_text="flagged runs over attempted runs")
    flag_counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="runs per flag code"
    )
    preliminary = serializers.BooleanField(
        help_text=f"fewer than {PRELIMINARY_BELOW_TASKS} tasks attempted on this board"
    )
    intervals = serializers.SerializerMethodField()
    tokens_per_run = serializers.FloatField()
    cost_per_run_usd = serializers.FloatField(allow_null=True)
    repeats = serializers.IntegerField()
    fast_1_repeats = serializers.SerializerMethodField()
    speedup_geomean_all_repeats = serializers.SerializerMethodField()

    @extend_schema_field(FastPSerializer)
    def get_fast_p(self, score: AgentScore) -> dict[str, float]:
        return {_fast_key(p): score.fast_p[p] for p in FAST_P_THRESHOLDS}

    @extend_schema_field(IntervalsSerializer(allow_null=True))
    def get_intervals(self, score: AgentScore) -> dict[str, list[float]] | None:
        if not score.intervals:
            return None  # taken for board rows, not per category
        return {
            ("speedup_geomean_all" if k == "speedup" else k): [low, high]
            for k, (low, high) in score.intervals.items()
        }

    @extend_schema_field(SpreadSerializer(allow_null=True))
    def get_fast_1_repeats(self, score: AgentScore):
        return _spread(score.fast_1_repeats)

    @extend_schema_field(SpreadSerializer(allow_null=True))
    def get_speedup_geomean_all_repeats(self, score: AgentScore):
        return _spread(score.speedup_geomean_all_repeats)


def _spread(pair: tuple[float, float] | None) -> dict[str, float] | None:
    return {"mean": pair[0], "spread": pair[1]} if pair else None


class ScoreFilterInputSerializer(serializers.Serializer):
    category = serializers.ChoiceField(choices=CATEGORIES, required=False)
    gpu = serializers.CharField(
        max_length=100,
        required=False,
        help_text="the board's GPU model; default (or unknown): the GPU with the most gradings",
    )
    suite = serializers.CharField(
        max_length=120,
        required=False,
        help_text="a suite (every version of it) or one suite version, <suite>@<12 hex>",
    )

    def filters(self) -> ScoreFilters:
        data = self.validated_data
        return ScoreFilters(
            category=data.get("category", ""),
            gpu=data.get("gpu", ""),
            suite_version=data.get("suite", ""),
        )


# --- leaderboard ------------------------------------------------------------------------------


class LeaderboardApi(APIView):
    """GET /api/v1/leaderboard: one row per agent, ranked on one GPU model's board (`gpu`,
    default the GPU with the most gradings). CPU gradings are never ranked."""

    pagination_class = Pagination  # also tells the schema the response is paginated

    class InputSerializer(ScoreFilterInputSerializer):
        sort = serializers.ChoiceField(choices=list(SORT_KEYS), default=DEFAULT_SORT)
        limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
        offset = serializers.IntegerField(min_value=0, required=False)

    class OutputSerializer(serializers.Serializer):
        rank = serializers.IntegerField(help_text="the row's position in the sort")
        rank_best = serializers.IntegerField(
            help_text="the best place its 95% interval of the sort key allows (LMArena's ranges)"
        )
        rank_worst = serializers.IntegerField(help_text="the worst such place")
        gpu = serializers.CharField(help_text="the board's GPU model")
        agent = AgentOutputSerializer()
        score = ScoreOutputSerializer()

    @extend_schema(
        parameters=[InputSerializer],
        responses=OutputSerializer(many=True),
        summary="The ranking of agents",
    )
    @public_page
    def get(self, request):
        serializer = self.InputSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        filters, sort = serializer.filters(), serializer.validated_data["sort"]

        def build() -> dict:
            rows = leaderboard_rows(filters=filters, sort=sort)
            ranked = [
                {
                    "rank": i,
                    "rank_best": row.rank_best,
                    "rank_worst": row.rank_worst,
                    "gpu": row.gpu,
                    "agent": row.agent,
                    "score": row.score,
                }
                for i, row in enumerate(rows, 1)
            ]
            return _paginated(self, request, ranked, self.OutputSerializer).data

        # The serialized page is cached too; its next/previous links name the host asked.
        limit, offset = (serializer.validated_data.get(k) for k in ("limit", "offset"))
        key = f"api-leaderboard:{filters.key()}:{sort}:{limit}:{offset}:{request.get_host()}"
        return Response(leaderboard_cached(key, build))


# --- agents -----------------------------------------------------------------------------------


class AgentListApi(APIView):
    """GET /api/v1/agents: every agent with a public run, by slug, with its score on its most
    graded GPU's board (null for an agent graded only on the CPU, which is never ranked)."""

    pagination_class = Pagination  # also tells the schema the response is paginated

    class InputSerializer(serializers.Serializer):
        limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
        offset = serializers.IntegerField(min_value=0, required=False)

    class OutputSerializer(AgentOutputSerializer):
        runs = serializers.IntegerField(help_text="public runs")
        gpu = serializers.CharField(allow_null=True, help_text="the board of `score`")
        score = ScoreOutputSerializer(allow_null=True)

    @extend_schema(parameters=[InputSerializer], responses=OutputSerializer(many=True))
    @public_page
    def get(self, request):
        _query(self.InputSerializer, request)
        main = agent_main_boards()
        agents = []
        for entry in sorted(agent_list_public(), key=lambda e: e["agent"].slug):
            row = main.get(entry["agent"].pk)
            agents.append(
                _agent_with(
                    entry["agent"],
                    runs=entry["n_runs"],
                    gpu=row.gpu if row else None,
                    score=row.score if row else None,
                )
            )
        return _paginated(self, request, agents, self.OutputSerializer)


def _agent_with(agent, **extra) -> dict:
    fields = ("slug", "name", "harness", "model", "effort", "cli_version")
    return {**{f: getattr(agent, f) for f in fields}, **extra}


class TaskRowSerializer(serializers.Serializer):
    task = serializers.CharField(source="task__slug")
    category = serializers.CharField()
    runs = serializers.IntegerField(source="n_runs")
    ranked = serializers.IntegerField(source="n_ranked")
    flagged = serializers.IntegerField(source="n_flagged")
    best_speedup = serializers.FloatField(allow_null=True)
    mean_speedup = serializers.FloatField(allow_null=True)
    spread_speedup = serializers.FloatField(allow_null=True)
    best_roofline = serializers.FloatField(allow_null=True)
    tokens_per_run = serializers.FloatField(source="tokens_avg", allow_null=True)
    cost_per_run_usd = serializers.FloatField(source="cost_avg", allow_null=True)


class ScoreByCategorySerializer(ScoreOutputSerializer):
    category = serializers.CharField(source="agent")  # scores grouped by category carry its name


class AgentDetailApi(APIView):
    """GET /api/v1/agents/<slug>: the agent's score on its most graded GPU, per category there
    and per task."""

    class OutputSerializer(AgentOutputSerializer):
        gpu = serializers.CharField(
            allow_null=True, help_text="the GPU board of `score`: the agent's most graded GPU"
        )
        score = ScoreOutputSerializer(allow_null=True)
        categories = ScoreByCategorySerializer(many=True)
        tasks = TaskRowSerializer(many=True)

    @extend_schema(responses=OutputSerializer)
    @public_page
    def get(self, request, slug: str):
        agent = agent_get(slug=slug)
        if agent is None:
            raise Http404(f"no agent {slug!r}")
        boards = agent_boards(agent=agent)
        by_category = sorted(agent_scores_by_category(agent=agent).items())
        data = _agent_with(
            agent,
            gpu=boards[0]["gpu"] if boards else None,
            score=boards[0]["row"].score if boards else None,
            categories=[score for _, score in by_category],
            tasks=agent_task_rows(agent=agent),
        )
        return Response(self.OutputSerializer(data).data)


# --- tasks ------------------------------------------------------------------------------------


class TaskOutputSerializer(serializers.Serializer):
    slug = serializers.CharField()
    title = serializers.CharField()
    category = serializers.CharField()
    suite = serializers.CharField()
    dtype = serializers.CharField()
    regime = serializers.CharField()
    version = serializers.CharField(source="version_hash")
    backends = serializers.SerializerMethodField()

    def get_backends(self, task: Task) -> list[str]:
        return list(task.manifest.get("backends", []))


class TaskListApi(APIView):
    """GET /api/v1/tasks: the active catalogue."""

    pagination_class = Pagination  # also tells the schema the response is paginated

    class InputSerializer(serializers.Serializer):
        category = serializers.ChoiceField(choices=CATEGORIES, required=False)
        backend = serializers.ChoiceField(choices=["cuda", "triton"], required=False)
        limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
        offset = serializers.IntegerField(min_value=0, required=False)

    @extend_schema(parameters=[InputSerializer], responses=TaskOutputSerializer(many=True))
    @public_page
    def get(self, request):
        query = _query(self.InputSerializer, request)
        tasks = task_list(category=query.get("category", ""), backend=query.get("backend", ""))
        return _paginated(self, request, tasks, TaskOutputSerializer)


class TaskDetailApi(APIView):
    """GET /api/v1/tasks/<slug>: one task with its visible shapes and formulas."""

    class OutputSerializer(TaskOutputSerializer):
        flops = serializers.CharField(source="manifest.flops", default="")
        bytes = serializers.CharField(source="manifest.bytes", default="")
        visible_shapes = serializers.ListField(
            source="manifest.visible_shapes", child=serializers.DictField(), default=list
        )
        prompt = serializers.CharField()

    @extend_schema(responses=OutputSerializer)
    @public_page
    def get(self, request, slug: str):
        task = task_get_active(slug=slug)
        if task is None:
            raise Http404(f"no task {slug!r}")
        return Response(self.OutputSerializer(task).data)


# --- runs -------------------------------------------------------------------------------------


class RunOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    agent = serializers.CharField(source="agent.slug")
    task = serializers.CharField(source="task.slug")
    category = serializers.CharField(source="task.category")
    status = serializers.CharField()
    failure_reason = serializers.CharField()
    source = serializers.CharField(help_text="arena: run by the platform; upload: an account's")
    created_by = serializers.CharField(
        source="created_by.username", allow_null=True, default=None, help_text="the account"
    )
    harness = serializers.CharField(help_text="what ran: read from the run's log where it has one")
    model = serializers.CharField(help_text="the model that ran, which may differ from the agent's")
    cli_version = serializers.CharField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cache_read_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField(allow_null=True)
    duration_s = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    verdict = serializers.ChoiceField(
        source="verdict.code",
        choices=VERDICT_CODES,
        help_text="the verdict of its latest grading, or of the run where it has none, in the "
        "words of the pages (docs/leaderboard.md): ranked, flagged, failed, grader_error, "
        "unranked_cpu, transcript_only, pending",
    )
    verdict_label = serializers.CharField(source="verdict.label", help_text="as pages show it")
    verdict_flags = serializers.ListField(
        source="verdict.flags", child=serializers.CharField(), help_text="flagged: the codes"
    )
    verdict_gate = serializers.CharField(
        source="verdict.gate", help_text="failed: the first failing gate (compile, ...)"
    )
    grading_status = serializers.CharField(
        source="score_status", allow_null=True, help_text="the latest grading's own status"
    )
    ranked = serializers.BooleanField(source="score_ranked", allow_null=True)
    flagged = serializers.BooleanField(source="score_flagged", allow_null=True)
    speedup = serializers.FloatField(source="score_speedup", allow_null=True)
    roofline_fraction = serializers.FloatField(source="score_roofline_fraction", allow_null=True)
    reward = serializers.FloatField(source="score_reward", allow_null=True)
    gpu = serializers.CharField(source="score_gpu", allow_null=True)


class RunListApi(APIView):
    """GET /api/v1/runs: public runs, newest first, with the verdict of their latest grading."""

    pagination_class = Pagination  # also tells the schema the response is paginated

    class InputSerializer(serializers.Serializer):
        agent = serializers.SlugField(max_length=100, required=False)
        task = serializers.CharField(max_length=200, required=False)
        category = serializers.ChoiceField(choices=CATEGORIES, required=False)
        suite = serializers.CharField(max_length=50, required=False)
        status = serializers.ChoiceField(
            choices=[*RUN_STATUSES, *VERDICT_ALIASES],
            required=False,
            help_text="a run status; passed, flagged, error and unranked are read as the "
            "verdicts ranked, flagged, grader_error and unranked_cpu",
        )
        verdict = serializers.ChoiceField(
            choices=VERDICT_CODES, required=False, help_text="runs with a grading of this verdict"
        )
        gpu = serializers.CharField(max_length=100, required=False)
        flag = serializers.CharField(max_length=60, required=False, help_text="a flag code")
        transcript = serializers.ChoiceField(
            choices=["yes", "no"], required=False, help_text="whether the run has a transcript"
        )
        limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
        offset = serializers.IntegerField(min_value=0, required=False)

    @extend_schema(parameters=[InputSerializer], responses=RunOutputSerializer(many=True))
    def get(self, request):
        query = _query(self.InputSerializer, request)
        fields = [f.name for f in dataclass_fields(RunFilters)]
        runs = run_list_public(RunFilters(**{k: query[k] for k in fields if k in query}))
        return _paginated(self, request, runs, RunOutputSerializer, prepare=runs_attach_scores)


class RunEvaluationOutputSerializer(serializers.Serializer):
    """A grading as the reader may see it: `result_shown` is the result, without the solution's
    output and error messages for anyone but the run's owners."""

    id = serializers.IntegerField(source="pk")
    status = serializers.CharField()
    verdict = serializers.ChoiceField(source="verdict.code", choices=VERDICT_CODES)
    verdict_label = serializers.CharField(source="verdict.label")
    verdict_flags = serializers.ListField(source="verdict.flags", child=serializers.CharField())
    verdict_gate = serializers.CharField(source="verdict.gate")
    ranked = serializers.BooleanField()
    reward = serializers.FloatField(allow_null=True)
    device = serializers.CharField()
    gates = serializers.DictField(source="result_shown.gates", default=dict)
    summary = serializers.DictField(source="result_shown.summary", default=dict)
    flags = serializers.ListField(
        source="result_shown.flags", child=serializers.DictField(), default=list
    )
    per_shape = serializers.ListField(
        source="result_shown.per_shape", child=serializers.DictField(), default=list
    )
    finished_at = serializers.DateTimeField(allow_null=True)


def _read_evaluation(evaluation, *, disclosed: bool) -> None:
    """Set what a reader sees of a grading: its result as shown and its verdict."""
    if not hasattr(evaluation, "result_shown"):
        evaluation.result_shown = result_seen(evaluation.result, disclosed=disclosed)
        evaluation.verdict = verdict_of_grading(
            status=evaluation.status, device=evaluation.device, result=evaluation.result_shown
        )


def _run_verdict(run: Run) -> Verdict:
    """The run's verdict as its page heads it: its latest finished grading's, else the run's
    own (pending while a grading is under way)."""
    evaluations = [s.evaluation for s in run.submissions.all()]
    for evaluation in evaluations:
        _read_evaluation(evaluation, disclosed=run.disclosed)
    finished = [e for e in evaluations if e.is_finished]
    latest = max(finished, key=lambda e: e.pk) if finished else None
    return verdict_of_run(
        run_status=run.status,
        has_trajectory=run.trajectory_id is not None,
        failure_reason=run.failure_reason,
        grading=latest.verdict if latest else None,
        grading_pending=len(finished) < len(evaluations),
    )


class KernelProvenanceSerializer(serializers.Serializer):
    """Where an uploaded run's kernel came from: attached beside its log, or the last write of
    it in the log (path, turn, tool)."""

    source = serializers.CharField(source="kernel_source", help_text="attached or log")
    name = serializers.CharField(source="evaluation.solution_name")
    path = serializers.CharField(source="kernel_path")
    turn = serializers.IntegerField(source="kernel_turn", allow_null=True)
    tool = serializers.CharField(source="kernel_tool")
    thread = serializers.CharField(source="kernel_thread")


class ImportedRunOutputSerializer(serializers.Serializer):
    """Where an imported run came from and the result its benchmark published for it."""

    origin = serializers.CharField()
    external_id = serializers.CharField()
    published = serializers.JSONField()


class RunDetailApi(APIView):
    """GET /api/v1/runs/<id>: a run and each of its evaluations, as the grader recorded them."""

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField(source="pk")
        agent = AgentOutputSerializer()
        task = serializers.CharField(source="task.slug")
        category = serializers.CharField(source="task.category")
        status = serializers.CharField()
        failure_reason = serializers.CharField()
        harness = serializers.CharField()
        model = serializers.CharField()
        cli_version = serializers.CharField()
        input_tokens = serializers.IntegerField()
        output_tokens = serializers.IntegerField()
        cost_usd = serializers.FloatField(allow_null=True)
        created_at = serializers.DateTimeField()
        verdict = serializers.SerializerMethodField()
        evaluations = serializers.SerializerMethodField()
        imported = serializers.SerializerMethodField()
        kernel = serializers.SerializerMethodField()
        log_names_task = serializers.BooleanField(
            allow_null=True, help_text="false: its log never names the task's slug or files"
        )

        @extend_schema_field(KernelProvenanceSerializer(allow_null=True))
        def get_kernel(self, run: Run) -> dict | None:
            latest = max(run.submissions.all(), key=lambda s: s.pk, default=None)
            if latest is None or not latest.kernel_source:
                return None
            return KernelProvenanceSerializer(latest).data

        @extend_schema_field(
            serializers.ChoiceField(
                choices=VERDICT_CODES, help_text="its latest grading's verdict, or the run's"
            )
        )
        def get_verdict(self, run: Run) -> str:
            return _run_verdict(run).code

        @extend_schema_field(ImportedRunOutputSerializer(allow_null=True))
        def get_imported(self, run: Run) -> dict | None:
            if run.source != Run.Source.IMPORTED or not hasattr(run, "imported"):
                return None
            return ImportedRunOutputSerializer(run.imported).data

        @extend_schema_field(RunEvaluationOutputSerializer(many=True))
        def get_evaluations(self, run: Run) -> list[dict]:
            evaluations = [s.evaluation for s in run.submissions.all()]
            for evaluation in evaluations:
                _read_evaluation(evaluation, disclosed=run.disclosed)
            return RunEvaluationOutputSerializer(evaluations, many=True).data

    @extend_schema(responses=OutputSerializer)
    def get(self, request, run_id: int):
        run = run_get_visible(run_id=run_id, user=request.user)
        if run is None:
            raise Http404(f"no run {run_id}")
        return Response(self.OutputSerializer(run).data)
