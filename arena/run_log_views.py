"""Pages of a run's log: its transcript, the offline export, and the upload form."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from arena.models import Run
from arena.run_logs import trajectory_upload, transcript_run_context
from arena.selectors import runs_visible_to
from config.throttles import write_throttled
from tasks.selectors import task_list
from transcripts.render import RunContext, transcript_policy
from transcripts.services import (
    TrajectoryForbidden,
    TrajectoryRejected,
    TrajectoryTooLarge,
    transcript_page_html,
)


def _run_with_trajectory(request: HttpRequest, run_id: int) -> Run:
    runs = runs_visible_to(user=request.user).select_related("agent", "task", "trajectory")
    run = get_object_or_404(runs, pk=run_id)
    if run.trajectory is None or not run.trajectory.normalized:
        raise Http404(f"run {run_id} has no transcript")
    return run


def _title(run: Run) -> str:
    return f"Run #{run.pk}: {run.agent.name} on {run.task.slug}"


def _context(run: Run) -> RunContext:
    return transcript_run_context(
        run=run,
        download_url=reverse("transcript-export", args=[run.pk]),
        run_url=reverse("leaderboard:run-detail", args=[run.pk]),
        disclosed=run.disclosed,
    )


def _secured(response: HttpResponse, policy: str) -> HttpResponse:
    # Log content is hostile: the policy allows our one script and stylesheet by hash only.
    response["Content-Security-Policy"] = policy
    response["Referrer-Policy"] = "no-referrer"
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_GET
def transcript_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _run_with_trajectory(request, run_id)
    html = transcript_page_html(trajectory=run.trajectory, context=_context(run), title=_title(run))
    return _secured(HttpResponse(html), transcript_policy())


@require_GET
def transcript_export(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _run_with_trajectory(request, run_id)
    html = transcript_page_html(
        trajectory=run.trajectory, context=_context(run), title=_title(run), export=True
    )
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-transcript.html"'
    return _secured(response, transcript_policy())


def task_choices() -> list[tuple[str, object]]:
    """The active tasks as a select's options, grouped by suite, after an empty choice."""
    groups: dict[str, list[tuple[str, str]]] = {}
    rows = task_list().order_by("suite", "slug").values_list("suite", "slug", "title")
    for suite, slug, title in rows:
        groups.setdefault(suite or "other", []).append((slug, f"{slug} · {title}"))
    return [("", "choose a task"), *groups.items()]


class UploadForm(forms.Form):
    file = forms.FileField(help_text="a log file, a .gz, or a folder as a .zip")
    run = forms.IntegerField(required=False, min_value=1, help_text="an existing run's id")
    agent = forms.CharField(required=False, max_length=100, help_text="or: the agent's name")
    task = forms.ChoiceField(
        required=False,
        choices=task_choices,
        help_text="and the task it worked on",
        error_messages={"invalid_choice": "unknown task %(value)r: choose one of the list"},
    )

    def clean(self):
        data = super().clean()
        if data.get("run") is None and not (data.get("agent") and data.get("task")):
            raise forms.ValidationError("Give a run id, or an agent and a task.")
        if data.get("run") is not None and (data.get("agent") or data.get("task")):
            raise forms.ValidationError("Give either a run id or an agent and a task, not both.")
        return data


_REJECTION_STATUS = {TrajectoryTooLarge: 413, TrajectoryForbidden: 403}


@login_required
@require_http_methods(["GET", "POST"])
@write_throttled
def trajectory_upload_form(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            upload = form.cleaned_data["file"]
            limit = settings.ARENA_TRAJECTORY_MAX_BYTES
            try:
                if upload.size > limit:
                    raise TrajectoryTooLarge(f"larger than the {limit:,}-byte limit")
                trajectory = trajectory_upload(
                    file=upload,
                    filename=upload.name or "",
                    run_id=form.cleaned_data["run"],
                    agent_slug=form.cleaned_data["agent"] or "",
                    task_slug=form.cleaned_data["task"] or "",
                    user=request.user,
                )
            except TrajectoryRejected as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
                status = _REJECTION_STATUS.get(type(exc), 400)
            else:
                return redirect("transcript", run_id=trajectory.run.pk)
    return render(
        request,
        "transcripts/upload.html",
        {"form": form, "limit_bytes": settings.ARENA_TRAJECTORY_MAX_BYTES},
        status=status,
    )
