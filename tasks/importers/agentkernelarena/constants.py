"""A harness's constants (parametrize lists, HARNESS_SHAPES), evaluated from the AST: literals,
comprehensions, slices and a few pure builtins, never by running the harness."""

import ast
import contextlib
import itertools
from collections.abc import Callable
from typing import Any

from tasks.importers.agentkernelarena.harness import _name


class _Source(str):
    """A value that is source text (`torch.float16`): written into get_inputs as it is."""

    def __repr__(self) -> str:
        return str(self)


PURE_CALLS: dict[str, Callable[..., Any]] = {
    "int": int,
    "round": round,
    "len": len,
    "range": range,
    "list": list,
    "tuple": tuple,
    "min": min,
    "max": max,
}
BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b if _small(a) and _small(b) else _too_big(),
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b if abs(b) < 64 else _too_big(),
}
MAX_ROWS = 100_000


def _too_big() -> Any:
    raise ValueError("too large")


def _small(value: Any) -> bool:
    """A factor that cannot make a list or string of more than MAX_ROWS items."""
    return not isinstance(value, int) or abs(value) <= MAX_ROWS


def _constant(node: ast.expr, top: dict[str, ast.stmt]) -> Any:
    """The value of a constant expression of the harness: literals, names of the harness's
    constants, comprehensions, slices and a few pure builtins; ValueError for anything else.
    Nothing of the harness runs."""
    try:
        return _evaluate(node, top)
    except (ArithmeticError, LookupError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def _evaluate(node: ast.expr, top: dict[str, ast.stmt], scope: dict[str, Any] | None = None) -> Any:
    scope = scope or {}
    with contextlib.suppress(ValueError, SyntaxError):
        return ast.literal_eval(node)
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        source = top.get(node.id)
        if isinstance(source, ast.Assign) and len(source.targets) == 1:
            # A name read while its own value is read (`A = A + [1]`) has no constant value.
            return _evaluate(source.value, {k: v for k, v in top.items() if k != node.id})
        raise ValueError(node.id)
    if isinstance(node, ast.Attribute) and _name(node.value) == "torch":
        return _Source(ast.unparse(node))
    if isinstance(node, ast.Dict) and None not in node.keys:
        keys = [_evaluate(k, top, scope) for k in node.keys if k is not None]
        return dict(zip(keys, [_evaluate(v, top, scope) for v in node.values], strict=True))
    if isinstance(node, ast.List | ast.Tuple):
        items = [_evaluate(e, top, scope) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left, right = _evaluate(node.left, top, scope), _evaluate(node.right, top, scope)
        value = BINARY[type(node.op)](left, right)
        if isinstance(value, list | tuple | str) and len(value) > MAX_ROWS:
            raise ValueError("too large")
        return value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, top, scope)
    if isinstance(node, ast.Subscript):
        base = _evaluate(node.value, top, scope)
        if isinstance(node.slice, ast.Slice):
            parts = [node.slice.lower, node.slice.upper, node.slice.step]
            return base[slice(*(None if p is None else _evaluate(p, top, scope) for p in parts))]
        return base[_evaluate(node.slice, top, scope)]
    if isinstance(node, ast.ListComp | ast.GeneratorExp):
        return list(_comprehension(node, node.generators, top, dict(scope)))
    if isinstance(node, ast.Call) and not node.keywords:
        name = ast.unparse(node.func)
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                args += list(_evaluate(arg.value, top, scope))
            else:
                args.append(_evaluate(arg, top, scope))
        if name == "itertools.chain":
            return [x for a in args for x in a]
        if name == "itertools.product":
            return [tuple(p) for p in itertools.product(*args)]
        if name in PURE_CALLS and (name != "range" or len(range(*args)) <= MAX_ROWS):
            return PURE_CALLS[name](*args)
    if isinstance(node, ast.Starred):
        raise ValueError("starred")
    raise ValueError(ast.unparse(node))


def _comprehension(
    node: ast.ListComp | ast.GeneratorExp,
    generators: list[ast.comprehension],
    top: dict[str, ast.stmt],
    scope: dict[str, Any],
) -> list[Any]:
    if not generators:
        return [_evaluate(node.elt, top, scope)]
    first, rest = generators[0], generators[1:]
    out = []
    for value in _evaluate(first.iter, top, scope):
        inner = dict(scope)
        _bind(first.target, value, inner)
        if all(_evaluate(c, top, inner) for c in first.ifs):
            out += _comprehension(node, rest, top, inner)
        if len(out) > MAX_ROWS:
            raise ValueError("too large")
    return out


def _bind(target: ast.expr, value: Any, scope: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        scope[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List) and len(target.elts) == len(value):
        for t, v in zip(target.elts, value, strict=True):
            _bind(t, v, scope)
    else:
        raise ValueError(ast.unparse(target))
