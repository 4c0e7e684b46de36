"""The generated reference.py and starter/solution.py: the pristine kernel, with a Model (or
ModelNew) whose forward calls the entry on copies of the harness's inputs."""

import ast
import re

from tasks.importers.agentkernelarena.harness import CASE, _Harness

# Inputs written one element at a time this many Python loops deep take minutes to draw on a
# GPU (each element is a device write of its own), and the grader draws inputs for every case
# in two processes.
ELEMENTWISE_LOOP_DEPTH = 4


def _elementwise_inputs(reference: str) -> str:
    """Why get_inputs() (or a function of the module it calls) is too slow to draw for every
    case: it assigns tensor elements inside ELEMENTWISE_LOOP_DEPTH nested loops; "" otherwise."""
    tree = ast.parse(reference)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    todo, seen = ["get_inputs"], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        line = _deep_store(functions[name].body, 0)
        if line:
            return (
                f"inputs built element by element in {ELEMENTWISE_LOOP_DEPTH} or more nested "
                f"Python loops ({name}, line {line}): too slow to draw for every case"
            )
        todo += [
            call.func.id
            for call in ast.walk(functions[name])
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
        ]
    return ""


def _deep_store(body: list[ast.stmt], depth: int) -> int:
    """The line of the first assignment to a subscript at least ELEMENTWISE_LOOP_DEPTH loops
    deep in body, 0 if none."""
    for stmt in body:
        if isinstance(stmt, (ast.For, ast.While)):
            line = _deep_store(stmt.body, depth + 1)
        elif isinstance(stmt, (ast.Assign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            deep = depth >= ELEMENTWISE_LOOP_DEPTH
            line = stmt.lineno if deep and any(isinstance(t, ast.Subscript) for t in targets) else 0
        else:
            blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
            line = next(
                (n for b in blocks if isinstance(b, list) for n in [_deep_store(b, depth)] if n), 0
            )
        if line:
            return line
    return 0


# ---- generated files ---------------------------------------------------------------------------

COMPARED = """def _compared(out, args, kwargs, parts, written):
    # What the harness compares: the parts of the entry's result (all of it when parts is
    # None; without its None and non-tensor members) and the arguments it wrote that the
    # harness checks (every tensor argument when the entry returns nothing and the checks
    # name none).
    if out is None:
        items = [] if written else [*args, *kwargs.values()]
    elif isinstance(out, (tuple, list)):
        items = list(out) if parts is None else [out[i] for i in parts]
    else:
        items = [out]
    items += [kwargs[w] if isinstance(w, str) else args[w] for w in written]
    items = [a for a in items if isinstance(a, _torch.Tensor)]
    return items[0] if len(items) == 1 and out is not None else tuple(items)


"""


def _reference(kernel: str, harness: _Harness, label: str, cls: str) -> str:
    first = harness.shapes[0]
    columns = []
    for name, values in harness.table.items():
        pick = f"[{CASE} - 1]" if CASE in harness.dims else "[0]"
        columns.append(f"    {name} = {values!r}{pick}")
    returned = ", ".join(harness.args + ([harness.kwargs] if harness.kwargs else []))
    built_by = "the test" if harness.launch else "the harness's run_correctness"
    get_inputs = [
        "def get_inputs():",
        f"    # Built as {built_by} builds them, on the grader's device and",
        "    # with the grader's seeds.",
        "    device = _torch.get_default_device()",
        *columns,
        *[f"    {line}" for s in harness.body for line in s.splitlines()],
        f"    return [{returned}]",
    ]
    forward = ["    def forward(self, *args):"]
    if harness.launch:
        forward += _launch_forward(harness, columns)
    elif harness.kwargs:
        forward.append("        *args, kwargs = args")
    else:
        forward.append("        kwargs = {}")
    if harness.copies:
        forward += [
            "        # The entry writes into its arguments: copies keep the grader's inputs.",
            "        args = [_copy(a) for a in args]",
            "        kwargs = {k: _copy(v) for k, v in kwargs.items()}",
        ]
    forward += (
        []
        if harness.launch
        else [
            f"        out = {harness.entry}(*args, **kwargs)",
            f"        return _compared(out, args, kwargs, {harness.returned!r}, "
            f"{harness.compared!r})",
        ]
    )
    lines = [
        kernel.rstrip(),
        "",
        "",
        f"# ---- {label}: the entry `{harness.entry}` as a KernelBench-style module ----",
        "import torch as _torch  # noqa: E402",
        "import torch.nn as _nn  # noqa: E402",
        *[f"{line}  # noqa: E402" for line in harness.imports],
        "",
        *[f"{dim} = {value}" for dim, value in first.items()],
        "",
        "",
        "def _copy(value):",
        "    return value.clone() if isinstance(value, _torch.Tensor) else value",
        "",
        "",
        *([] if harness.launch else COMPARED.splitlines()),
        *[block + "\n\n" for block in harness.helpers],
        f"class {cls}(_nn.Module):",
        *forward,
        "",
        "",
        *get_inputs,
        "",
        "",
        "def get_init_inputs():",
        "    return []",
    ]
    text = "\n".join(lines) + "\n"
    if not re.search(r"^import torch$", kernel, re.M):
        text = "import torch\n" + text
    return text


def _launch_forward(harness: _Harness, columns: list[str]) -> list[str]:
    unpack = ", ".join(harness.args) + ("," if len(harness.args) == 1 else "")
    returned = ", ".join(harness.returns) + ("," if len(harness.returns) > 1 else "")
    return [
        "        # The test's launch, on copies of the inputs: the kernel writes into them.",
        "        device = _torch.get_default_device()",
        *([f"        {unpack} = [_copy(a) for a in args]"] if harness.args else []),
        *[f"    {c}" for c in columns],
        *[f"        {line}" for s in harness.launch for line in s.splitlines()],
        f"        return {returned}",
    ]
