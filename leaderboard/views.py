from dataclasses import fields
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import mark_safe

from arena.models import Agent, Run
from arena.run_verdicts import (
    FLAG_MEANINGS,
    KINDS,
    performance_gate_reading,
    verdict_of_grading,
    verdict_of_run,
)
from evaluator.redaction import error_seen, result_seen, shapes_seen
from leaderboard import figures
from leaderboard.compare import (
    align_gates,
    align_shapes,
    latest_submission,
    solution_diff,
    unseen_set_aside,
)
from leaderboard.figure_data import task_speedup_points
from leaderboard.gates import gate_rows
from leaderboard.head_to_head import (
    SIGNIFICANCE,
    TIE_RATIO,
    head_to_head,
    intervals_overlap,
)
from leaderboard.scores import (
    BOOTSTRAP_LEVEL,
    BOOTSTRAP_RESAMPLES,
    FAILURE_SPEEDUP,
    FAST_P_THRESHOLDS,
    PRELIMINARY_BELOW_TASKS,
)
from leaderboard.selectors import (
    DEFAULT_SORT,
    SORT_KEYS,
    TIE_BREAKERS,
    RunFilters,
    ScoreFilters,
    agent_boards,
    agent_get,
    agent_list_public,
    agent_scores_by_category,
    agent_task_rows,
    board_filters,
    board_scores,
    cpu_unranked_rows,
    head_to_head_duels,
    leaderboard_cached,
    leaderboard_filter_options,
    leaderboard_rows,
    matrix_cells,
    run_filter_options,
    run_get_visible,
    run_list_public,
    run_status,
    runs_attach_scores,
    score_list_recent,
    speedup_histogram,
    submission_list_pending,
    task_roofline,
    task_runs,
)
from leaderboard.templatetags.leaderboard import SPEED_BINS
from tasks.models import Task
from tasks.selectors import task_folder, task_get_active, task_list, task_shape_rows, task_suites
from transcript_render.highlight import python_to_html
from web.page_cache import public_page

RUN_PAGE_LIMIT = 100
RUN_LIST_PAGE_SIZE = 50
# The column each sort key orders by, as the board names it.
SORT_LABELS = {
    "fast_1": "fast₁",
    "fast_0": "fast₀",
    "fast_1_5": "fast₁.₅",
    "fast_2": "fast₂",
    "speedup": "Speedup",
    "roofline": "Roofline",
    "correct": "Correct",
    "compile": "Compiles",
    "generalization": "Generalizes",
    "tasks": "Tasks",
    "runs": "Runs",
    "cost": "Cost/run",
    "tokens": "Tokens",
}
# What the sort key is, said once above the board.
SORT_MEANINGS = {
    "speedup": "the geometric mean of each attempted run's speedup over PyTorch eager, a failed "
    "or flagged run counting as the floor",
    "fast_1": "the share of attempted runs correct, unflagged and faster than PyTorch eager",
    "correct": "the share of attempted runs correct and unflagged",
}


def _filters(request) -> ScoreFilters:
    """The board asked for; board_filters turns an unknown or missing GPU into the default."""
    # Unknown values simply match nothing; they are never interpolated into SQL or HTML raw.
    return ScoreFilters(
        category=request.GET.get("category", "")[:20],
        gpu=request.GET.get("gpu", "")[:100],
        suite_version=request.GET.get("suite", "")[:120],
    )


@public_page
def index(request):
    filters = _filters(request)
    sort = request.GET.get("sort", DEFAULT_SORT)
    sort = sort if sort in SORT_KEYS else DEFAULT_SORT
    # The ranking, figures and latest runs change only with the generation: rendered once per
    # generation, filters and sort, then served as HTML. The queue is live.
    board = leaderboard_cached(
        f"board:{filters.key()}:{sort}", lambda: _board_html(request, filters, sort)
    )
    context = {"board": mark_safe(board), "pending": submission_list_pending()}  # noqa: S308
    return render(request, "leaderboard/index.html", context)


