"""What a harness becomes (_Harness), and the reading of its statements that the task
runners and the pytest files share: names, assignments, dtypes, bytes, tolerances, checks, the
helpers copied along."""

import ast
import builtins
import contextlib
import copy
import re
from dataclasses import dataclass, field
from typing import Any

ELEMENT_BYTES = {
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float32": 4,
    "float": 4,
    "float64": 8,
    "double": 8,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
    "int16": 2,
    "int32": 4,
    "int": 4,
    "int64": 8,
    "long": 8,
}
FACTORIES = {"randn", "rand", "zeros", "ones", "empty", "full", "randint", "randperm", "arange"}
SAFE_NAMES = {"torch", "math", "int", "float", "min", "max", "abs", "len", "range", "True"}


class NotImportable(Exception):
    """This task cannot be expressed in our format; the message says why."""


@dataclass
class _Harness:
    dims: list[str]
    shapes: list[dict[str, int]]
    # Columns of TEST_SHAPES that are not dimensions (flags, lists, names), by row: the
    # dimension CASE (1-based row) picks them.
    table: dict[str, list[Any]]
    helpers: list[str]
    body: list[str]
    args: list[str]
    kwargs: str  # "" or an expression of the keyword arguments' dict
    entry: str
    in_place: bool
    dtype: str
    bytes: str
    tolerance: dict[str, float]
    # A pytest harness: the test's statements that launch the kernel, run by forward on copies
    # of the inputs (named by args), and the tensors its check reads.
    launch: list[str] = field(default_factory=list)
    returns: list[str] = field(default_factory=list)
    # A runner: the harness's imports its copied statements use; which parts of the entry's
    # result (indices, or None for all of it) and which arguments (positions, keyword names)
    # its checks compare, [] when they cannot be told; whether forward runs on copies.
    imports: list[str] = field(default_factory=list)
    returned: list[int] | None = None
    compared: list[int | str] = field(default_factory=list)
    copies: bool = False


CASE = "CASE"
FORBIDDEN_IN_INPUTS = (ast.Return, ast.Continue, ast.Break, ast.Yield, ast.Global, ast.Nonlocal)


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    return {a.asname or a.name.split(".")[0] for a in node.names}


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def _defaults(func: ast.FunctionDef) -> dict[str, ast.expr]:
    names = [a.arg for a in func.args.args][len(func.args.args) - len(func.args.defaults) :]
    return dict(zip(names, func.args.defaults, strict=True))


def _needed(before: list[ast.stmt], call: ast.Call) -> list[ast.stmt]:
    """The statements the call's arguments depend on (a reference computed beforehand is not)."""
    needed = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
    kept: list[ast.stmt] = []
    for stmt in reversed(before):
        if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            written = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            written = {a.asname or a.name.split(".")[0] for a in stmt.names}
        else:
            written = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        if written & needed:
            kept.append(stmt)
            needed |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    return kept[::-1]


def _helpers(
    names: list[str],
    top: dict[str, ast.stmt],
    entries: dict[str, str] | None = None,
    provided: frozenset[str] | set[str] = frozenset(),
    renames: dict[str, str] | None = None,
) -> list[str]:
    """The harness's own functions and constants the inputs need, in the harness's order."""
    wanted: list[str] = []
    queue = list(dict.fromkeys(names))
    while queue:
        name = queue.pop(0)
        if name in wanted:
            continue
        node = top.get(name)
        if node is None:
            if hasattr(builtins, name):
                continue
            raise NotImportable(f"inputs use {name!r}, which the harness does not define")
        text = ast.unparse(node)
        calls = r"\bmod\b|load_module" + "".join(rf"|\b{re.escape(e)}\b" for e in entries or {})
        if re.search(calls, text) and isinstance(node, ast.FunctionDef):
            raise NotImportable(f"inputs use the harness's {name!r}, which calls the kernel")
        wanted.append(name)
        bound = _bound_names(node)
        queue += [
            n.id
            for n in ast.walk(node)
            if isinstance(n, ast.Name)
            and n.id not in bound
            and n.id not in SAFE_NAMES
            and n.id not in provided
        ]
    order = list(top)
    return [_strip_seeds(top[n], bool(entries), renames) for n in sorted(wanted, key=order.index)]


