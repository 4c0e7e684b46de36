"""The upload form of a run's log (its transcript page: leaderboard/transcript_pages.py)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods, require_POST

from arena.log_uploads import (
    HeldUpload,
    LogAlreadyUploaded,
    log_upload_drop,
    log_upload_held,
    log_upload_held_view,
    log_upload_hold,
    log_upload_kernel_set,
    log_upload_prepare,
    log_upload_store,
)
from arena.run_logs import trajectory_upload
from arena.selectors import agents_of
from evaluator.solution_checks import (
    SolutionRefused,
    solution_check,
    solution_decode,
    solution_max_bytes,
)
from tasks.selectors import task_list
from transcript_render.highlight import python_to_html
from transcripts.services import (
    TrajectoryForbidden,
    TrajectoryRejected,
    TrajectoryTooLarge,
    held_max_age_s,
)
from web.throttles import write_throttled


def task_choices() -> list[tuple[str, object]]:
    """The active tasks as a select's options, grouped by suite, after an empty choice."""
    groups: dict[str, list[tuple[str, str]]] = {}
    rows = task_list().order_by("suite", "slug").values_list("suite", "slug", "title")
    for suite, slug, title in rows:
        groups.setdefault(suite or "other", []).append((slug, f"{slug} · {title}"))
    return [("", "choose a task"), *groups.items()]


class UploadForm(forms.Form):
    """Step one: the log and what it is for; the kernel attached, or else taken from the log."""

    file = forms.FileField(label="Log", help_text="a log file, a .gz, or a folder as a .zip")
    task = forms.ChoiceField(
        required=False,
        choices=task_choices,
        help_text="the task the agent worked on",
        error_messages={"invalid_choice": "unknown task %(value)r: choose one of the list"},
    )
    agent = forms.CharField(
        required=False,
        max_length=100,
        widget=forms.TextInput(attrs={"list": "my-agents"}),
        help_text="one of your agents, or a new name: a new agent takes the log's harness",
    )
    model = forms.CharField(
        required=False,
        max_length=100,
        help_text="a new agent's model (default: the log's); each run shows the log's own",
    )
    solution = forms.FileField(
        required=False,
        label="Kernel",
        help_text="the final solution.py (ModelNew); none: the last one the log's agent wrote, "
        "shown to you to confirm",
    )
    solution_path = forms.CharField(
        required=False,
        max_length=500,
        label="Or its path in the log",
        help_text="another file the log's agent wrote, to take instead of solution.py",
    )
    run = forms.IntegerField(
        required=False,
        min_value=1,
        label="Or a run",
        help_text="an existing run's id, to attach the log alone",
    )

    def clean(self):
        data = super().clean()
        if data.get("run") is None and not (data.get("agent") and data.get("task")):
            raise forms.ValidationError("Give a run id, or an agent and a task.")
        if data.get("solution") and data.get("solution_path"):
            self.add_error("solution_path", "Attach the kernel or name it in the log, not both.")
        extra = ("agent", "task", "solution", "solution_path", "model")
        if data.get("run") is not None and any(data.get(name) for name in extra):
            raise forms.ValidationError("Give either a run id or an agent and a task, not both.")
        return data

    def clean_solution(self) -> tuple[str, str] | None:
        return _kernel_file(self.cleaned_data.get("solution"))


class ConfirmForm(forms.Form):
    """Step two: the kernel found in the log kept, replaced, or none (a transcript only)."""

    held = forms.CharField(max_length=80, widget=forms.HiddenInput)
    action = forms.ChoiceField(choices=[(a, a) for a in ("confirm", "replace", "transcript")])
    solution = forms.FileField(required=False, label="Another kernel")

    def clean_solution(self) -> tuple[str, str] | None:
        return _kernel_file(self.cleaned_data.get("solution"))

    def clean(self):
        data = super().clean()
        if data.get("action") == "replace" and not data.get("solution"):
            self.add_error("solution", "Choose the kernel file to grade instead.")
        return data


def _kernel_file(upload) -> tuple[str, str] | None:
    """An attached kernel as (file name, source), checked as every solution is."""
    if upload is None:
        return None
    name = (upload.name or "solution.py").replace("\\", "/").rsplit("/", 1)[-1][:200]
    try:
        code = solution_decode(upload.read(solution_max_bytes() + 1), name=name)
        solution_check(name=name, code=code)
    except SolutionRefused as exc:
        raise forms.ValidationError(exc.message) from None
    return name, code


_REJECTION_STATUS = {TrajectoryTooLarge: 413, TrajectoryForbidden: 403, LogAlreadyUploaded: 409}
_HELD_SESSION_KEY = "held_uploads"
_HELD_KEPT = 5  # the account's latest held uploads that this browser may confirm