def _board_html(request, asked: ScoreFilters, sort: str) -> str:
    filters = board_filters(asked)
    rows = leaderboard_rows(filters=filters, sort=sort)
    named = [(r.agent.slug, r.score) for r in rows]
    styles = figures.agent_styles({r.agent.slug: r.agent.pk for r in rows})
    bins = speedup_histogram(filters=filters)
    points = task_speedup_points(scores=board_scores(filters))
    drawn = {
        "speedup": figures.task_speedup_strip(points, styles=styles),
        "histogram": figures.speedup_distribution(bins, styles=styles),
        "fast_p": figures.fast_p_curve(named, bins, styles=styles),
        "generalization": figures.seen_vs_unseen(named, styles=styles),
        "cost": figures.cost_vs_score(named, styles=styles),
    }
    context = {
        "rows": rows,
        "filters": filters,
        "sort": sort,
        "sort_label": SORT_LABELS[sort],
        "sort_meaning": SORT_MEANINGS.get(sort, ""),
        "sort_ties_all": len(rows) > 1 and len({SORT_KEYS[sort](r.score) for r in rows}) == 1,
        "tie_labels": [SORT_LABELS[k] for k in TIE_BREAKERS if k != sort],
        "options": leaderboard_filter_options(),
        "preliminary_below": PRELIMINARY_BELOW_TASKS,
        "failure_speedup": FAILURE_SPEEDUP,
        "cpu_rows": cpu_unranked_rows(filters=filters),
        # A figure with nothing to draw is left out rather than drawn as an empty panel.
        "figures": [(f"plot-{name.replace('_', '-')}", f) for name, f in drawn.items() if f],
        "recent": score_list_recent(filters=filters),
    }
    return render_to_string("leaderboard/_board.html", context, request=request)


@public_page
def agent_detail(request, slug: str):
    agent = agent_get(slug=slug)
    if agent is None:
        raise Http404("no such agent")
    boards = agent_boards(agent=agent)
    context = {
        "agent": agent,
        "boards": boards,
        "rivals": boards[0]["rivals"] if boards else [],
        "score": boards[0]["row"].score if boards else None,
        "by_category": sorted(agent_scores_by_category(agent=agent).items()),
        "tasks": agent_task_rows(agent=agent),
        "runs": runs_attach_scores(
            list(run_list_public(RunFilters(agent=agent.slug))[:RUN_PAGE_LIMIT])
        ),
        "run_list_query": urlencode({"agent": agent.slug}),
    }
    return render(request, "leaderboard/agent_detail.html", context)


@public_page
def agent_list(request):
    """/agents/: every agent with public runs."""
    return render(request, "leaderboard/agent_list.html", {"agents": agent_list_public()})


def run_list(request):
    """/runs/: public runs, newest first, filtered and paged."""
    values = {f.name: request.GET.get(f.name, "")[:100].strip() for f in fields(RunFilters)}
    filters = RunFilters(**values)
    paginator = Paginator(run_list_public(filters), RUN_LIST_PAGE_SIZE, allow_empty_first_page=True)
    page = paginator.get_page(request.GET.get("page"))
    page.object_list = runs_attach_scores(list(page.object_list))
    context = {
        "page": page,
        "runs": page.object_list,
        "filters": filters,
        "options": run_filter_options(),
        "query": urlencode(filters.query()),
    }
    return render(request, "leaderboard/run_list.html", context)


def favicon(request):
    """/favicon.ico, which browsers ask for on their own: the site's icon. Not a permanent
    redirect: the target's name carries the icon's hash and changes with it."""
    return redirect(static("favicon.svg"))


def transcript_list(request):
    """/transcripts/: the runs that have one."""
    return redirect(reverse("leaderboard:run-list") + "?transcript=yes")


