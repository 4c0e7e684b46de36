from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.models import Run, Submission
from arena.services import NotYours, run_withdraw, submission_create
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


class SubmissionCreateApi(APIView):
    """POST /api/v1/submissions: a solution for a task, graded by our own workers.

    Needs an API token; the upload becomes a run of the named agent on the leaderboard.
    """

    class InputSerializer(serializers.Serializer):
        task = serializers.CharField(max_length=200, help_text="slug of a catalogue task")
        agent = serializers.CharField(max_length=100, help_text="name of the agent")
        solution = SolutionField()

        def validate_task(self, slug: str):
            task = task_get_active(slug=slug)
            if task is None:
                raise serializers.ValidationError(f"unknown task {slug!r}")
            return task

        def validate_agent(self, name: str) -> str:
            from django.utils.text import slugify

            if not slugify(name):
                raise serializers.ValidationError("the agent name needs letters or digits")
            return name.strip()

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
        return Response(SubmissionOutputSerializer(submission).data, status=status.HTTP_201_CREATED)


class SubmissionDetailApi(APIView):
    """GET /api/v1/submissions/<id>: where its grading stands."""

    @extend_schema(responses={200: SubmissionOutputSerializer})
    def get(self, request, submission_id: int):
        submission = get_object_or_404(
            Submission.objects.select_related("run__task", "run__agent", "evaluation"),
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
    its organisation, staff); others get 403. The run stays in the database and the admin.
    """

    @extend_schema(request=None, responses={200: RunWithdrawOutputSerializer})
    def post(self, request, run_id: int):
        if not Run.objects.filter(pk=run_id).exists():
            raise NotFound(f"no run {run_id}")
        try:
            run = run_withdraw(run_id=run_id, user=request.user)
        except NotYours as exc:
            raise PermissionDenied(exc.message) from None
        return Response(RunWithdrawOutputSerializer(run).data)
