"""A run's transcript page and its offline export: the log as the agent wrote it, beside the
run's verdict and the grader's log (the gates read by leaderboard/gates.py, as on the run page)."""

from __future__ import annotations

import json

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_GET

from arena.models import Run
from arena.run_verdicts import verdict_of_grading, verdict_of_run
from arena.selectors import runs_visible_to
from evaluator.models import Evaluation
from evaluator.redaction import error_seen, result_seen
from leaderboard.gates import gate_lines, gate_rows
from transcript_render import RunContext, transcript_policy
from transcripts.services import transcript_page_html


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


# -- what the transcript page shows beside the log ----------------------------------------------


def transcript_run_context(
    *, run: Run, download_url: str, run_url: str, disclosed: bool = False
) -> RunContext:
    """The agent, the task and the latest grading; its solution output and error messages
    only where the reader owns the run (`disclosed`)."""
    evaluation = _latest_evaluation(run)
    context = RunContext(
        agent=run.agent.name,
        task=f"{run.task.title} ({run.task.slug})",
        run_url=run_url,
        run_status=run.status,
        download_url=download_url,
    )
    grading = None
    if evaluation is not None and evaluation.status not in ("queued", "running"):
        result = result_seen(evaluation.result or {}, disclosed=disclosed)
        grading = verdict_of_grading(
            status=evaluation.status, device=evaluation.device, result=result
        )
    # The words and colour of the run page and the board: a flagged or CPU grading never reads
    # as a pass, and a log with no kernel says so.
    verdict = verdict_of_run(
        run_status=run.status,
        has_trajectory=run.trajectory_id is not None,
        failure_reason=run.failure_reason,
        grading=grading,
        grading_pending=evaluation is not None and grading is None,
    )
    context.verdict = verdict.headline
    context.verdict_tone = verdict.tone
    if evaluation is not None:
        context.reward = evaluation.reward
        context.solution = evaluation.solution_code
        context.solution_name = evaluation.solution_name
        context.grader_log = grader_log(evaluation, disclosed=disclosed)
    return context


def _latest_evaluation(run: Run) -> Evaluation | None:
    submission = run.submissions.select_related("evaluation").order_by("-created_at").first()
    return submission.evaluation if submission is not None else None


def grader_log(evaluation: Evaluation, *, disclosed: bool) -> str:
    """The grading as text: status, each gate with its reason and error output (for the run's
    owners), flags."""
    lines = [f"status: {evaluation.status}"]
    if evaluation.device:
        lines.append(f"device: {evaluation.device}")
    if evaluation.reward is not None:
        lines.append(f"reward: {evaluation.reward:.4f}")
    error = error_seen(evaluation.error, disclosed=disclosed)
    if error:
        lines += ["", "error:", error]
    result = evaluation.result if isinstance(evaluation.result, dict) else {}
    result = result_seen(result, disclosed=disclosed)
    for row in gate_rows(result.get("gates")):
        lines += ["", *gate_lines(row)]
    for flag in result.get("flags") or []:
        lines.append(f"flag: {json.dumps(flag, ensure_ascii=False)}")
    return "\n".join(lines)
