"""POST /api/v1/trajectories: an agent's log with its kernel, a new run graded like any other;
or a log alone for a run that has none."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import ApiTokenAuthentication
from arena.log_uploads import LogAlreadyUploaded, log_upload
from arena.models import Submission
from arena.run_logs import trajectory_upload
from evaluator.api import SolutionField
from transcripts.models import Trajectory
from transcripts.services import TrajectoryForbidden, TrajectoryRejected, TrajectoryTooLarge


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "the upload is too large"
    default_code = "too_large"


class AlreadyUploaded(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "this log was uploaded already"
    default_code = "duplicate"


class KernelOutputSerializer(serializers.Serializer):
    """Where the graded kernel came from: attached, or the last write of it in the log."""

    source = serializers.CharField(source="kernel_source", help_text="attached or log")
    name = serializers.CharField(source="evaluation.solution_name")
    sha256 = serializers.CharField(source="evaluation.solution_sha256")
    path = serializers.CharField(source="kernel_path", help_text="as the log wrote it")
    turn = serializers.IntegerField(source="kernel_turn", allow_null=True)
    tool = serializers.CharField(source="kernel_tool")
    thread = serializers.CharField(source="kernel_thread")


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
    harness = serializers.CharField(source="run.harness", help_text="read from the log")
    model = serializers.CharField(source="run.model", help_text="read from the log")
    cli_version = serializers.CharField(source="run.cli_version", help_text="read from the log")
    transcript_only = serializers.SerializerMethodField()
    submission = serializers.SerializerMethodField()
    kernel = serializers.SerializerMethodField()
    log_names_task = serializers.BooleanField(
        source="run.log_names_task",
        allow_null=True,
        help_text="false: the log never names the task's slug or files",
    )
    run_url = serializers.SerializerMethodField()
    transcript_url = serializers.SerializerMethodField()

    def get_usage(self, trajectory: Trajectory) -> dict[str, int]:
        return {
            "input_tokens": trajectory.input_tokens,
            "output_tokens": trajectory.output_tokens,
            "cache_read_tokens": trajectory.cache_read_tokens,
            "cache_write_tokens": trajectory.cache_write_tokens,
        }

    def _submission(self, trajectory: Trajectory) -> Submission | None:
        return trajectory.run.submissions.select_related("evaluation").order_by("-pk").first()

    def get_transcript_only(self, trajectory: Trajectory) -> bool:
        return self._submission(trajectory) is None

    def get_submission(self, trajectory: Trajectory) -> int | None:
        submission = self._submission(trajectory)
        return submission.pk if submission is not None else None

    @extend_schema_field(KernelOutputSerializer(allow_null=True))
    def get_kernel(self, trajectory: Trajectory) -> dict | None:
        submission = self._submission(trajectory)
        if submission is None or not submission.kernel_source:
            return None
        return KernelOutputSerializer(submission).data

    def get_run_url(self, trajectory: Trajectory) -> str:
        return reverse("leaderboard:run-detail", args=[trajectory.run.pk])

    def get_transcript_url(self, trajectory: Trajectory) -> str:
        return reverse("transcript", args=[trajectory.run.pk])


class TrajectoryCreateApi(APIView):
    """Upload an agent's log for a new run of `agent` on `task`, graded like any other with its
    kernel: `solution` attached, `solution_path` (a file the log wrote), or else the last
    content the log's agent wrote to its solution file; `transcript_only` stores the log alone.
    Or a log alone for an existing run that has none (`run`)."""

    # Explicit, so that uploads need a token whatever the project-wide defaults are.
    authentication_classes = [ApiTokenAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(help_text="a log file, a .gz, or a folder as a .zip")
        run = serializers.IntegerField(required=False, min_value=1, help_text="a run's id")
        agent = serializers.CharField(required=False, max_length=100, help_text="agent name")
        task = serializers.CharField(required=False, max_length=200, help_text="task slug")
        model = serializers.CharField(
            required=False,
            max_length=100,
            help_text="the model a new agent declares (default: the log's)",
        )
        solution = SolutionField(required=False, help_text="the final kernel (ModelNew)")
        solution_path = serializers.CharField(
            required=False, max_length=500, help_text="or: the kernel's path, as the log wrote it"
        )
        transcript_only = serializers.BooleanField(
            required=False, default=False, help_text="store the log alone, graded never"
        )

        def validate(self, attrs):
            kernel = [k for k in ("solution", "solution_path") if attrs.get(k)]
            if attrs.get("transcript_only"):
                kernel.append("transcript_only")
            if "run" in attrs:
                extra = [k for k in ("agent", "task", "model", *kernel) if attrs.get(k)]
                if extra:
                    raise ValidationError(
                        {"run": [f"give a run id alone, without {', '.join(extra)}"]}
                    )
                return attrs
            for name in ("agent", "task"):
                if not attrs.get(name):
                    raise ValidationError({name: ["required when no run id is given"]})
            if len(kernel) > 1:
                raise ValidationError({kernel[1]: [f"give one of {', '.join(kernel)}"]})
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
            trajectory = _store(data, user=request.user)
        except TrajectoryTooLarge as exc:
            raise PayloadTooLarge({"file": [exc.message]}) from None
        except TrajectoryForbidden as exc:
            raise PermissionDenied(exc.message) from None
        except LogAlreadyUploaded as exc:
            raise AlreadyUploaded({"file": [_duplicate_message(exc)]}) from None
        except TrajectoryRejected as exc:
            raise ValidationError({exc.field: [exc.message]}) from None
        body = TrajectoryOutputSerializer(trajectory).data
        return Response(body, status=status.HTTP_201_CREATED)


def _store(data: dict, *, user) -> Trajectory:
    upload = data["file"]
    if "run" in data:
        return trajectory_upload(
            file=upload, filename=upload.name or "", run_id=data["run"], user=user
        )
    run = log_upload(
        user=user,
        file=upload,
        filename=upload.name or "",
        agent_name=data["agent"],
        task_slug=data["task"],
        model=data.get("model", ""),
        solution=data.get("solution"),
        solution_path=data.get("solution_path", ""),
        transcript_only=data["transcript_only"],
    )
    assert run.trajectory is not None
    return run.trajectory


def _duplicate_message(exc: LogAlreadyUploaded) -> str:
    if exc.run_id is None:
        return exc.message
    return f"{exc.message} ({reverse('leaderboard:run-detail', args=[exc.run_id])})"
