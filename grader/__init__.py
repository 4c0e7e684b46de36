"""The grader: plain Python over torch and triton, runnable on a bare GPU host (no Django).

Its names are imported on first use, so that a program that needs only part of the package
(the command line, before it has started its children) does not import torch for it."""

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.evaluate import EvaluateOptions, EvaluationStopped, evaluate
    from grader.result import EvalResult
    from grader.taskspec import TaskError, TaskSpec, load_task

_HOMES = {
    "EvaluateOptions": "grader.evaluate",
    "EvaluationStopped": "grader.evaluate",
    "evaluate": "grader.evaluate",
    "EvalResult": "grader.result",
    "TaskError": "grader.taskspec",
    "TaskSpec": "grader.taskspec",
    "load_task": "grader.taskspec",
}

__all__ = [
    "EvalResult",
    "EvaluateOptions",
    "EvaluationStopped",
    "TaskError",
    "TaskSpec",
    "evaluate",
    "load_task",
]


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        # Importing the submodule grader.evaluate binds its name on the package; the package's
        # `evaluate` stays the function, as `from grader import evaluate` expects.
        if name == "evaluate" and isinstance(value, types.ModuleType):
            value = value.evaluate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'grader' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
