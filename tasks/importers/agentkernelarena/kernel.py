"""What the kernel source itself rules out: constructs only AMD GPUs accept, results cached
across calls."""

import ast
import re

from tasks.importers.agentkernelarena.harness import _assigned, _name

# Kernel constructs that only AMD's Triton backend accepts.
AMD_ONLY = {
    "tl.extra.hip": "uses tl.extra.hip (AMD intrinsics)",
    "waves_per_eu": "uses waves_per_eu (an AMD-only launch option)",
    "matrix_instr_nonkdim": "uses matrix_instr_nonkdim (an AMD-only launch option)",
    # Torch offers this dtype on NVIDIA too, so a kernel that picks it when torch has it hands
    # Triton fp8e4b8, which only AMD GPUs support.
    "torch.float8_e4m3fnuz": "uses torch.float8_e4m3fnuz (AMD's fp8e4b8)",
}
GUARD = re.compile(r"hip|rocm|amd|gfx", re.IGNORECASE)


def _amd_only(kernel: str) -> str:
    """Why the kernel needs an AMD GPU: an AMD-only construct outside a branch that tests for
    ROCm (`if _is_rocm:` keeps a CUDA path beside it); "" when none."""
    try:
        tree = ast.parse(kernel)
    except SyntaxError:
        return next((why for marker, why in AMD_ONLY.items() if marker in kernel), "")

    def visit(node: ast.AST, guarded: bool) -> str:
        if not guarded:
            text = ""
            if isinstance(node, ast.Attribute | ast.Name):
                text = ast.unparse(node)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            elif isinstance(node, ast.keyword) and node.arg:
                text = node.arg
            for marker, why in AMD_ONLY.items():
                if text == marker or text.startswith(marker + "."):
                    return why
        if isinstance(node, ast.If | ast.IfExp) and GUARD.search(ast.unparse(node.test)):
            found = visit(node.test, guarded)
            # The ROCm branch may use AMD constructs; the other branch must not.
            for child in [node.body] if isinstance(node, ast.IfExp) else node.body:
                found = found or visit(child, True)
            for child in [node.orelse] if isinstance(node, ast.IfExp) else node.orelse:
                found = found or visit(child, guarded)
            return found
        for child in ast.iter_child_nodes(node):
            found = visit(child, guarded)
            if found:
                return found
        return ""

    return visit(tree, False)


def _cached_results(kernel: str) -> str:
    """Why calls of the kernel depend on earlier calls: a module-level dict that a function
    fills with tensors it allocates (a later call overwrites the output an earlier one
    returned) or keys by `data_ptr()` (a new tensor at a freed one's address reads stale
    values); "" when none."""
    try:
        tree = ast.parse(kernel)
    except SyntaxError:
        return ""
    caches = {
        name
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and not node.value.keys
        for name in _assigned(node)
    }
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        text = ast.unparse(func)
        for name in sorted(caches):
            stored = any(
                isinstance(n, ast.Subscript)
                and isinstance(n.ctx, ast.Store)
                and _name(n.value) == name
                for n in ast.walk(func)
            )
            if stored and re.search(r"data_ptr\(|torch\.(empty|zeros)\(", text):
                return (
                    f"keeps tensors in the module-level cache {name!r} ({func.name}): a call's "
                    "result depends on earlier calls"
                )
    return ""