def _bound_names(node: ast.stmt) -> set[str]:
    bound = {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    bound |= {
        a.arg
        for n in ast.walk(node)
        if isinstance(n, ast.arguments)
        for a in [*n.args, *n.kwonlyargs, *n.posonlyargs, *filter(None, [n.vararg, n.kwarg])]
    }
    bound |= {
        a.asname or a.name.split(".")[0]
        for n in ast.walk(node)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    bound |= {n.name for n in ast.walk(node) if isinstance(n, ast.FunctionDef)}
    return bound | (_assigned(node) if isinstance(node, ast.Assign) else set())


class _SeedStripper(ast.NodeTransformer):
    """The grader seeds every case itself: a harness's manual_seed would make them all one."""

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        if isinstance(node.value, ast.Call) and ast.unparse(node.value.func).endswith(
            "manual_seed"
        ):
            return ast.Pass()
        return node


class _Retarget(ast.NodeTransformer):
    """Tensors a harness puts on "cuda" go to the grader's device (the CPU under the
    interpreter, a GPU otherwise)."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if node.value == "cuda":
            return ast.parse("_torch.get_default_device()", mode="eval").body
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" and not node.args:
            node.func.attr = "to"
            node.args = [ast.parse("_torch.get_default_device()", mode="eval").body]
        return node


class _Unmod(ast.NodeTransformer):
    """A runner reaches the kernel's names through `mod.<name>`; in our module they are the
    module's own. The harness's names that the kernel also defines are renamed (`renames`), so
    the harness's helper never replaces the kernel's function."""

    def __init__(self, renames: dict[str, str]) -> None:
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.renames.get(node.id, node.id)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.name = self.renames.get(node.name, node.name)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if _name(node.value) == "mod":
            return ast.copy_location(ast.Name(node.attr, node.ctx), node)
        self.generic_visit(node)
        return node


def _strip_seeds(
    node: ast.stmt, retarget: bool = False, renames: dict[str, str] | None = None
) -> str:
    node = _SeedStripper().visit(copy.deepcopy(node))
    if renames is not None:
        node = _Unmod(renames).visit(node)
    return ast.unparse(_Retarget().visit(node) if retarget else node)


def _assigned(stmt: ast.stmt) -> set[str]:
    if not isinstance(stmt, ast.Assign):
        return set()
    return {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _all_assigned(stmts: list[ast.stmt]) -> set[str]:
    return {name for s in stmts for name in _assigned(s)}


def _simple(stmt: ast.stmt) -> dict[str, str]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ast.Name):
            return {target.id: ast.unparse(value)}
        if (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
        ):
            return {
                t.id: ast.unparse(v)
                for t, v in zip(target.elts, value.elts, strict=True)
                if isinstance(t, ast.Name)
            }
    return {}


def _dtype_name(expr: str, env: dict[str, str]) -> str:
    expr = env.get(expr, expr)
    return expr.removeprefix("torch.")


def _constant_dtypes(stmts: list[ast.stmt], top: dict[str, ast.stmt]) -> list[str]:
    """The harness constants the statements pass that name a torch dtype (`DTYPE`)."""
    found = []
    for n in (n for s in stmts for n in ast.walk(s)):
        source = top.get(n.id) if isinstance(n, ast.Name) else None
        if isinstance(source, ast.Assign) and ast.unparse(source.value).startswith("torch."):
            found.append(ast.unparse(source.value))
    return found


def _dtype(env: dict[str, str], before: list[ast.stmt], extra: list[str] | None = None) -> str:
    names = [env["dtype"]] if "dtype" in env else []
    names += extra or []
    names += [
        ast.unparse(k.value)
        for s in before
        for n in ast.walk(s)
        if isinstance(n, ast.Call)
        for k in n.keywords
        if k.arg == "dtype"
    ]
    for name in names:
        dtype = _dtype_name(name, env)
        if dtype in {"float16", "bfloat16", "float32", "float8_e4m3fn"}:
            return dtype
    for name in names:
        dtype = _dtype_name(name, env)
        if dtype in {"int8", "int32", "int64"}:
            return dtype
    return "float32"


def _bytes(
    before: list[ast.stmt], args: list[ast.expr], env: dict[str, str], dims: set[str]
) -> str:
    """The inputs' bytes, each read once, as a formula over the dimensions; "0" where a size
    is not arithmetic over them (the manifest then says partial_reads)."""
    local: dict[str, str] = {}
    terms = []
    passed = {ast.unparse(a) for a in args}
    for stmt in before:
        simple = _simple(stmt)
        for name, expr in simple.items():
            sub = _substitute(expr, local)
            if sub is not None and _arithmetic(sub, dims):
                local[name] = f"({sub})"
        if not simple or next(iter(simple)) not in passed:
            continue
        factory = next(
            (
                n
                for n in ast.walk(stmt.value)  # type: ignore[attr-defined]
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr in FACTORIES
            ),
            None,
        )
        if factory is None:
            continue
        size = _factory_size(factory, local, dims)
        if size is None:
            continue
        dtype = next((ast.unparse(k.value) for k in factory.keywords if k.arg == "dtype"), "")
        default = 8 if factory.func.attr in {"randint", "randperm", "arange"} else 4  # type: ignore[attr-defined]
        width = ELEMENT_BYTES.get(_dtype_name(dtype, env), default) if dtype else default
        terms.append(f"{width} * {size}")
    return " + ".join(terms) or "0"


def _factory_size(call: ast.Call, local: dict[str, str], dims: set[str]) -> str | None:
    kind = call.func.attr  # type: ignore[attr-defined]
    if kind in {"randint"}:
        sizes = call.args[2:3] if len(call.args) >= 3 else call.args[1:2]
    elif kind in {"full"}:
        sizes = call.args[:1]
    elif kind in {"randperm", "arange"}:
        sizes = call.args[-1:]
    else:
        sizes = call.args
    if len(sizes) == 1 and isinstance(sizes[0], ast.Tuple | ast.List):
        sizes = sizes[0].elts
    if not sizes:
        return None
    parts = [_substitute(ast.unparse(s), local) for s in sizes]
    if any(p is None or not _arithmetic(p, dims) for p in parts):
        return None
    return " * ".join(
        f"({p})" if not re.fullmatch(r"\w+|\([^()]*\)", str(p)) else str(p) for p in parts
    )


def _substitute(expr: str, local: dict[str, str]) -> str | None:
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: local.get(m.group(0), m.group(0)), expr)


def _arithmetic(expr: str, dims: set[str]) -> bool:
    names = set(re.findall(r"\b[A-Za-z_]\w*\b", expr))
    return names <= dims and re.fullmatch(r"[\w\s+\-*/%()]+", expr) is not None


def _tolerance(
    body: list[ast.stmt],
    checks: tuple[str, ...] = ("allclose",),
    names: dict[str, ast.expr] | None = None,
    loosest: bool = False,
) -> dict[str, float]:
    """The first check's atol and rtol; with loosest, the largest of every check's (one
    tolerance covers all of a task's outputs)."""
    names = names or {}
    every = []
    for node in (n for s in body for n in ast.walk(s)):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(checks):
            found = {}
            for k in node.keywords:
                if k.arg in {"atol", "rtol"}:
                    value = names.get(_name(k.value), k.value)
                    with contextlib.suppress(ValueError):
                        found[k.arg] = float(ast.literal_eval(value))
            if len(found) == 2 and not loosest:
                return found
            if len(found) == 2:
                every.append(found)
    if not every:
        return {}
    return {key: max(f[key] for f in every) for key in ("atol", "rtol")}


CHECKS = ("assert_close", "allclose", "assert_allclose", "assert_equal", "equal")


def _base(node: ast.expr) -> str:
    """`out` of `out`, `out.cpu().numpy()` or `out[0:n]`."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return _name(node)


def _check_call(stmt: ast.stmt) -> ast.Call | None:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(CHECKS):
            return node
    return None


def _checked_outputs(
    launch: ast.stmt, after: list[ast.stmt], buffers: set[str], in_place: bool = True
) -> list[str]:
    """The tensors the launch wrote that the test's first check reads: its results and the
    buffers it was given to fill (or, where the check compares neither and in_place allows,
    the arguments it compares)."""
    call = getattr(launch, "value", None)
    assert isinstance(call, ast.Call)
    targets = getattr(launch, "targets", [])
    passed = {_name(a) for a in [*call.args, *(k.value for k in call.keywords)]} - {""}
    written = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    derived = {n: n for n in written | (passed & buffers)}
    for stmt in after:
        check = _check_call(stmt) or (stmt if isinstance(stmt, ast.Assert) else None)
        if check is not None:
            names = [n.id for n in ast.walk(check) if isinstance(n, ast.Name)]
            compared = [_base(a) for a in getattr(check, "args", [])]
            read = [derived[n] for n in names if n in derived]
            read = read or [n for n in compared if n in passed and in_place]
            if read:
                return list(dict.fromkeys(read))
            break
        if isinstance(stmt, ast.Assign):
            # `out_cpu = out.cpu()` still reads the kernel's output; `ref = x + y` does not.
            sources = [
                derived[n.id]
                for n in ast.walk(stmt.value)
                if isinstance(n, ast.Name) and n.id in derived
            ]
            for name in _assigned(stmt):
                if len(sources) == 1:
                    derived[name] = sources[0]
                else:
                    derived.pop(name, None)
    raise NotImportable(f"the check after line {launch.lineno} reads nothing the kernel wrote")
