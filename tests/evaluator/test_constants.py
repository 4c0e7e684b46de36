"""Module constants of problem files, and re-executing a source with some of them replaced."""

import ast
from pathlib import Path

from grader.constants import base_int_constants, module_constants
from grader.modules import apply_shape, load_module, set_constants

SOURCE = """
import torch
N = 2048 * 2
M = N // 4
height = width = 32
rows, cols = 3, 5
padding = 0
dim = -1
eps = 1e-5
bias = False
shape = (M, 1, 1)
sizes = [N, 2 ** 3]
config = dict(a=1)
"""


def test_constants_are_literals_arithmetic_tuples_and_flags():
    constants = module_constants(ast.parse(SOURCE))
    values = {name: c.value for name, c in constants.items()}
    assert values == {
        "N": 4096,
        "M": 1024,
        "height": 32,
        "width": 32,
        "rows": 3,
        "cols": 5,
        "padding": 0,
        "dim": -1,
        "eps": 1e-5,
        "bias": False,
        "shape": (1024, 1, 1),
        "sizes": [4096, 8],
    }
    # Candidates for dimensions: positive ints computed from literals alone.
    assert base_int_constants(ast.parse(SOURCE)) == {
        "N": 4096,
        "height": 32,
        "width": 32,
        "rows": 3,
        "cols": 5,
    }


def test_apply_shape_reexecutes_so_derived_constants_follow(tmp_path: Path):
    path = tmp_path / "problem.py"
    path.write_text(SOURCE)
    module = load_module(path, "constants_problem")
    apply_shape(module, {"N": 64, "width": 7})
    assert (module.M, module.shape, module.sizes) == (16, (16, 1, 1), [64, 8])
    assert (module.height, module.width) == (32, 7)
    apply_shape(module, {"N": 4096})
    assert module.width == 32 and module.shape == (1024, 1, 1)
    set_constants(module, {"N": 8})
    assert module.N == 8 and module.M == 1024  # set, not re-executed
