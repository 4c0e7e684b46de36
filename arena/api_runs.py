"""POST /api/v1/runs/launch and POST /api/v1/runs/<id>/cancel: arena runs by API.

Launching spends GPU time and the agent's provider credits, so both need the token of a staff
user. The run pages and GET /api/v1/runs show the runs as they go.
"""

from django.db import transaction
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.agents.base import AdapterError, Budget
from arena.lifecycle import RunNotCancellable, run_cancel
from arena.models import Run
from arena.runs import agent_adapter, agent_for_launch, runs_launch, tasks_select
from web.api_errors import error_body

MAX_RUNS_PER_LAUNCH = 500


# A run as its operator follows it (budget, CLI version, flags). The schema names a component
# after its class, and the public read API's run (leaderboard.api.RunOutputSerializer) is
# another shape: two classes of one name would publish one of them for both.
class LaunchedRunOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    task = serializers.CharField(source="task.slug")
    agent = serializers.CharField(source="agent.slug")
    status = serializers.CharField()
    failure_reason = serializers.CharField()
    budget = serializers.JSONField()
    model = serializers.CharField()
    effort = serializers.CharField()
    cli_version = serializers.CharField()
    # Workspace files the agent changed that it was told not to: the run is flagged.
    protected_changed = serializers.ListField(child=serializers.CharField())
    url = serializers.SerializerMethodField()

    def get_url(self, run: Run) -> str:
        return reverse("leaderboard:run-detail", args=[run.pk])


class RunLaunchApi(APIView):
    """Queue runs of an agent on the selected tasks; they start as agent workers free up."""

    permission_classes = [IsAdminUser]

    class InputSerializer(serializers.Serializer):
        agent = serializers.CharField(max_length=100, help_text="agent slug or name")
        tasks = serializers.CharField(
            max_length=2000, help_text="slugs, globs like tt-*, category:<name> or all"
        )
        repeats = serializers.IntegerField(min_value=1, max_value=100, default=1)
        budget = serializers.JSONField(
            required=False,
            help_text="over the agent's budget: wall_clock_s, max_turns, max_tokens, max_cost_usd",
        )

        def validate_agent(self, name: str):
            try:
                agent = agent_for_launch(name=name)
                agent_adapter(agent=agent)
            except (ValueError, AdapterError) as exc:
                raise serializers.ValidationError(str(exc).removeprefix("agent: ")) from None
            return agent

        def validate_tasks(self, selector: str):
            try:
                return tasks_select(selector=selector)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc).removeprefix("tasks: ")) from None

        def validate_budget(self, budget):
            if not isinstance(budget, dict):
                raise serializers.ValidationError("a JSON object is needed")
            try:
                Budget.from_dict(budget)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc)) from None
            return budget

        def validate(self, data):
            count = len(data["tasks"]) * data["repeats"]
            if count > MAX_RUNS_PER_LAUNCH:
                raise serializers.ValidationError(
                    {"repeats": f"{count} runs asked; at most {MAX_RUNS_PER_LAUNCH} per launch"}
                )
            return data

    class OutputSerializer(serializers.Serializer):
        runs = LaunchedRunOutputSerializer(many=True)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    @transaction.atomic  # a scripted agent made while validating goes if the input is refused
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            runs = runs_launch(
                agent=data["agent"],
                tasks=data["tasks"],
                repeats=data["repeats"],
                budget=data.get("budget"),
                created_by=request.user,
            )
        except ValueError as exc:
            raise serializers.ValidationError({"budget": [str(exc)]}) from None
        body = self.OutputSerializer({"runs": runs}).data
        return Response(body, status=status.HTTP_201_CREATED)


class RunCancelApi(APIView):
    """Cancel a run that has not reached grading; its agent is stopped within seconds."""

    permission_classes = [IsAdminUser]

    @extend_schema(request=None, responses={200: LaunchedRunOutputSerializer})
    def post(self, request, run_id: int):
        if not Run.objects.filter(pk=run_id).exists():
            raise NotFound(f"no run {run_id}")
        try:
            run = run_cancel(run_id=run_id)
        except RunNotCancellable as exc:
            body = error_body(status=409, code="conflict", message=str(exc))
            return Response(body, status=status.HTTP_409_CONFLICT)
        return Response(LaunchedRunOutputSerializer(run).data)
