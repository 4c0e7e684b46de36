"""A rocmbench pytest file (the kernel, a line of hashes, then the tests): its one correctness
test that launches a kernel, read as a _Harness."""

import ast
import re
from typing import Any

from tasks.importers.agentkernelarena.constants import MAX_ROWS, _constant
from tasks.importers.agentkernelarena.harness import (
    CASE,
    CHECKS,
    FORBIDDEN_IN_INPUTS,
    SAFE_NAMES,
    NotImportable,
    _assigned,
    _bound_names,
    _bytes,
    _check_call,
    _checked_outputs,
    _defaults,
    _dtype,
    _Harness,
    _helpers,
    _imported,
    _name,
    _needed,
    _simple,
    _strip_seeds,
    _tolerance,
)
from tasks.importers.agentkernelarena.kernel import GUARD

# rocmbench test files put the kernel first, then a line of hashes, then the tests.
SEPARATOR = re.compile(r"^#{60,}[ \t]*$", re.M)
NOT_CORRECTNESS = re.compile(r"performance|^test_save_")
NOT_INPUTS = re.compile(r"manual_seed|^set_seed\(|set_printoptions")
DTYPE_WORDS = {"fp16": "float16", "fp32": "float32", "bf16": "bfloat16", "half": "float16"}


def _split_pytest(text: str) -> tuple[str, str]:
    """(kernel, tests) of a rocmbench test file."""
    found = SEPARATOR.search(text)
    if found is None:
        raise NotImportable("no line of hashes between the kernel and its tests")
    # The tests keep their line numbers, for the reasons that name one.
    padding = "\n" * text[: found.end()].count("\n")
    return text[: found.start()].rstrip() + "\n", padding + text[found.end() :]


def _read_pytest(text: str) -> tuple[str, _Harness]:
    kernel, tests = _split_pytest(text)
    kernel_tree, tree = ast.parse(kernel), ast.parse(tests)
    provided = {n for node in kernel_tree.body for n in _bound_names(node)}
    kernels = {
        n.name
        for n in kernel_tree.body
        if isinstance(n, ast.FunctionDef)
        and re.search(r"jit|autotune|heuristics", " ".join(map(ast.unparse, n.decorator_list)))
    }
    top: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            top[node.name] = node
        elif isinstance(node, ast.Import | ast.ImportFrom):
            top.update(dict.fromkeys(_imported(node), node))
        else:
            top.update(dict.fromkeys(sorted(_assigned(node)), node))
    # A function, class or alias that launches a kernel is a launcher too (a wrapper,
    # `attention = _attention.apply`).
    launchers = set(kernels)
    for node in [*kernel_tree.body, *tree.body]:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and _launches(node, launchers):
            launchers.add(node.name)
        elif (
            isinstance(node, ast.Assign)
            and {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} & launchers
        ):
            launchers |= _assigned(node)
    tests_found = [
        n
        for name, n in top.items()
        if isinstance(n, ast.FunctionDef)
        and name.startswith("test_")
        and not NOT_CORRECTNESS.search(name)
        and any(_launches(s, launchers) for s in n.body)
    ]
    if not tests_found:
        raise NotImportable("no correctness test launches the kernel")
    if len(tests_found) > 1:
        names = ", ".join(t.name for t in tests_found)
        raise NotImportable(f"{len(tests_found)} correctness tests ({names}); a task checks one")
    return kernel, _read_test(tests_found[0], top, provided, launchers)


def _launches(node: ast.AST, launchers: set[str]) -> bool:
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            while isinstance(func, ast.Subscript | ast.Attribute):
                func = func.value
            if _name(func) in launchers:
                return True
    return False


def _test_rows(test: ast.FunctionDef, top: dict[str, ast.stmt]) -> list[dict[str, Any]]:
    """The parametrize decorators' cases, crossed as pytest crosses them."""
    rows: list[dict[str, Any]] = [{}]
    for deco in test.decorator_list:
        if not (isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("parametrize")):
            continue
        try:
            names = _constant(deco.args[0], top)
            values = _constant(deco.args[1], top)
        except (ValueError, IndexError, TypeError):
            raise NotImportable(f"parametrize at line {deco.lineno} is not a constant") from None
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        cases = []
        for value in values:
            value = [value] if len(names) == 1 else list(value)
            if len(value) != len(names):
                raise NotImportable(f"parametrize at line {deco.lineno}: rows do not match")
            cases.append(dict(zip(names, value, strict=True)))
        rows = [{**case, **row} for case in cases for row in rows]
    if len(rows) > MAX_ROWS:
        raise NotImportable("too many parametrized cases")
    return rows


