"""Runs on the meta device that leave torch's compiler unimported.

Many of torch's Python kernels are wrapped by `torch._disable_dynamo`: the references behind
meta tensors (`x + x` on the meta device runs one) and every dispatch mode's
`__torch_dispatch__` (a FLOP counter's). On its first call such a wrapper imports torch._dynamo
to turn the compiler off around its function, and keeps that compiler-off function on the
function (its `__dynamo_disable` attribute). The import costs seconds (4.8-5.2 s on an H200
host, measured 2026-11-28), and the task's analysis, the probe's footprints and the grading
process's index-limit shapes all run on the meta device, where no code compiles anything.

`compiler_off()` spares that import. For the length of a block it gives each wrapper found in
the process its own function as the compiler-off one (the compiler cannot be on in a process
that has not imported it, so calling the function is all the wrapper would do) and takes them
back after: every wrapper is then as before, and the first call outside a block imports the
compiler as it always did. Nothing changes where the compiler is already imported, or where
torch's wrapper is not the one this module knows (it then imports, as before).

Within a block no thread of the process may compile: the grading process and the probe's
child never do (the judge's child, which compiles the baselines, never uses this).
"""

import contextlib
import gc
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

from torch._compile import _disable_dynamo

# The attribute where a wrapper keeps its compiler-off function (torch/_compile.py).
_KEPT = "__dynamo_disable"
_lock = threading.Lock()
_wrapped: list[Callable[..., Any]] | None = None
_given: list[Callable[..., Any]] = []
_depth = 0


@contextlib.contextmanager
def compiler_off() -> Iterator[None]:
    """Within: torch's compiler-off wrappers call their functions without importing it."""
    global _depth
    with _lock:
        if _depth == 0 and "torch._dynamo" not in sys.modules:
            _give(_functions())
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _take_back()


def find_ahead() -> None:
    """Find the wrappers now (a prepared child, before its first job), not in the first block."""
    with _lock:
        _functions()


def _functions() -> list[Callable[..., Any]]:
    """The functions torch's compiler-off wrappers hold, found once per process (0.05-0.15 s)
    among its live functions. A wrapper made later imports the compiler as before."""
    global _wrapped
    if _wrapped is None:
        _wrapped = _find_wrapped()
    return _wrapped


def _find_wrapped() -> list[Callable[..., Any]]:
    code = _disable_dynamo(_nothing).__code__
    if _KEPT not in code.co_consts or "fn" not in code.co_freevars:
        return []  # not the wrapper this module knows: leave every call as torch makes it
    cell = code.co_freevars.index("fn")
    # The collector lists no object a gc.freeze() has set aside (a prepared child freezes what
    # its imports made): those are listed again for the search, and set aside again after.
    frozen = gc.get_freeze_count() > 0
    if frozen:
        gc.unfreeze()
    try:
        found = []
        for obj in gc.get_objects():
            if type(obj) is types.FunctionType and obj.__code__ is code and obj.__closure__:
                function = obj.__closure__[cell].cell_contents
                if callable(function):
                    found.append(function)
        return found
    finally:
        if frozen:
            gc.freeze()


def _give(functions: list[Callable[..., Any]]) -> None:
    for function in functions:
        if getattr(function, _KEPT, None) is None:
            with contextlib.suppress(AttributeError, TypeError):
                setattr(function, _KEPT, function)
                _given.append(function)


def _take_back() -> None:
    for function in _given:
        if getattr(function, _KEPT, None) is function:
            with contextlib.suppress(AttributeError, TypeError):
                delattr(function, _KEPT)
    _given.clear()


def _nothing() -> None:
    return None
