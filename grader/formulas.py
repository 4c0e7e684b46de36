"""Arithmetic over a shape's dimension names: FLOP and byte formulas, and relations between dims.

Manifests come from contributors and imported files, so an expression is parsed into an AST and
only numbers, dimension names and + - * / // % ** and parentheses are accepted; a relation may
also hold one (possibly chained) comparison. Nothing is eval'd.
"""

import ast
import functools
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, cast

# Also the arithmetic of module constants (constants.py).
BINARY_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_COMPARE: dict[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_ARITHMETIC_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load)
# Nested powers of large dimensions would build integers of millions of digits.
_MAX_POWER_BITS = 512


class FormulaError(ValueError):
    pass


def formula_names(expression: str) -> set[str]:
    """The dimension names a formula uses; raises FormulaError if it is not plain arithmetic."""
    return _names(_parse(expression))


def formula_evaluate(expression: str, dims: Mapping[str, int | float]) -> float:
    return float(_evaluate(_parse(expression).body, expression, dims))


def relation_names(expression: str) -> set[str]:
    """The dimension names a relation such as "K % group == 0" uses; raises FormulaError."""
    return _names(_parse_relation(expression))


def relation_holds(expression: str, dims: Mapping[str, int | float]) -> bool:
    """Whether a comparison of arithmetic expressions holds; chains like "a <= b < c" work."""
    compare = _parse_relation(expression).body
    assert isinstance(compare, ast.Compare)
    left = _evaluate(compare.left, expression, dims)
    for op, node in zip(compare.ops, compare.comparators, strict=True):
        right = _evaluate(node, expression, dims)
        if not _COMPARE[type(op)](left, right):
            return False
        left = right
    return True


def _names(tree: ast.Expression) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


@functools.lru_cache(maxsize=256)
def _parse(expression: str) -> ast.Expression:
    tree = _syntax(expression, "an arithmetic expression")
    for node in ast.walk(tree):
        if not _is_arithmetic(node):
            raise FormulaError(f"{expression!r}: {type(node).__name__} is not allowed in a formula")
    return tree


@functools.lru_cache(maxsize=256)
def _parse_relation(expression: str) -> ast.Expression:
    tree = _syntax(expression, "a comparison")
    if not isinstance(tree.body, ast.Compare):
        raise FormulaError(f"{expression!r}: a relation must compare, e.g. 'K % 64 == 0'")
    for node in ast.walk(tree):
        allowed = node is tree.body or isinstance(node, tuple(_COMPARE)) or _is_arithmetic(node)
        if not allowed:
            raise FormulaError(
                f"{expression!r}: {type(node).__name__} is not allowed in a relation"
            )
    return tree


def _syntax(expression: str, what: str) -> ast.Expression:
    if len(expression) > 500:
        raise FormulaError("formula is longer than 500 characters")
    try:
        return ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise FormulaError(f"{expression!r} is not {what}: {exc.msg}") from None


def _is_arithmetic(node: ast.AST) -> bool:
    return isinstance(node, (*_ARITHMETIC_NODES, *BINARY_OPERATORS, *_UNARY))


def _evaluate(node: ast.expr, expression: str, dims: Mapping[str, int | float]) -> float:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise FormulaError(f"{expression!r}: only numbers may appear as constants")
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in dims:
            raise FormulaError(f"{expression!r}: unknown dimension {node.id!r}")
        return dims[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, expression, dims))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPERATORS:
        left = _evaluate(node.left, expression, dims)
        right = _evaluate(node.right, expression, dims)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right, expression)
        try:
            return cast(float, BINARY_OPERATORS[type(node.op)](left, right))
        except ZeroDivisionError:
            raise FormulaError(f"{expression!r}: division by zero") from None
    raise FormulaError(f"{expression!r}: unsupported expression")


def _check_power(base: float, exponent: float, expression: str) -> None:
    if abs(exponent) > 8:
        raise FormulaError(f"{expression!r}: exponents above 8 are not allowed")
    if abs(base) > 1 and exponent * math.log2(abs(base)) > _MAX_POWER_BITS:
        raise FormulaError(f"{expression!r}: the result is too large")