@login_required
@require_http_methods(["GET", "POST"])
@write_throttled
def trajectory_upload_form(request: HttpRequest) -> HttpResponse:
    """Step one: a log with its kernel is stored and graded at once; a log alone is held and
    the kernel found in it shown for its uploader to confirm (step two)."""
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method != "POST":
        return _upload_page(request, form)
    if not form.is_valid():
        return _upload_page(request, form, status=400)
    try:
        return _upload(request, form.cleaned_data)
    except TrajectoryRejected as exc:
        form.add_error(exc.field if exc.field in form.fields else None, _refusal(exc))
        return _upload_page(request, form, status=_REJECTION_STATUS.get(type(exc), 400))


def _upload(request: HttpRequest, data: dict) -> HttpResponse:
    upload = data["file"]
    limit = settings.ARENA_TRAJECTORY_MAX_BYTES
    if upload.size > limit:
        raise TrajectoryTooLarge(f"larger than the {limit:,}-byte limit")
    if data["run"] is not None:
        trajectory_upload(
            file=upload, filename=upload.name or "", run_id=data["run"], user=request.user
        )
        return redirect("transcript", run_id=data["run"])
    prepared = log_upload_prepare(
        user=request.user,
        file=upload,
        filename=upload.name or "",
        agent_name=data["agent"],
        task_slug=data["task"],
        model=data["model"],
        solution=data["solution"],
        solution_path=data["solution_path"],
    )
    if data["solution"] is not None:
        run = log_upload_store(prepared, user=request.user)
        return redirect("leaderboard:run-detail", run_id=run.pk)
    held = log_upload_hold(prepared, user=request.user)
    kept = [*request.session.get(_HELD_SESSION_KEY, []), held.handle]
    for dropped in kept[:-_HELD_KEPT]:
        log_upload_drop(dropped, user=request.user)
    request.session[_HELD_SESSION_KEY] = kept[-_HELD_KEPT:]
    return _confirm_page(request, held, ConfirmForm(initial={"held": held.handle}))


@login_required
@require_POST
@write_throttled
def trajectory_upload_confirm(request: HttpRequest) -> HttpResponse:
    """Step two: the kernel found in the log graded, another graded instead, or the log
    stored alone (a transcript only)."""
    form = ConfirmForm(request.POST, request.FILES)
    handle = request.POST.get("held", "")
    mine = handle in request.session.get(_HELD_SESSION_KEY, [])
    held = log_upload_held_view(handle, user=request.user) if mine else None
    if held is None:
        return _upload_page(request, UploadForm(), status=400, refusal=_GONE)
    if not form.is_valid():
        return _confirm_page(request, held, form, status=400)
    data = form.cleaned_data
    try:
        upload = log_upload_held(handle, user=request.user)
    except TrajectoryRejected as exc:
        return _upload_page(request, UploadForm(), status=400, refusal=exc.message)
    try:
        log_upload_kernel_set(
            upload, solution=data["solution"], transcript_only=data["action"] == "transcript"
        )
        run = log_upload_store(upload, user=request.user)
    except TrajectoryRejected as exc:
        upload.discard()
        status = _REJECTION_STATUS.get(type(exc), 400)
        return _upload_page(request, UploadForm(), status=status, refusal=_refusal(exc))
    return redirect("leaderboard:run-detail", run_id=run.pk)


_GONE = "This upload is no longer held (it waits a while for you, then goes): upload the log again."


def _refusal(exc: TrajectoryRejected) -> str:
    """A refusal's words; a log uploaded already links the run it is."""
    if isinstance(exc, LogAlreadyUploaded) and exc.run_id is not None:
        url = reverse("leaderboard:run-detail", args=[exc.run_id])
        return format_html('{} (<a href="{}" id="duplicate-run">read it</a>)', exc.message, url)
    return exc.message


def _upload_page(
    request: HttpRequest, form: UploadForm, *, status: int = 200, refusal: str = ""
) -> HttpResponse:
    context = {
        "form": form,
        "refusal": refusal,
        "limit_bytes": settings.ARENA_TRAJECTORY_MAX_BYTES,
        "agents": agents_of(user=request.user),
    }
    return render(request, "transcripts/upload.html", context, status=status)


def _confirm_page(
    request: HttpRequest, held: HeldUpload, form: ConfirmForm, *, status: int = 200
) -> HttpResponse:
    kernel = held.reading.kernel
    context = {
        "held": held,
        "reading": held.reading,
        "form": form,
        # Pygments escapes every token: the agent's code is shown, never trusted.
        "kernel_html": mark_safe(python_to_html(kernel.code)) if kernel else "",  # noqa: S308
        "held_minutes": int(held_max_age_s() // 60),
    }
    return render(request, "transcripts/upload_confirm.html", context, status=status)