@public_page
def scoring(request):
    """/scoring/: how every number of the board is taken."""
    context = {
        "failure_speedup": FAILURE_SPEEDUP,
        "preliminary_below": PRELIMINARY_BELOW_TASKS,
        "resamples": BOOTSTRAP_RESAMPLES,
        "level": int(BOOTSTRAP_LEVEL * 100),
        "fast_p": FAST_P_THRESHOLDS,
        "tie_labels": [SORT_LABELS[k] for k in TIE_BREAKERS if k != DEFAULT_SORT],
        "default_sort": SORT_LABELS[DEFAULT_SORT],
        "verdicts": [(code, kind) for code, kind in KINDS.items()],
        "flag_meanings": sorted(FLAG_MEANINGS.items()),
    }
    return render(request, "leaderboard/scoring.html", context)


@public_page
def matrix(request):
    filters = _filters(request)

    def build() -> str:
        context = {
            "matrix": matrix_cells(filters=filters),
            "filters": board_filters(filters),
            "options": leaderboard_filter_options(),
            "speed_bins": SPEED_BINS,
        }
        return render_to_string("leaderboard/matrix.html", context, request=request)

    # Nothing on the page is live: the whole grid is rendered once per generation and filters.
    return HttpResponse(leaderboard_cached(f"matrix-page:{filters.key()}", build))


def run_detail(request, run_id: int):
    run = run_get_visible(run_id=run_id, user=request.user)
    if run is None:
        raise Http404("no such run")
    submissions = [_submission_view(s, disclosed=run.disclosed) for s in run.submissions.all()]
    context = {
        "run": run,
        "submissions": submissions,
        # Without a submission the run's own verdict heads the page: transcript only, say.
        "run_verdict": None
        if submissions
        else verdict_of_run(
            run_status=run.status,
            has_trajectory=run.trajectory_id is not None,
            failure_reason=run.failure_reason,
        ),
        "transcript_url": transcript_url(run),
        "live": run_status(run_id=run.pk, user=request.user),
    }
    return render(request, "leaderboard/run_detail.html", context)


def run_status_json(request, run_id: int):
    status = run_status(run_id=run_id, user=request.user)
    if status is None:
        return JsonResponse({"detail": "no such run"}, status=404)
    return JsonResponse(status)


def compare(request):
    """/compare/?a=<run>&b=<run>: each run's latest evaluation, or the one ?ea= / ?eb= names.
    Without both runs, the page to choose two runs or two agents."""
    run_a, run_b = (request.GET.get(side, "").strip()[:18] for side in ("a", "b"))
    if not run_a or not run_b:
        context = _chooser_context(request, run_a=run_a, run_b=run_b)
        return render(request, "leaderboard/compare_choose.html", context)
    try:
        ids = {side: _id_param(request, side, "a run id") for side in ("a", "b")}
        chosen = {side: _id_param(request, f"e{side}", "an evaluation id") for side in ("a", "b")}
    except ValueError as exc:
        return HttpResponseBadRequest(_message_page(request, str(exc)))
    sides = []
    for side, run_id in ids.items():
        run = run_get_visible(run_id=run_id, user=request.user)
        if run is None:
            raise Http404(f"{side}: no run #{run_id}")
        sides.append(_compare_side(side, run, chosen[side]))
    return render(request, "leaderboard/compare.html", _compare_context(*sides))


@public_page
def compare_agents(request):
    """/compare/agents/?a=<slug>&b=<slug>&gpu=<board>: two agents task by task on one board
    (the board's checked rows send ?agent=<slug>&agent=<slug>). Without two agents, the
    chooser."""
    slugs = [v.strip()[:100] for v in request.GET.getlist("agent") if v.strip()]
    slugs = slugs or [v for v in (request.GET.get(k, "").strip()[:100] for k in "ab") if v]
    gpu = request.GET.get("gpu", "")[:100]
    if len(slugs) != 2 or slugs[0] == slugs[1]:
        note = "" if not slugs else "Pick two different agents."
        context = _chooser_context(request, agent_a=slugs[0] if slugs else "", gpu=gpu, note=note)
        return render(request, "leaderboard/compare_choose.html", context)
    agents = [agent_get(slug=slug) for slug in slugs]
    if None in agents:
        raise Http404("no such agent")
    return render(request, "leaderboard/compare_agents.html", _duel_context(*agents, gpu=gpu))


