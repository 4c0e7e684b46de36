"""What a solution file must be before it is graded: text under the size cap, Python, and a
module that binds `ModelNew` (the class the grader loads).

The grader itself would fail such a file at its compile gate; these checks refuse it at the
door where the uploader can still fix it (an upload that pairs a log with its kernel), with a
message that names the file and the line. The source is parsed, never run.
"""

from __future__ import annotations

import ast

from django.conf import settings

SOLUTION_CLASS = "ModelNew"


class SolutionRefused(ValueError):
    """A solution that cannot be graded; the message names the file and says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def solution_max_bytes() -> int:
    return int(settings.ARENA_MAX_SOLUTION_BYTES)


def solution_decode(raw: bytes, *, name: str) -> str:
    """The source of an uploaded solution file: UTF-8 text under ARENA_MAX_SOLUTION_BYTES."""
    limit = solution_max_bytes()
    if len(raw) > limit:
        raise SolutionRefused(f"{name}: larger than the {limit:,}-byte limit")
    if not raw.strip():
        raise SolutionRefused(f"{name}: the file is empty")
    try:
        code = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SolutionRefused(f"{name}: not UTF-8 text") from None
    if "\x00" in code:
        raise SolutionRefused(f"{name}: contains NUL bytes")
    return code


def solution_check(*, name: str, code: str) -> None:
    """Refuse a source that is over the size cap, is not Python, or binds no ModelNew at its
    top level (a class, an assignment or an import)."""
    solution_decode(code.encode("utf-8", "surrogatepass"), name=name)
    try:
        tree = ast.parse(code, filename=name)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise SolutionRefused(f"{name}: not Python ({where}{exc.msg})") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SolutionRefused(f"{name}: not Python ({type(exc).__name__})") from None
    if SOLUTION_CLASS not in _top_level_names(tree):
        raise SolutionRefused(
            f"{name}: defines no {SOLUTION_CLASS}: the grader loads class {SOLUTION_CLASS} "
            "from the solution"
        )


def _top_level_names(tree: ast.Module) -> set[str]:
    """Names the module binds, in its body and in the branches of its top-level if, try and
    with statements (`try: import triton` ... `class ModelNew` inside), not in functions."""
    names: set[str] = set()
    for node in _module_statements(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
    return names


def _module_statements(tree: ast.Module) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        out.append(node)
        if isinstance(node, ast.With):
            pending += node.body
        elif isinstance(node, ast.If | ast.For | ast.While):
            pending += [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            pending += [*node.body, *node.orelse, *node.finalbody]
            pending += [stmt for handler in node.handlers for stmt in handler.body]
    return out
