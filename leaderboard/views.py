from typing import Any

from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import mark_safe

from arena.models import Run
from config.page_cache import public_page
from leaderboard import figures
from leaderboard.selectors import (
    SORT_KEYS,
    ScoreFilters,
    agent_get,
    agent_scores_by_category,
    agent_task_rows,
    leaderboard_cached,
    leaderboard_filter_options,
    leaderboard_rows,
    matrix_cells,
    run_get_public,
    run_list_public,
    run_status,
    runs_attach_scores,
    score_list_recent,
    speedup_histogram,
    submission_list_pending,
    task_roofline,
    task_runs,
)
from tasks.selectors import task_folder, task_get_active, task_shape_rows
from transcripts.render.highlight import python_to_html

RUN_PAGE_LIMIT = 100


def _filters(request) -> ScoreFilters:
    # Unknown values simply match nothing; they are never interpolated into SQL or HTML raw.
    return ScoreFilters(
        category=request.GET.get("category", "")[:20],
        gpu=request.GET.get("gpu", "")[:100],
        suite_version=request.GET.get("suite", "")[:120],
    )


@public_page
def index(request):
    filters = _filters(request)
    sort = request.GET.get("sort", "fast_1")
    sort = sort if sort in SORT_KEYS else "fast_1"
    # The ranking, figures and latest runs change only with the generation: rendered once per
    # generation, filters and sort, then served as HTML. The queue is live.
    board = leaderboard_cached(
        f"board:{filters.key()}:{sort}", lambda: _board_html(request, filters, sort)
    )
    context = {"board": mark_safe(board), "pending": submission_list_pending()}  # noqa: S308
    return render(request, "leaderboard/index.html", context)


def _board_html(request, filters: ScoreFilters, sort: str) -> str:
    rows = leaderboard_rows(filters=filters, sort=sort)
    named = [(r.agent.slug, r.score) for r in rows]
    bins = speedup_histogram(filters=filters)
    context = {
        "rows": rows,
        "filters": filters,
        "sort": sort,
        "options": leaderboard_filter_options(),
        "figures": {
            "speedup": figures.speedup_distribution(bins),
            "fast_p": figures.fast_p_curve(named, bins),
            "generalization": figures.seen_vs_unseen(named),
            "cost": figures.cost_vs_score(named),
        },
        "recent": score_list_recent(),
    }
    return render_to_string("leaderboard/_board.html", context, request=request)


@public_page
def agent_detail(request, slug: str):
    agent = agent_get(slug=slug)
    if agent is None:
        raise Http404("no such agent")
    rows = [r for r in leaderboard_rows(filters=ScoreFilters()) if r.agent.pk == agent.pk]
    context = {
        "agent": agent,
        "score": rows[0].score if rows else None,
        "by_category": sorted(agent_scores_by_category(agent=agent).items()),
        "tasks": agent_task_rows(agent=agent),
        "runs": runs_attach_scores(list(run_list_public(agent=agent.slug)[:RUN_PAGE_LIMIT])),
    }
    return render(request, "leaderboard/agent_detail.html", context)


@public_page
def matrix(request):
    filters = _filters(request)

    def build() -> str:
        context = {
            "matrix": matrix_cells(filters=filters),
            "filters": filters,
            "options": leaderboard_filter_options(),
        }
        return render_to_string("leaderboard/matrix.html", context, request=request)

    # Nothing on the page is live: the whole grid is rendered once per generation and filters.
    return HttpResponse(leaderboard_cached(f"matrix-page:{filters.key()}", build))


def run_detail(request, run_id: int):
    run = run_get_public(run_id=run_id)
    if run is None:
        raise Http404("no such run")
    context = {
        "run": run,
        "submissions": [_submission_view(s) for s in run.submissions.all()],
        "transcript_url": transcript_url(run),
        "live": run_status(run_id=run.pk),
    }
    return render(request, "leaderboard/run_detail.html", context)


def run_status_json(request, run_id: int):
    status = run_status(run_id=run_id)
    if status is None:
        return JsonResponse({"detail": "no such run"}, status=404)
    return JsonResponse(status)


def compare(request):
    ids = {}
    for field in ("a", "b"):
        raw = request.GET.get(field, "").strip()
        if not raw.isdigit() or len(raw) > 18:
            problem = f"{field}: give a run id (a positive whole number), got {raw[:40]!r}"
            return HttpResponseBadRequest(_message_page(request, problem))
        ids[field] = int(raw)
    runs = []
    for field, run_id in ids.items():
        run = run_get_public(run_id=run_id)
        if run is None:
            raise Http404(f"{field}: no run #{run_id}")
        runs.append(
            {"run": run, "submissions": [_submission_view(s) for s in run.submissions.all()]}
        )
    return render(request, "leaderboard/compare.html", {"runs": runs})


def _message_page(request, message: str) -> str:
    return render(request, "leaderboard/message.html", {"message": message}).content.decode()


def _submission_view(submission) -> dict[str, Any]:
    evaluation = submission.evaluation
    result = evaluation.result or {}
    return {
        "submission": submission,
        "evaluation": evaluation,
        "gates": result.get("gates", {}),
        "flags": result.get("flags", []),
        "summary": result.get("summary", {}),
        "gpu": (result.get("environment") or {}).get("gpu", ""),
        # Set on verdicts imported from a recording (seed_demo): where and when it was graded.
        "recorded_note": (result.get("recorded") or {}).get("note", ""),
        "log": result.get("log", ""),
        "code_html": mark_safe(python_to_html(evaluation.solution_code)),  # noqa: S308 - Pygments escapes
    }


def transcript_url(run: Run) -> str | None:
    """The transcript page of the run, when it has one and the transcript pages are installed."""
    if not run.trajectory_id:
        return None
    for name in ("transcript", "transcripts:transcript"):
        try:
            return reverse(name, args=[run.pk])
        except NoReverseMatch:
            continue
    return None


@public_page
def task_detail(request, slug: str):
    """/tasks/<slug>/: the task (manifest, shapes, reference) with its public runs and roofline."""
    task = task_get_active(slug=slug)
    if task is None:
        raise Http404("no such task")
    reference = task_folder(task=task) / "reference.py"
    source = reference.read_text(encoding="utf-8") if reference.exists() else ""
    context = {
        "task": task,
        "manifest": task.manifest,
        "rows": task_shape_rows(task=task),
        "reference_html": mark_safe(python_to_html(source)),  # noqa: S308 - escaped by Pygments
        "runs": task_runs(task=task),
        "roofline_figure": figures.roofline_scatter(**task_roofline(task=task)),
    }
    return render(request, "tasks/detail.html", context)