def _duel_context(a: Agent, b: Agent, *, gpu: str) -> dict[str, Any]:
    filters = board_filters(ScoreFilters(gpu=gpu))
    duels = head_to_head_duels(a=a, b=b, filters=filters)
    rows = {r.agent.pk: r for r in leaderboard_rows(filters=filters)}
    row_a, row_b = rows.get(a.pk), rows.get(b.pk)
    overlaps = {}
    if row_a and row_b:
        for key in ("speedup", "fast_1"):
            ia, ib = row_a.score.intervals.get(key), row_b.score.intervals.get(key)
            overlaps[key] = intervals_overlap(ia, ib)
    styles = figures.agent_styles({a.slug: a.pk, b.slug: b.pk})
    return {
        "a": a,
        "b": b,
        "row_a": row_a,
        "row_b": row_b,
        "filters": filters,
        "options": leaderboard_filter_options(),
        "duels": duels,
        "summary": head_to_head(duels),
        "overlaps": overlaps,
        "tie_percent": round((TIE_RATIO - 1) * 100),
        "significance": SIGNIFICANCE,
        "figure": figures.head_to_head_scatter(duels, a=a.slug, b=b.slug, styles=styles),
        "swap_query": urlencode({"a": b.slug, "b": a.slug, "gpu": filters.gpu}),
    }


def _chooser_context(
    request, *, run_a: str = "", run_b: str = "", agent_a: str = "", gpu: str = "", note=""
) -> dict[str, Any]:
    """The compare page's forms: two agents on a board, or two runs by number."""
    filters = board_filters(ScoreFilters(gpu=gpu))
    agents = [r.agent for r in leaderboard_rows(filters=filters)]
    slugs = [agent.slug for agent in agents]
    default_a = agent_a if agent_a in slugs else next(iter(slugs), "")
    return {
        "agents": agents,
        "default_a": default_a,
        "default_b": next((slug for slug in slugs if slug != default_a), ""),
        "filters": filters,
        "options": leaderboard_filter_options(),
        "run_a": run_a,
        "run_b": run_b,
        "note": note,
    }


def _id_param(request, field: str, what: str) -> int | None:
    """A positive id from the query string; the run ids are required, evaluation ids are not."""
    raw = request.GET.get(field, "").strip()
    if not raw and field.startswith("e"):
        return None
    if not raw.isdigit() or len(raw) > 18:
        raise ValueError(f"{field}: give {what} (a positive whole number), got {raw[:40]!r}")
    return int(raw)


def _compare_side(field: str, run: Run, evaluation_id: int | None) -> dict[str, Any]:
    submissions = list(run.submissions.all())
    latest = latest_submission(submissions)
    picked = latest
    if evaluation_id is not None:
        picked = next((s for s in submissions if s.evaluation_id == evaluation_id), None)
        if picked is None:
            raise Http404(f"e{field}: run #{run.pk} has no evaluation #{evaluation_id}")
    view = _submission_view(picked, disclosed=run.disclosed) if picked else None
    return {
        "letter": field.upper(),
        "field": field,
        "run": run,
        "transcript_url": transcript_url(run),
        "item": view,
        "evaluation": view["evaluation"] if view else None,
        "is_latest": picked is latest,
        "others": [s.evaluation for s in submissions if s is not picked],  # newest first
        "submission_count": len(submissions),
        "set_aside": unseen_set_aside(view["gates"] if view else {}),
    }


