from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe

from leaderboard.selectors import (
    run_get_with_submissions,
    submission_list_graded,
    submission_list_pending,
)
from transcripts.render.highlight import python_to_html


def index(request):
    context = {
        "graded": submission_list_graded(),
        "pending": submission_list_pending(),
    }
    return render(request, "leaderboard/index.html", context)


def run_detail(request, run_id: int):
    run = run_get_with_submissions(run_id=run_id)
    if run is None:
        raise Http404("no such run")
    submissions = [
        {
            "submission": submission,
            "evaluation": submission.evaluation,
            "gates": submission.evaluation.result.get("gates", {}),
            "flags": submission.evaluation.result.get("flags", []),
            "log": submission.evaluation.result.get("log", ""),
            "code_html": mark_safe(python_to_html(submission.evaluation.solution_code)),  # noqa: S308
        }
        for submission in run.submissions.all()
    ]
    return render(request, "leaderboard/run_detail.html", {"run": run, "submissions": submissions})
