"""Module constants of a problem file, and re-executing it with some of them replaced.

KernelBench problems size their inputs from module-level assignments: literals (`N = 4096`),
arithmetic over literals and earlier constants (`M = 16384 * 2`), tuples derived from others
(`bias_shape = (out_channels, 1, 1)`), zero, negative, float and bool flags. A small evaluator
without builtins or calls reads them; an assignment it cannot read (`config = AutoConfig(...)`)
is simply not a constant. To grade another shape the source is re-executed with the base
constants' assignments overridden, so every constant derived from them follows.
"""

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from grader.formulas import BINARY_OPERATORS

# Bounds on what the evaluator computes, so a hostile or odd constant cannot hang the import.
_MAX_EXPONENT = 64
_MAX_ITEMS = 64

_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}


class _NotConstant(Exception):
    """An expression outside the arithmetic the evaluator reads."""


@dataclass(frozen=True)
class Constant:
    name: str
    value: Any
    # Computed from literals alone (`N = 2048 * 2`), not from other constants.
    literal: bool
    line: int

    @property
    def is_base_int(self) -> bool:
        """A positive int computed from literals alone: a candidate shape dimension."""
        return (
            self.literal
            and isinstance(self.value, int)
            and not isinstance(self.value, bool)
            and self.value > 0
        )


def module_constants(tree: ast.Module) -> dict[str, Constant]:
    """The module-level constants in source order; a later assignment replaces an earlier one."""
    constants: dict[str, Constant] = {}
    for node in tree.body:
        for name, expression in _assignments(node):
            value, literal = _evaluate(expression, constants)
            if value is _UNREADABLE:
                constants.pop(name, None)
                continue
            constants[name] = Constant(name, value, literal, node.lineno)
    return constants


def base_int_constants(tree: ast.Module) -> dict[str, int]:
    return {n: c.value for n, c in module_constants(tree).items() if c.is_base_int}


_UNREADABLE = object()


def _assignments(node: ast.stmt) -> list[tuple[str, ast.expr | None]]:
    """(name, expression) pairs a statement binds; expression None: bound to something unread."""
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return _bind(node.target, node.value)
    if isinstance(node, ast.Assign):
        # `height = width = 32` binds both names to the same expression.
        return [pair for target in node.targets for pair in _bind(target, node.value)]
    return []


def _bind(target: ast.expr, value: ast.expr | None) -> list[tuple[str, ast.expr | None]]:
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, (ast.Tuple, ast.List)):
        # `height, width = 32, 64`: pair the elements when the value is a literal tuple too.
        values: list[ast.expr | None] = [None] * len(target.elts)
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            values = list(value.elts)
        return [pair for t, v in zip(target.elts, values, strict=True) for pair in _bind(t, v)]
    return []


def _evaluate(expression: ast.expr | None, known: Mapping[str, Constant]) -> tuple[Any, bool]:
    if expression is None:
        return _UNREADABLE, False
    uses: list[bool] = []
    try:
        value = _value(expression, known, uses)
    except (_NotConstant, ArithmeticError, TypeError, ValueError):
        return _UNREADABLE, False
    return value, not uses


def _value(node: ast.expr, known: Mapping[str, Constant], uses: list[bool]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str)):
        return node.value
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Name) and node.id in known:
        uses.append(True)
        return known[node.id].value
    if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) <= _MAX_ITEMS:
        items = [_value(e, known, uses) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_number(_value(node.operand, known, uses)))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPERATORS:
        left = _number(_value(node.left, known, uses))
        right = _number(_value(node.right, known, uses))
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            raise _NotConstant("exponent too large")
        return BINARY_OPERATORS[type(node.op)](left, right)
    raise _NotConstant(type(node).__name__)


def _number(value: Any) -> int | float:
    if not isinstance(value, (int, float)):
        raise _NotConstant("not a number")
    return value


# ---- re-executing with constants replaced ------------------------------------------------------


def substituted_code(tree: ast.Module, path: Path, values: Mapping[str, Any]) -> CodeType:
    """The module's code with `name = value` inserted after every statement binding a name.

    Overriding right after each binding (rather than editing it) also covers chained and
    tuple assignments; every statement after it, derived constants included, sees the new value.
    """
    body: list[ast.stmt] = []
    for node in tree.body:
        body.append(node)
        bound = {name for name, _ in _assignments(node)}
        for name in sorted(bound & set(values)):
            override = ast.Assign(
                targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Constant(values[name])
            )
            body.append(ast.copy_location(override, node))
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    return compile(module, str(path), "exec")


def execute_with(
    module: ModuleType, tree: ast.Module, path: Path, values: Mapping[str, Any]
) -> None:
    """Re-run the module's source in its own namespace with the given constants replaced.

    Names the source never assigns are set afterwards, as plain attributes.
    """
    exec(substituted_code(tree, path, values), module.__dict__)  # noqa: S102
    assigned = {name for node in tree.body for name, _ in _assignments(node)}
    for name, value in values.items():
        if name not in assigned:
            setattr(module, name, value)
