import json
from pathlib import PurePosixPath

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.agent_names import AgentNameRefused, agent_name_parse
from arena.models import Submission
from arena.selectors import (
    batch_progress,
    batch_result_lines,
    batches_visible_to,
    runs_visible_to,
    submissions_visible_to,
)
from arena.services import NotYours, batch_submit, run_withdraw, submission_create
from evaluator.api import SolutionField
from tasks.selectors import task_get_active


class SubmissionOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField(source="run_id")
    evaluation = serializers.IntegerField(source="evaluation_id")
    task = serializers.CharField(source="run.task.slug")
    agent = serializers.CharField(source="run.agent.name")
    status = serializers.CharField(source="evaluation.status")
    reward = serializers.FloatField(source="evaluation.reward", allow_null=True)
    run_url = serializers.SerializerMethodField()

    def get_run_url(self, submission: Submission) -> str:
        return reverse("leaderboard:run-detail", args=[submission.run_id])


def _active_task(slug: str):
    task = task_get_active(slug=slug)
    if task is None:
        raise serializers.ValidationError(f"unknown task {slug!r}")
    return task


def _agent_name(name: str) -> str:
    try:
        agent_name_parse(name)
    except AgentNameRefused as exc:
        raise serializers.ValidationError(exc.message) from None
    return name.strip()


class SubmissionCreateApi(APIView):
    """POST /api/v1/submissions: a solution for a task, graded by our own workers.

    Needs an API token; the upload becomes a run of the named agent on the leaderboard.
    """

    class InputSerializer(serializers.Serializer):
        task = serializers.CharField(max_length=200, help_text="slug of a catalogue task")
        agent = serializers.CharField(max_length=100, help_text="name of the agent")
        solution = SolutionField()

        def validate_task(self, slug: str):
            return _active_task(slug)

        def validate_agent(self, name: str) -> str:
            return _agent_name(name)

    @extend_schema(
        request={"multipart/form-data": InputSerializer, "application/json": InputSerializer},
        responses={201: SubmissionOutputSerializer},
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        solution_name, solution_code = data["solution"]
        try:
            submission = submission_create(
                task=data["task"],
                agent_name=data["agent"],
                solution_name=solution_name,
                solution_code=solution_code,
                user=request.user,
            )
        except NotYours as exc:
            raise PermissionDenied(exc.message) from None
        except AgentNameRefused as exc:
            raise serializers.ValidationError({"agent": [exc.message]}) from None
        return Response(SubmissionOutputSerializer(submission).data, status=status.HTTP_201_CREATED)


class SubmissionDetailApi(APIView):
    """GET /api/v1/submissions/<id>: where its grading stands; 404 where its run is not one
    the reader may read (a withdrawn run, to anyone but its owners)."""

    @extend_schema(responses={200: SubmissionOutputSerializer})
    def get(self, request, submission_id: int):
        submissions = submissions_visible_to(user=request.user)
        submission = get_object_or_404(
            submissions.select_related("run__task", "run__agent", "evaluation"),
            pk=submission_id,
        )
        return Response(SubmissionOutputSerializer(submission).data)


class RunWithdrawOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    hidden = serializers.BooleanField()
    hidden_reason = serializers.CharField()


class RunWithdrawApi(APIView):
    """POST /api/v1/runs/<id>/withdraw: take one of your runs off every public page.

    For the account that made the run or one that may act for its agent (its owner, a member of
    its organisation, staff); others get 403, or 404 where the run is not public: a hidden run
    does not exist for them. The run stays in the database and the admin.
    """

    @extend_schema(request=None, responses={200: RunWithdrawOutputSerializer})
    def post(self, request, run_id: int):
        if not runs_visible_to(user=request.user).filter(pk=run_id).exists():
            raise NotFound(f"no run {run_id}")
        try:
            run = run_withdraw(run_id=run_id, user=request.user)
        except NotYours as exc:
            raise PermissionDenied(exc.message) from None
        return Response(RunWithdrawOutputSerializer(run).data)


BATCH_MAX_SOLUTIONS = 500


class BatchOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    agent = serializers.CharField()
    created = serializers.IntegerField(help_text="submissions this upload added")
    already = serializers.IntegerField(help_text="solutions the batch held already (same key)")
    total = serializers.IntegerField()
    finished = serializers.IntegerField()
    progress_url = serializers.CharField()
    results_url = serializers.CharField()


class BatchCreateApi(APIView):
    """POST /api/v1/batches: many solutions of one agent at once, each graded as an upload.

    JSON: {"agent": name, "key": optional name of the batch, "submissions": [{"task": slug,
    "name": file name, "code": source}, ...]} (at most 500 a request). Sent again under the same
    key (for example by a client killed midway), the batch adds only the solutions it lacks.
    One bad entry refuses the whole request, naming it; nothing is written then.
    """

    class ItemSerializer(serializers.Serializer):
        task = serializers.CharField(max_length=200)
        name = serializers.CharField(max_length=200, required=False, default="solution.py")
        code = SolutionField()

        def validate_task(self, slug: str):
            return _active_task(slug)

        def validate_name(self, name: str) -> str:
            # A path under the client's folder (level1/19_ReLU.py), never above or outside it.
            parts = [
                p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("/", "..")
            ]
            if not parts:
                raise serializers.ValidationError("the name needs a file name")
            return "/".join(parts)

    class InputSerializer(serializers.Serializer):
        agent = serializers.CharField(max_length=100)
        key = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)
        submissions = serializers.ListField(
            child=serializers.DictField(), min_length=1, max_length=BATCH_MAX_SOLUTIONS
        )

        def validate_agent(self, name: str) -> str:
            return _agent_name(name)

        def validate_submissions(self, items: list[dict]) -> list[tuple]:
            checked = []
            for index, item in enumerate(items):
                serializer = BatchCreateApi.ItemSerializer(data=item)
                if not serializer.is_valid():
                    raise serializers.ValidationError({index: serializer.errors})
                data = serializer.validated_data
                checked.append((data["task"], data["name"], data["code"][1]))
            return checked

    @extend_schema(request=InputSerializer, responses={201: BatchOutputSerializer})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            upload = batch_submit(
                agent_name=data["agent"],
                items=data["submissions"],
                user=request.user,
                key=data["key"].strip(),
            )
        except NotYours as exc:
            raise PermissionDenied(exc.message) from None
        except AgentNameRefused as exc:
            raise serializers.ValidationError({"agent": [exc.message]}) from None
        progress = batch_progress(batch=upload.batch)
        body = {
            **progress,
            "created": len(upload.created),
            "already": upload.already,
            "progress_url": reverse("api:batch-detail", args=[upload.batch.pk]),
            "results_url": reverse("api:batch-results", args=[upload.batch.pk]),
        }
        code = status.HTTP_201_CREATED if upload.created else status.HTTP_200_OK
        return Response(BatchOutputSerializer(body).data, status=code)


class BatchProgressSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    agent = serializers.CharField()
    created_at = serializers.CharField()
    total = serializers.IntegerField()
    finished = serializers.IntegerField()
    done = serializers.BooleanField()
    statuses = serializers.DictField(child=serializers.IntegerField())


class BatchResultLineSerializer(serializers.Serializer):
    task = serializers.CharField()
    solution = serializers.CharField()
    solution_sha256 = serializers.CharField()
    submission = serializers.IntegerField()
    run = serializers.IntegerField()
    run_url = serializers.CharField()
    status = serializers.CharField()
    ranked = serializers.BooleanField()
    reward = serializers.FloatField(required=False, allow_null=True)
    speedup_vs_eager = serializers.FloatField(required=False, allow_null=True)
    flags = serializers.ListField(child=serializers.CharField(), required=False)
    reason = serializers.CharField(allow_blank=True)
    wall_s = serializers.FloatField(required=False, allow_null=True)


class BatchResultsSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    total = serializers.IntegerField()
    finished = serializers.IntegerField()
    done = serializers.BooleanField()
    results = BatchResultLineSerializer(many=True)


def _batch_get(request, batch_id: int):
    """The batch, where the reader owns it; 404 for anyone else."""
    batches = batches_visible_to(user=request.user).select_related("agent")
    return get_object_or_404(batches, pk=batch_id)


class BatchDetailApi(APIView):
    """GET /api/v1/batches/<id>: how far its grading has come (finished of total, by status).
    For the batch's owners alone, as its results."""

    @extend_schema(responses={200: BatchProgressSerializer})
    def get(self, request, batch_id: int):
        batch = _batch_get(request, batch_id)
        return Response(BatchProgressSerializer(batch_progress(batch=batch)).data)


class NdjsonRenderer(BaseRenderer):
    """Selects the line-per-result form (`Accept: application/x-ndjson`, or `?format=ndjson`);
    the view streams the lines itself."""

    media_type = "application/x-ndjson"
    format = "ndjson"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        return json.dumps(data).encode() + b"\n"


class BatchResultsApi(APIView):
    """GET /api/v1/batches/<id>/results: the verdict of every finished solution, in upload
    order, with grade_suite's fields; poll it, or the progress, until `done`. With
    `Accept: application/x-ndjson` (or `?format=ndjson`), one JSON line per result, streamed,
    as grade_suite writes them. For the batch's owners alone: the reasons quote the solutions'
    errors."""

    renderer_classes = [JSONRenderer, NdjsonRenderer]

    @extend_schema(responses={200: BatchResultsSerializer})
    def get(self, request, batch_id: int):
        batch = _batch_get(request, batch_id)
        lines = batch_result_lines(batch=batch)
        if request.accepted_renderer.format == NdjsonRenderer.format:
            body = (json.dumps(line) + "\n" for line in lines)
            return StreamingHttpResponse(body, content_type="application/x-ndjson")
        progress = batch_progress(batch=batch)
        return Response(BatchResultsSerializer({**progress, "results": list(lines)}).data)
