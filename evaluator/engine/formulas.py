"""Arithmetic over a shape's dimension names, for FLOP and byte formulas in task manifests.

Manifests come from contributors and imported files, so a formula is parsed into an AST and only
numbers, dimension names and + - * / // % ** and parentheses are accepted; nothing is eval'd.
"""

import ast
import operator
from collections.abc import Callable, Mapping

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
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


class FormulaError(ValueError):
    pass


def formula_names(expression: str) -> set[str]:
    """The dimension names a formula uses; raises FormulaError if it is not plain arithmetic."""
    tree = _parse(expression)
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def formula_evaluate(expression: str, dims: Mapping[str, int | float]) -> float:
    return float(_evaluate(_parse(expression).body, expression, dims))


def _parse(expression: str) -> ast.Expression:
    if len(expression) > 500:
        raise FormulaError("formula is longer than 500 characters")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise FormulaError(f"{expression!r} is not an arithmetic expression: {exc.msg}") from None
    for node in ast.walk(tree):
        allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load)
        if not isinstance(node, allowed) and not isinstance(node, (ast.operator, ast.unaryop)):
            raise FormulaError(f"{expression!r}: {type(node).__name__} is not allowed in a formula")
    return tree


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
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, expression, dims)
        right = _evaluate(node.right, expression, dims)
        if isinstance(node.op, ast.Pow) and abs(right) > 8:
            raise FormulaError(f"{expression!r}: exponents above 8 are not allowed")
        try:
            return _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise FormulaError(f"{expression!r}: division by zero") from None
    raise FormulaError(f"{expression!r}: unsupported expression")
