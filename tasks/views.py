from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe

from arena.page_cache import public_page
from leaderboard.views import task_runs_context
from tasks.models import Task
from tasks.selectors import task_folder, task_get_active, task_list, task_shape_rows
from transcripts.render.highlight import python_to_html


@public_page
def task_index(request):
    category = request.GET.get("category", "")
    backend = request.GET.get("backend", "")
    context = {
        "tasks": task_list(category=category, backend=backend),
        "categories": Task.Category.values,
        "backends": ["cuda", "triton"],
        "category": category,
        "backend": backend,
    }
    return render(request, "tasks/index.html", context)


@public_page
def task_detail(request, slug: str):
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
        **task_runs_context(task=task),
    }
    return render(request, "tasks/detail.html", context)