def _compare_context(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    a_eval, b_eval = a["evaluation"], b["evaluation"]
    diff = None
    if a_eval is not None and b_eval is not None:
        diff = solution_diff(
            a_eval.solution_code,
            b_eval.solution_code,
            a_label=f"A: run #{a['run'].pk} / {a_eval.solution_name}",
            b_label=f"B: run #{b['run'].pk} / {b_eval.solution_name}",
        )
    for side in (a, b):
        side["switch"] = [(e, _compare_url(a, b, side, e)) for e in side["others"]]
    return {
        "runs": [a, b],
        "same_task": a["run"].task_id == b["run"].task_id,
        "gates": align_gates(
            a["item"]["gates"] if a["item"] else {}, b["item"]["gates"] if b["item"] else {}
        ),
        "shapes": align_shapes(
            a["item"]["shapes"] if a["item"] else [], b["item"]["shapes"] if b["item"] else []
        ),
        "diff": diff,
    }


def _compare_url(a: dict[str, Any], b: dict[str, Any], side: dict[str, Any], evaluation) -> str:
    """This comparison with `side` showing `evaluation`, the other side's choice kept."""
    query = {"a": a["run"].pk, "b": b["run"].pk}
    for kept in (a, b):
        if not kept["is_latest"]:
            query[f"e{kept['field']}"] = kept["evaluation"].pk
    query[f"e{side['field']}"] = evaluation.pk
    return f"{reverse('leaderboard:compare')}?{urlencode(query)}"


def _message_page(request, message: str) -> str:
    return render(request, "leaderboard/message.html", {"message": message}).content.decode()


def _submission_view(submission, *, disclosed: bool) -> dict[str, Any]:
    """A grading as the reader may see it: its result, error and shapes are read from here,
    never from the row, so that the solution's output reaches the run's owners alone."""
    evaluation = submission.evaluation
    result = result_seen(evaluation.result or {}, disclosed=disclosed)
    summary = result.get("summary") or {}
    gates = dict(result.get("gates") or {})
    if isinstance(gates.get("performance"), dict):
        speedup = summary.get("speedup_vs_eager")
        gates["performance"] = performance_gate_reading(gates["performance"], speedup)
    return {
        "submission": submission,
        "evaluation": evaluation,
        "verdict": verdict_of_grading(
            status=evaluation.status, device=evaluation.device, result=result
        ),
        "disclosed": disclosed,
        "error": error_seen(evaluation.error, disclosed=disclosed),
        "shapes": shapes_seen(evaluation.shapes.all(), disclosed=disclosed),
        "gates": gates,
        "gate_rows": gate_rows(gates),
        "flags": result.get("flags", []),
        "summary": result.get("summary", {}),
        "gpu": (result.get("environment") or {}).get("gpu", ""),
        # Set on verdicts imported from a recording (seed_demo): where and when it was graded.
        "recorded_note": (result.get("recorded") or {}).get("note", ""),
        "log": result.get("log", ""),
        "code_html": mark_safe(python_to_html(evaluation.solution_code)),  # noqa: S308 - Pygments escapes
    }


def _roofline_figure(task) -> dict[str, Any] | None:
    chart = task_roofline(task=task)
    styles = figures.agent_styles({r["agent"]: r["agent_id"] for r in chart["runs"]})
    return figures.roofline_scatter(**chart, styles=styles)


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
def task_index(request):
    category = request.GET.get("category", "")
    backend = request.GET.get("backend", "")
    suite = request.GET.get("suite", "")[:50]
    context = {
        "tasks": task_list(category=category, backend=backend, suite=suite),
        "categories": Task.Category.values,
        "backends": ["cuda", "triton"],
        "suites": task_suites(),
        "category": category,
        "backend": backend,
        "suite": suite,
    }
    return render(request, "tasks/index.html", context)


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
        "roofline_figure": _roofline_figure(task),
    }
    return render(request, "tasks/detail.html", context)
