"""A vllm-style task runner (scripts/task_runner.py) or a GEAK harness (test_kernel_harness.py):
`run_correctness` over TEST_SHAPES, SEEDS or HARNESS_SHAPES, read as a _Harness."""

import ast
import copy
import json
import re
from typing import Any

from tasks.importers.agentkernelarena.constants import _constant
from tasks.importers.agentkernelarena.harness import (
    CASE,
    CHECKS,
    FORBIDDEN_IN_INPUTS,
    SAFE_NAMES,
    NotImportable,
    _all_assigned,
    _assigned,
    _base,
    _bound_names,
    _bytes,
    _checked_outputs,
    _constant_dtypes,
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


def _read_runner(text: str, kernel: str = "", *, geak: bool = False) -> _Harness:
    tree = ast.parse(text)
    try:
        kernel_tree = ast.parse(kernel)
    except SyntaxError:
        kernel_tree = ast.Module(body=[], type_ignores=[])
    provided = {n for node in kernel_tree.body for n in _bound_names(node)}
    # A GEAK harness imports the kernel's entry under a module alias of its own.
    entries = _entry_aliases(tree, kernel_tree) if geak else {}
    top = {
        name: node
        for node in tree.body
        for name in ([node.name] if isinstance(node, ast.FunctionDef) else sorted(_assigned(node)))
    }
    # The harness's own helpers are the ones its correctness mode calls, even where the kernel
    # file defines one of the same name: those are renamed in what is copied.
    renames = {name: f"_harness_{name}" for name in sorted(provided & set(top))}
    provided -= set(top)
    func = top.get("run_correctness")
    if not isinstance(func, ast.FunctionDef):
        raise NotImportable("runner has no run_correctness")
    loop = next((n for n in func.body if isinstance(n, ast.For)), None)
    if loop is None:
        raise NotImportable("run_correctness has no loop over its cases")
    setup = [
        n
        for n in func.body[: func.body.index(loop)]
        if isinstance(n, ast.Assign | ast.Import | ast.ImportFrom)
        and "load_module" not in ast.unparse(n)
        and not (isinstance(n, ast.ImportFrom) and _imported(n) <= set(entries))
    ]
    loop, passed = _indexed(loop, _cases_argument(func, loop, tree), top)
    dims, shapes, table = _cases(loop, top, passed)
    body = list(loop.body)
    if len(body) == 1 and isinstance(body[0], ast.Try):
        body = list(body[0].body)
    before: list[ast.stmt] = []
    call: ast.Call | None = None
    in_place = False
    for stmt in body:
        call = _entry_call(stmt, entries)
        if call is not None:
            in_place = isinstance(stmt, ast.Expr)
            break
        if isinstance(stmt, ast.Expr) and "manual_seed" in ast.unparse(stmt):
            continue
        if any(isinstance(n, FORBIDDEN_IN_INPUTS) for n in ast.walk(stmt)):
            raise NotImportable(f"inputs built with an early exit (line {stmt.lineno})")
        before.append(stmt)
    if call is None:
        entry = "an entry the harness imports" if geak else "mod.<name>(...)"
        raise NotImportable(f"no call of the kernel's entry ({entry}) in run_correctness")
    if geak:
        # The task compares what the entry returns: the harness's check must read that too.
        _checked_outputs(stmt, body[body.index(stmt) + 1 :], set(), in_place=False)
    args, kwargs = _call_arguments(call)
    before = _needed(before, call)
    _drop_unused_index(loop, [*setup, *before, call], dims, shapes, table)
    local = (
        provided | set(dims) | set(table) | _all_assigned(setup + before) | SAFE_NAMES | {"device"}
    )
    local |= {
        n.id
        for s in setup + before
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    local |= {
        a.asname or a.name.split(".")[0]
        for s in setup + before
        if isinstance(s, ast.Import | ast.ImportFrom)
        for a in s.names
    }
    used = [n.id for s in [*setup, *before, call] for n in ast.walk(s) if isinstance(n, ast.Name)]
    helpers = _helpers(
        [u for u in used if u not in local and u != "mod" and u not in entries],
        top,
        entries,
        renames=renames,
    )
    setup_src = [_strip_seeds(s, geak, renames) for s in setup if "device" not in _assigned(s)]
    body_src = setup_src + [_strip_seeds(s, geak, renames) for s in before]
    if any("data_ptr(" in text for text in [*helpers, *body_src]):
        raise NotImportable("inputs hold raw device pointers (data_ptr())")
    env = {k: v for s in setup for k, v in _simple(s).items()}
    after = body[body.index(stmt) + 1 :]
    returned, compared = _compared(stmt, call, after)
    return _Harness(
        dims=dims,
        shapes=shapes,
        table=table,
        helpers=helpers,
        body=body_src,
        args=args,
        kwargs=kwargs,
        entry=call.func.attr if isinstance(call.func, ast.Attribute) else entries[_name(call.func)],
        in_place=in_place,
        imports=_imports(tree, [*helpers, *body_src], set(entries)),
        returned=returned,
        compared=compared,
        copies=in_place or bool(compared) or _written_hint(call, [*before, *after]),
        dtype=_dtype(env, before, _constant_dtypes(before, top) if geak else []),
        bytes=_bytes(before, call.args, env, set(dims)),
        tolerance=(
            _tolerance(body, ("allclose", "assert_close"), _passed_values(func, tree), True)
            if geak
            else _tolerance(body)
        ),
    )


def _entry_aliases(tree: ast.Module, kernel: ast.Module) -> dict[str, str]:
    """{name the harness calls: the kernel's function} for every import of a kernel function."""
    functions = {n.name for n in kernel.body if isinstance(n, ast.FunctionDef)}
    functions |= {  # `gemm_a16w16 = gemm`
        name
        for n in kernel.body
        if isinstance(n, ast.Assign) and _name(n.value) in functions
        for name in _assigned(n)
    }
    return {
        a.asname or a.name: a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom)
        for a in n.names
        if a.name in functions
    }


def _passed_values(func: ast.FunctionDef, tree: ast.Module) -> dict[str, ast.expr]:
    """run_correctness's parameters as its correctness mode sets them: the argument passed
    (an argparse option's default for `args.atol`), else the parameter's default."""
    values = _defaults(func)
    call = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) == func.name),
        None,
    )
    options = {
        str(n.args[0].value).lstrip("-").replace("-", "_"): k.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "add_argument"
        and n.args
        and isinstance(n.args[0], ast.Constant)
        for k in n.keywords
        if k.arg == "default"
    }
    for keyword in call.keywords if call is not None else []:
        value = keyword.value
        if isinstance(value, ast.Attribute) and value.attr in options:
            value = options[value.attr]
        if keyword.arg:
            values[keyword.arg] = value
    return values


