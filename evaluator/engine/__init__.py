"""The grader: plain Python over torch and triton, runnable on a bare GPU host (no Django)."""

from evaluator.engine.evaluate import EvaluateOptions, EvaluationStopped, evaluate
from evaluator.engine.result import EvalResult
from evaluator.engine.taskspec import TaskError, TaskSpec, load_task

__all__ = [
    "EvalResult",
    "EvaluateOptions",
    "EvaluationStopped",
    "TaskError",
    "TaskSpec",
    "evaluate",
    "load_task",
]
