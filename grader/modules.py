"""Loading reference and solution files as modules, and setting a shape's constants on them."""

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from grader.constants import execute_with

# Attributes load_module leaves on a module so apply_shape can re-execute its source.
_TREE = "__arena_tree__"
_APPLIED = "__arena_shape__"


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered before exec so dataclasses, pickling and triton.jit can find the module.
    sys.modules[name] = module
    # No bytecode kept for it: a task's or a solution's file lies in a folder of one evaluation
    # (a copy in its scratch folder), so its bytecode would never be read again, and a process
    # that keeps bytecode in the grader's folder (bytecode.py) would fill it with one file per
    # evaluation.
    keeping = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = keeping
    source = Path(path).read_text(encoding="utf-8")
    setattr(module, _TREE, ast.parse(source, filename=str(path)))
    setattr(module, _APPLIED, {})
    return module


def apply_shape(module: ModuleType, shape: dict[str, int]) -> None:
    """Give a reference module a shape: its source re-runs with those constants replaced.

    KernelBench problems derive constants from the sizes (`bias_shape = (out_channels, 1, 1)`,
    targets drawn below `num_classes`); re-running the source makes every one of them follow.
    A module not loaded by load_module only gets the constants set.
    """
    tree = getattr(module, _TREE, None)
    if not isinstance(tree, ast.Module) or module.__file__ is None:
        set_constants(module, shape)
        return
    if getattr(module, _APPLIED, None) == shape:
        return  # already executed with exactly these constants
    execute_with(module, tree, Path(module.__file__), shape)
    setattr(module, _APPLIED, dict(shape))


def set_constants(module: ModuleType, values: dict[str, Any]) -> None:
    """Set constants as attributes, without re-running anything (solutions: no recompiling)."""
    for name, value in values.items():
        setattr(module, name, value)
