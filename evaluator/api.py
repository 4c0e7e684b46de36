"""The run_kernel API: grade a solution on a task outside any run, for agents and RL loops.

POST /api/v1/evaluations queues it on the gpu queue; GET /api/v1/evaluations/<id> polls it.
The reads show a reader only the gradings its `readable` rule gives (EvaluationsReadable),
and the solution's output and error messages only of those the reader owns.
"""

from django.conf import settings
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluator.models import Evaluation
from evaluator.redaction import error_seen, result_seen
from evaluator.selectors import (
    EvaluationsReadable,
    evaluation_list,
    evaluation_queue_position,
    evaluations_submitted_by,
)
from evaluator.services import evaluation_submit
from tasks.selectors import task_get_active


@extend_schema_field(
    {
        "type": "string",
        "description": "the solution source (ModelNew): a file in multipart, text in JSON",
    }
)
class SolutionField(serializers.Field):
    """A solution as an uploaded file or as JSON text -> (file name, UTF-8 source)."""

    default_error_messages = {
        "type": "expected a file (multipart) or text (JSON), not {kind}",
        "too_large": "larger than the {limit}-byte limit",
        "empty": "the solution is empty",
        "encoding": "not UTF-8 text",
        "nul": "contains NUL bytes",
    }

    def to_internal_value(self, data) -> tuple[str, str]:
        if hasattr(data, "read") and hasattr(data, "size"):
            return self._file_name(data), self._checked(self._read_upload(data))
        if isinstance(data, str):
            return "solution.py", self._checked(data.encode("utf-8", "surrogatepass"))
        self.fail("type", kind=type(data).__name__)

    def to_representation(self, value):
        return value[1]

    def _read_upload(self, upload) -> bytes:
        # The size Django counted refuses early; the read itself stops one byte past the limit
        # regardless, so the file is never read whole before it is checked (see _checked).
        self._check_size(upload.size)
        return upload.read(settings.ARENA_MAX_SOLUTION_BYTES + 1)

    def _check_size(self, size: int) -> None:
        limit = settings.ARENA_MAX_SOLUTION_BYTES
        if size > limit:
            self.fail("too_large", limit=limit)

    def _checked(self, raw: bytes) -> str:
        self._check_size(len(raw))
        if not raw.strip():
            self.fail("empty")
        try:
            code = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.fail("encoding")
        if "\x00" in code:
            self.fail("nul")
        return code

    @staticmethod
    def _file_name(upload) -> str:
        # Only the last path component: a client's "../../x.py" is a name, not a path.
        return (upload.name or "solution.py").replace("\\", "/").rsplit("/", 1)[-1][:200]


def _task_field_validate(slug: str):
    task = task_get_active(slug=slug)
    if task is None:
        raise serializers.ValidationError(f"unknown task {slug!r}")
    return task


class EvaluationSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    task = serializers.CharField(source="task.slug")
    status = serializers.ChoiceField(choices=Evaluation.Status.choices)
    reward = serializers.FloatField(
        allow_null=True,
        help_text=(
            "KernelBench's reward: speedup over eager - 1 when correct and timed, -2 incorrect, "
            "-3 runtime failure, -4 not constructed, -5 not compiled, -7 timeout or sandbox "
            "failure; null until graded, and null for a correct solution graded on the CPU, "
            "where nothing is timed (not a measured 1x)"
        ),
    )
    ranked = serializers.BooleanField(
        help_text=(
            "passed, unflagged and timed on a GPU; a CPU grading (device cpu) is never ranked, "
            "its performance gate says why"
        )
    )
    device = serializers.CharField(help_text="cuda or cpu; empty until graded")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.SerializerMethodField()

    def get_url(self, evaluation: Evaluation) -> str:
        return reverse("api:evaluation-detail", args=[evaluation.pk])


class EvaluationPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = EvaluationSummarySerializer(many=True)


