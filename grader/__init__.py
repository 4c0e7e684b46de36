"""The grader: plain Python over torch and triton, runnable on a bare GPU host (no Django)."""

from grader.evaluate import EvaluateOptions, EvaluationStopped, evaluate
from grader.result import EvalResult
from grader.taskspec import TaskError, TaskSpec, load_task

__all__ = [
    "EvalResult",
    "EvaluateOptions",
    "EvaluationStopped",
    "TaskError",
    "TaskSpec",
    "evaluate",
    "load_task",
]
