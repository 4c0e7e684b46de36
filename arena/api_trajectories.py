"""POST /api/v1/trajectories: an agent's log for a run, parsed, redacted and stored."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import ApiTokenAuthentication
from arena.run_logs import trajectory_upload
from transcripts.models import Trajectory
from transcripts.services import TrajectoryForbidden, TrajectoryRejected, TrajectoryTooLarge


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "the upload is too large"
    default_code = "too_large"


class TrajectoryOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField(source="run.pk")
    format = serializers.CharField()
    filename = serializers.CharField()
    sha256 = serializers.CharField()
    size_bytes = serializers.IntegerField()
    events = serializers.IntegerField(source="event_count")
    turns = serializers.IntegerField(source="turn_count")
    tool_calls = serializers.IntegerField(source="tool_call_count")
    file_changes = serializers.IntegerField(source="file_change_count")
    subagents = serializers.IntegerField(source="subagent_count")
    malformed_lines = serializers.IntegerField(source="malformed_line_count")
    usage = serializers.SerializerMethodField()
    cost_usd = serializers.FloatField(allow_null=True)
    cost_computed = serializers.BooleanField()
    duration_s = serializers.FloatField(allow_null=True)
    malformed = serializers.JSONField(source="summary.malformed_lines")
    # What the parser wants the uploader to know, e.g. subagent files missing from the upload.
    notes = serializers.JSONField(source="summary.notes", default=list)
    transcript_url = serializers.SerializerMethodField()

    def get_usage(self, trajectory: Trajectory) -> dict[str, int]:
        return {
            "input_tokens": trajectory.input_tokens,
            "output_tokens": trajectory.output_tokens,
            "cache_read_tokens": trajectory.cache_read_tokens,
            "cache_write_tokens": trajectory.cache_write_tokens,
        }

    def get_transcript_url(self, trajectory: Trajectory) -> str:
        return reverse("transcript", args=[trajectory.run.pk])


class TrajectoryCreateApi(APIView):
    """Upload a log for a run (`run`), or for a new run of `agent` on `task` (no submission)."""

    # Explicit, so that uploads need a token whatever the project-wide defaults are.
    authentication_classes = [ApiTokenAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(help_text="a log file, a .gz, or a folder as a .zip")
        run = serializers.IntegerField(required=False, min_value=1, help_text="a run's id")
        agent = serializers.CharField(required=False, max_length=100, help_text="agent name")
        task = serializers.CharField(required=False, max_length=200, help_text="task slug")

        def validate(self, attrs):
            if "run" in attrs and ("agent" in attrs or "task" in attrs):
                raise ValidationError({"run": ["give either a run id or an agent and a task"]})
            if "run" not in attrs:
                for name in ("agent", "task"):
                    if not attrs.get(name):
                        raise ValidationError({name: ["required when no run id is given"]})
            return attrs

    @extend_schema(request=InputSerializer, responses={201: TrajectoryOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = data["file"]
        limit = settings.ARENA_TRAJECTORY_MAX_BYTES
        if upload.size > limit:
            raise PayloadTooLarge({"file": [f"larger than the {limit:,}-byte limit"]})
        try:
            trajectory = trajectory_upload(
                file=upload,
                filename=upload.name or "",
                run_id=data.get("run"),
                agent_slug=data.get("agent", ""),
                task_slug=data.get("task", ""),
                user=request.user,
            )
        except TrajectoryTooLarge as exc:
            raise PayloadTooLarge({"file": [exc.message]}) from None
        except TrajectoryForbidden as exc:
            raise PermissionDenied(exc.message) from None
        except TrajectoryRejected as exc:
            raise ValidationError({exc.field: [exc.message]}) from None
        body = TrajectoryOutputSerializer(trajectory).data
        return Response(body, status=status.HTTP_201_CREATED)
