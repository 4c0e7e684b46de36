"""The task list. A task's own page shows its runs too, so the read side serves it
(leaderboard/views.py: task_detail); config/urls.py puts both under /tasks/."""

from django.shortcuts import render

from tasks.models import Task
from tasks.selectors import task_list, task_suites
from web.page_cache import public_page


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