def _columns(
    rows: list[dict[str, Any]],
) -> tuple[list[str], list[dict[str, int]], dict[str, list[Any]]]:
    """(dimensions, shapes, table) as _cases makes them, from named rows."""

    def positive(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    columns = list(rows[0])
    dims = [c for c in columns if all(positive(r[c]) for r in rows)]
    table = {c: [r[c] for r in rows] for c in columns if c not in dims}
    if table:
        dims.append(CASE)
    shapes = [
        {**{c: r[c] for c in columns if c in dims}, **({CASE: n} if table else {})}
        for n, r in enumerate(rows, 1)
    ]
    unique = [s for i, s in enumerate(shapes) if s not in shapes[:i]]
    if len(unique) < len(shapes) and not table:
        shapes = unique
    return dims, shapes, table


def _read_test(
    test: ast.FunctionDef, top: dict[str, ast.stmt], provided: set[str], launchers: set[str]
) -> _Harness:
    rows = _test_rows(test, top)
    params = [a.arg for a in test.args.args]
    defaults = _defaults(test)
    preamble: list[ast.stmt] = []
    for param in params:
        if param in ("request", "device") or param in rows[0]:
            continue
        if param not in defaults:
            raise NotImportable(f"{test.name} uses the fixture {param!r}")
        preamble.append(ast.Assign([ast.Name(param, ast.Store())], defaults[param], lineno=0))
    body = [s for s in test.body if not _is_docstring(s)]
    index = next(i for i, s in enumerate(body) if _launches(s, launchers))
    launch = body[index]
    if not isinstance(launch, ast.Expr | ast.Assign) or not isinstance(launch.value, ast.Call):
        raise NotImportable(f"the kernel is launched inside control flow (line {launch.lineno})")
    before = [
        s
        for s in preamble + body[:index]
        if not (isinstance(s, ast.Expr) and NOT_INPUTS.search(ast.unparse(s))) and not _amd_skip(s)
    ]
    needed = _needed(before, launch.value)
    for stmt in needed:
        if _is_launch_setup(stmt):
            continue
        if any(isinstance(n, FORBIDDEN_IN_INPUTS) for n in ast.walk(stmt)) or re.search(
            r"pytest\.(skip|fail|xfail)", ast.unparse(stmt)
        ):
            raise NotImportable(f"inputs built with an early exit (line {stmt.lineno})")
    # Grids and closures are rebuilt by forward; everything else is an input.
    on_forward = [s for s in needed if _is_launch_setup(s)]
    inputs_side = [s for s in needed if s not in on_forward]
    made = {
        n.id
        for s in inputs_side
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    read = [
        n.id
        for s in [*on_forward, launch]
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and n.id in made
    ]
    args = list(dict.fromkeys(read))
    buffers = {
        name
        for s in inputs_side
        for name, expr in _simple(s).items()
        if re.search(r"\.(empty|zeros|full|ones)(_like)?\(", expr)
    }
    returns = _checked_outputs(launch, body[index + 1 :], buffers)
    dims, shapes, table = _columns(rows)
    local = provided | set(dims) | set(table) | made | SAFE_NAMES | {"device", "_torch"}
    local |= {name for s in [*needed, launch] for name in _bound_names(s)}
    used = [n.id for s in [*needed, launch] for n in ast.walk(s) if isinstance(n, ast.Name)]
    helpers = _helpers([u for u in used if u not in local], top, provided=provided)
    helpers = [_strip_seeds(ast.parse(h).body[0], True) for h in helpers]
    env = {k: v for s in inputs_side for k, v in _simple(s).items()}
    check = next((s for s in body[index + 1 :] if _check_call(s)), None)
    return _Harness(
        dims=dims,
        shapes=shapes,
        table=table,
        helpers=helpers,
        body=[_strip_seeds(s, True) for s in inputs_side],
        args=args,
        kwargs="",
        entry=_launched(launch, launchers),
        in_place=False,
        dtype=_table_dtype(table) or _dtype(env, inputs_side),
        bytes=_bytes(inputs_side, [ast.Name(a) for a in args if a not in buffers], env, set(dims)),
        tolerance=_tolerance([check], CHECKS) if check is not None else {},
        launch=[_strip_seeds(s, True) for s in [*on_forward, launch]],
        returns=returns,
    )


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _amd_skip(stmt: ast.stmt) -> bool:
    """`if is_hip(): pytest.skip(...)`: a case that only AMD GPUs skip."""
    return (
        isinstance(stmt, ast.If)
        and bool(GUARD.search(ast.unparse(stmt.test)))
        and not stmt.orelse
        and all("pytest.skip" in ast.unparse(s) for s in stmt.body)
    )


def _is_launch_setup(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.FunctionDef):
        return True
    if isinstance(stmt, ast.Assign):
        return isinstance(stmt.value, ast.Lambda) or "grid" in _assigned(stmt)
    return False


def _launched(launch: ast.Expr | ast.Assign, launchers: set[str]) -> str:
    assert isinstance(launch.value, ast.Call)
    func = launch.value.func
    if isinstance(func, ast.Subscript):
        func = func.value
    return _name(func) if _name(func) in launchers else ast.unparse(func)


def _table_dtype(table: dict[str, list[Any]]) -> str:
    for values in table.values():
        first = str(values[0]).removeprefix("torch.")
        first = DTYPE_WORDS.get(first, first)
        if first in {"float16", "bfloat16", "float32"}:
            return first
    return ""