def _cases_argument(func: ast.FunctionDef, loop: ast.For, tree: ast.Module) -> ast.expr | None:
    """What the harness's correctness mode passes for the parameter the cases loop runs over
    (`run_correctness(HARNESS_SHAPES)`); None when the loop runs over a constant."""
    iterable = loop.iter
    if isinstance(iterable, ast.Call) and _name(iterable.func) == "enumerate":
        iterable = iterable.args[0]
    params = [a.arg for a in func.args.args]
    if not isinstance(iterable, ast.Name) or iterable.id not in params:
        return None
    position = params.index(iterable.id)
    callers = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    for caller in [*callers, tree]:
        for node in ast.walk(caller):
            if isinstance(node, ast.Call) and _name(node.func) == func.name:
                given = {k.arg: k.value for k in node.keywords}
                if position < len(node.args):
                    return _local_value(node.args[position], caller, node.lineno)
                if iterable.id in given:
                    return _local_value(given[iterable.id], caller, node.lineno)
    raise NotImportable(f"run_correctness's {iterable.id!r} is never passed")


def _local_value(value: ast.expr, caller: ast.FunctionDef | ast.Module, line: int) -> ast.expr:
    """What a local name passed at `line` was last set to (`indices = list(range(...))`)."""
    if not isinstance(value, ast.Name):
        return value
    sets = [
        n
        for n in ast.walk(caller)
        if isinstance(n, ast.Assign)
        and n.lineno < line
        and _assigned(n) == {value.id}
        and isinstance(n.targets[0], ast.Name)
    ]
    return max(sets, key=lambda n: n.lineno).value if sets else value


def _indexed(
    loop: ast.For, passed: ast.expr | None, top: dict[str, ast.stmt]
) -> tuple[ast.For, ast.expr | None]:
    """`for idx in indices: M, N, K = ALL_CONFIGS[idx]`, read as a loop over the rows of
    ALL_CONFIGS that `indices` names."""
    first = loop.body[0] if loop.body else None
    if not (
        isinstance(loop.target, ast.Name)
        and isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.value, ast.Subscript)
        and _name(first.value.value) in top
        and _name(first.value.slice) == loop.target.id
    ):
        return loop, passed
    rows = ast.ListComp(
        elt=ast.Subscript(first.value.value, ast.Name("_i", ast.Load()), ast.Load()),
        generators=[ast.comprehension(ast.Name("_i", ast.Store()), passed or loop.iter, [], 0)],
    )
    rest = ast.For(target=first.targets[0], iter=loop.iter, body=loop.body[1:], orelse=[])
    return ast.fix_missing_locations(ast.copy_location(rest, loop)), rows