class EvaluationCreateApi(APIView):
    """POST /api/v1/evaluations: queue a solution for grading; answers with its queue position."""

    class InputSerializer(serializers.Serializer):
        task = serializers.CharField(max_length=200, help_text="slug of a catalogue task")
        solution = SolutionField()
        backend = serializers.CharField(
            max_length=20,
            required=False,
            help_text="the kernel language (triton, cuda...); must be one the task allows",
        )

        def validate_task(self, slug: str):
            return _task_field_validate(slug)

        def validate(self, data: dict) -> dict:
            backend = data.get("backend")
            allowed = data["task"].manifest.get("backends") or []
            if backend and backend not in allowed:
                raise serializers.ValidationError(
                    {
                        "backend": [
                            f"{data['task'].slug} allows {', '.join(allowed)}, not {backend!r}"
                        ]
                    }
                )
            return data

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        task = serializers.CharField(source="task.slug")
        status = serializers.ChoiceField(choices=Evaluation.Status.choices)
        queue_position = serializers.IntegerField(
            allow_null=True, help_text="queued or running evaluations ahead of this one"
        )
        url = serializers.CharField()

    @extend_schema(
        operation_id="evaluation_create",
        description=(
            "Queue a solution for grading on the gpu queue, outside any run. Needs a token; "
            "rate limited per token. Poll the returned url for the verdict."
        ),
        request={
            "multipart/form-data": InputSerializer,
            "application/json": InputSerializer,
        },
        responses={201: OutputSerializer},
    )
    def post(self, request):
        serializer = EvaluationCreateApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        solution_name, solution_code = data["solution"]
        evaluation = evaluation_submit(
            task=data["task"],
            solution_name=solution_name,
            solution_code=solution_code,
            submitted_by=request.user,
        )
        body = {
            "id": evaluation.pk,
            "task": evaluation.task,
            "status": evaluation.status,
            "queue_position": evaluation_queue_position(evaluation=evaluation),
            "url": reverse("api:evaluation-detail", args=[evaluation.pk]),
        }
        output = EvaluationCreateApi.OutputSerializer(body)
        return Response(output.data, status=status.HTTP_201_CREATED)


class EvaluationReadApi(APIView):
    """The reads' rule of who reads which grading; config/urls.py passes the project's."""

    readable: EvaluationsReadable = staticmethod(evaluations_submitted_by)


class EvaluationListApi(EvaluationReadApi):
    """GET /api/v1/evaluations: the gradings the reader may read, newest first, paginated."""

    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=Evaluation.Status.choices, required=False)
        task = serializers.CharField(max_length=200, required=False)

    @extend_schema(
        operation_id="evaluation_list",
        description=(
            "The evaluations you may read (public runs' gradings and your own), newest first, "
            "without their source; limit/offset pages."
        ),
        parameters=[
            FilterSerializer,
            OpenApiParameter("limit", int, description="page size, at most 200"),
            OpenApiParameter("offset", int),
        ],
        responses={200: EvaluationPageSerializer},
    )
    def get(self, request):
        filters = EvaluationListApi.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        evaluations = evaluation_list(
            readable=self.readable(user=request.user),
            status=filters.validated_data.get("status"),
            task_slug=filters.validated_data.get("task"),
        )
        paginator = _Pagination()
        page = paginator.paginate_queryset(evaluations, request, view=self)
        return paginator.get_paginated_response(EvaluationSummarySerializer(page, many=True).data)


class _Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200


class EvaluationCollectionApi(EvaluationCreateApi, EvaluationListApi):
    """One URL, two operations (POST creates, GET lists); each keeps its own serializers."""


class EvaluationDetailApi(EvaluationReadApi):
    """GET /api/v1/evaluations/<id>: status, queue position and the grader's verdict; 404 for
    a grading the reader may not read, the solution's output only for its owner."""

    class OutputSerializer(EvaluationSummarySerializer):
        queue_position = serializers.IntegerField(allow_null=True)
        solution_name = serializers.CharField()
        solution_sha256 = serializers.CharField()
        error = serializers.CharField(
            source="error_shown", help_text="why the grader itself could not run"
        )
        started_at = serializers.DateTimeField(allow_null=True)
        result = serializers.JSONField(
            source="result_shown",
            help_text=(
                "the grader's result: gates, per-shape rows, speedups, reward, flags; the "
                "solution's output (log) and error messages only for the grading's owner"
            ),
        )

    @extend_schema(
        operation_id="evaluation_detail",
        description=(
            "Status, queue position and, once finished, the grader's result with the "
            "KernelBench reward."
        ),
        responses={200: OutputSerializer},
    )
    def get(self, request, evaluation_id: int):
        readable = self.readable(user=request.user).select_related("task")
        evaluation = get_object_or_404(readable, pk=evaluation_id)
        evaluation.queue_position = evaluation_queue_position(evaluation=evaluation)
        evaluation.result_shown = result_seen(evaluation.result, disclosed=evaluation.disclosed)
        evaluation.error_shown = error_seen(evaluation.error, disclosed=evaluation.disclosed)
        return Response(EvaluationDetailApi.OutputSerializer(evaluation).data)