def _cases(
    loop: ast.For, top: dict[str, ast.stmt], passed: ast.expr | None = None
) -> tuple[list[str], list[dict[str, int]], dict[str, list[Any]]]:
    """(dimensions, visible shapes, table columns) of the loop over the harness's cases."""
    iterable = loop.iter
    target = loop.target
    index = ""
    if isinstance(iterable, ast.Call) and ast.unparse(iterable.func) == "enumerate":
        iterable = iterable.args[0]
        if isinstance(target, ast.Tuple) and len(target.elts) == 2:
            index = ast.unparse(target.elts[0])
            target = target.elts[1]
    if passed is not None:
        iterable = passed
    source = top.get(iterable.id) if isinstance(iterable, ast.Name) else None
    if isinstance(source, ast.Assign):
        value = source.value
    elif passed is not None and not isinstance(passed, ast.Name):
        value = passed  # what the correctness mode passes, or rows picked by index (_indexed)
    else:
        raise NotImportable(f"the cases loop runs over {ast.unparse(iterable)!r}, not a constant")
    try:
        rows = _constant(value, top)
    except ValueError:
        if isinstance(iterable, ast.Name):
            raise NotImportable(f"{ast.unparse(iterable)} is not a literal") from None
        raise NotImportable(f"the cases {ast.unparse(iterable)!r} are not a constant") from None
    if isinstance(target, ast.Name) and ast.unparse(iterable) == "SEEDS":
        # One fixed shape, drawn by the harness per seed: the grader draws its own seeds.
        return [], [{}], {target.id: [rows[0]], **({index: [0]} if index else {})}
    names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [])
    if not names or not all(isinstance(e, ast.Name) for e in names):
        raise NotImportable("the cases are not unpacked into names")
    columns = [e.id for e in names if isinstance(e, ast.Name)]
    if isinstance(target, ast.Name):
        rows = [(r,) for r in rows]
    if not rows or not all(isinstance(r, tuple) and len(r) == len(columns) for r in rows):
        raise NotImportable(f"{ast.unparse(iterable)} rows do not match {columns}")

    def positive(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    dims = [c for i, c in enumerate(columns) if all(positive(r[i]) for r in rows)]
    table = {c: [r[i] for r in rows] for i, c in enumerate(columns) if c not in dims}
    if index.isidentifier() and index not in columns and len(rows) > 1:
        table[index] = list(range(len(rows)))
    if table:
        dims.append(CASE)
    shapes = [
        {**{c: r[i] for i, c in enumerate(columns) if c in dims}, **({CASE: n} if table else {})}
        for n, r in enumerate(rows, 1)
    ]
    return dims, shapes, table


def _drop_unused_index(
    loop: ast.For,
    used_by: list[ast.AST],
    dims: list[str],
    shapes: list[dict[str, int]],
    table: dict[str, list[Any]],
) -> None:
    """Forget the loop's row number when the inputs never read it (and CASE with it)."""
    target = loop.target
    if not (isinstance(target, ast.Tuple) and isinstance(target.elts[0], ast.Name)):
        return
    index = target.elts[0].id
    if index not in table or any(
        isinstance(n, ast.Name) and n.id == index for node in used_by for n in ast.walk(node)
    ):
        return
    del table[index]
    if not table and CASE in dims:
        dims.remove(CASE)
        for shape in shapes:
            del shape[CASE]


def _call_arguments(call: ast.Call) -> tuple[list[str], str]:
    args = []
    for arg in call.args:
        args.append(ast.unparse(arg))
    explicit = [k for k in call.keywords if k.arg is not None]
    spread = [k for k in call.keywords if k.arg is None]
    parts = [f"{json.dumps(k.arg)}: {ast.unparse(k.value)}" for k in explicit]
    parts += [f"**{ast.unparse(k.value)}" for k in spread]
    return args, ("{" + ", ".join(parts) + "}") if parts else ""


def _imports(tree: ast.Module, copied: list[str], entries: set[str]) -> list[str]:
    """The harness's module-level imports that the copied helpers and statements use."""
    used = {n.id for text in copied for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
    found = []
    for node in tree.body:
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound not in used or bound in entries:
                continue
            one = copy.copy(node)
            one.names = [alias]
            found.append(ast.unparse(one))
    return list(dict.fromkeys(found))


Source = tuple[str, int | str | None]  # ("out", index or None) or ("arg", position or name)


def _compared(
    stmt: ast.stmt, call: ast.Call, after: list[ast.stmt]
) -> tuple[list[int] | None, list[int | str]]:
    """(parts of the entry's result, arguments) that the harness's checks after the call
    compare, followed through `r = out[0]`, `o = out.float()`-style steps: (None, []) where the
    checks compare neither. A check of part of an output bounded by a value read after the
    call, or of a written buffer at positions another one holds, is refused: what the kernel
    leaves elsewhere is not compared by the harness, and an elementwise comparison would."""
    derived: dict[str, Source] = {}
    for target in stmt.targets if isinstance(stmt, ast.Assign) else []:
        if isinstance(target, ast.Name):
            derived[target.id] = ("out", None)
        elif isinstance(target, ast.Tuple):
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Name) and element.id != "_":
                    derived[element.id] = ("out", index)
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Name):
            derived.setdefault(arg.id, ("arg", position))
    for keyword in call.keywords:
        if keyword.arg and isinstance(keyword.value, ast.Name):
            derived.setdefault(keyword.value.id, ("arg", keyword.arg))
    late: set[str] = set()  # names set after the call
    found: list[Source] = []

    def source(value: ast.expr) -> Source | None:
        if isinstance(value, ast.IfExp):
            return source(value.body)
        if (
            isinstance(value, ast.Subscript)
            and derived.get(_name(value.value)) == ("out", None)
            and isinstance(value.slice, ast.Constant)
            and isinstance(value.slice.value, int)
        ):
            return ("out", value.slice.value)
        return derived.get(_base(value))

    def check(node: ast.Call) -> None:
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Subscript) or _base(sub) not in derived:
                continue
            inner = [n.id for n in ast.walk(sub.slice) if isinstance(n, ast.Name)]
            if any(n in derived for n in inner):
                raise NotImportable(
                    f"the harness checks {ast.unparse(sub)!r}: a buffer at positions the "
                    "kernel chose (not a deterministic layout)"
                )
            bounds = [
                n.id
                for part in ast.walk(sub.slice)
                if isinstance(part, ast.Slice)
                for n in ast.walk(part)
                if isinstance(n, ast.Name)
            ]
            if any(n in late for n in bounds):
                raise NotImportable(
                    f"the harness checks only {ast.unparse(sub)!r}: the rest of that output "
                    "is not written"
                )
        # The operands compared (`out.float()`), not names inside an expected value (`x * 2`).
        for operand in node.args:
            if _base(operand) in derived:
                found.append(derived[_base(operand)])

    def visit(node: ast.stmt) -> None:
        calls = [
            n
            for n in ast.walk(node)
            if isinstance(n, ast.Call) and ast.unparse(n.func).endswith(CHECKS)
        ]
        if isinstance(node, ast.Assign) and not calls:
            origin = source(node.value)
            for name in _assigned(node):
                late.add(name)
                if origin is not None and len(node.targets) == 1:
                    derived[name] = origin
                else:
                    derived.pop(name, None)
            return
        if isinstance(node, ast.For | ast.While | ast.If | ast.With | ast.Try):
            if isinstance(node, ast.For):
                late.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
            test = getattr(node, "test", None)
            for sub in [n for n in ast.walk(test) if isinstance(n, ast.Call)] if test else []:
                if ast.unparse(sub.func).endswith(CHECKS):
                    check(sub)
            for child in [*node.body, *getattr(node, "orelse", [])]:
                visit(child)
            return
        for sub in calls:
            check(sub)

    for node in after:
        visit(node)
    found = list(dict.fromkeys(found))
    parts = [index for kind, index in found if kind == "out" and isinstance(index, int)]
    whole = ("out", None) in found
    returned = None if whole or not parts else parts
    return returned, [index for kind, index in found if kind == "arg" and index is not None]


def _written_hint(call: ast.Call, around: list[ast.stmt]) -> bool:
    """Whether the harness shows that the entry writes into an argument: it passes a copy
    (`x.clone()`, `x_copy = x.clone()`), keeps one (`ref = x.clone()`) or passes a buffer
    (`torch.zeros_like`, `torch.empty`)."""
    values = [*call.args, *(k.value for k in call.keywords)]
    names = {_name(v) for v in values} - {""}
    if any("clone(" in ast.unparse(v) for v in values):
        return True
    for stmt in around:
        for name, expr in _simple(stmt).items():
            if name in names and re.search(r"\.clone\(|\.(empty|zeros|full|ones)(_like)?\(", expr):
                return True
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "clone"
                and _base(node.func.value) in names
            ):
                return True
    return False


def _entry_call(stmt: ast.stmt, entries: dict[str, str] | None = None) -> ast.Call | None:
    value = stmt.value if isinstance(stmt, ast.Assign | ast.Expr) else None
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and _name(func.value) == "mod":
        return value
    if _name(func) in (entries or {}):
        return value
    return None
