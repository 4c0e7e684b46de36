"""KernelBench-format problems graded on the CPU with the reference itself as the solution.

Unseen shapes re-execute the reference with its base constants replaced, so derived constants
(bias_shape, input_shape and class targets below num_classes) follow the drawn shape.
"""

from pathlib import Path

import pytest

from grader import EvaluateOptions, evaluate, load_task
from grader.modules import apply_shape, load_module

TREE = Path(__file__).parents[1] / "tasks" / "kernelbench_tree" / "KernelBench"


def reference_as_solution(problem: Path, tmp_path: Path) -> Path:
    solution = tmp_path / "solution.py"
    solution.write_text(problem.read_text() + "\n\nclass ModelNew(Model):\n    pass\n")
    return solution


@pytest.mark.parametrize(
    "problem", ["level2/1_Conv2d_BiasAdd.py", "level1/2_CrossEntropy_classes.py"]
)
def test_reference_passes_on_unseen_shapes_with_derived_constants(problem, tmp_path):
    spec = load_task(TREE / problem)
    solution = reference_as_solution(TREE / problem, tmp_path)
    result = evaluate(spec, solution, "cpu", EvaluateOptions())
    unseen = [row for row in result.per_shape if not row.seen]
    assert unseen and all(row.correct for row in unseen), [r.reason for r in unseen]
    assert any(row.shape != spec.visible_shapes[0] for row in unseen)
    assert result.gates["correctness"].passed is True
    assert result.gates["generalization"].passed is True
    # Torch-only: correct, and flagged for having no kernel of its own.
    assert result.status == "passed"
    assert "no_own_kernel" in {flag.code for flag in result.flags}


def test_problem_with_nothing_to_vary_says_so_in_the_gate(tmp_path):
    problem = TREE / "level1/3_No_constants.py"
    spec = load_task(problem)
    result = evaluate(spec, reference_as_solution(problem, tmp_path), "cpu", EvaluateOptions())
    gate = result.gates["generalization"]
    assert gate.passed is None
    assert gate.reason.startswith("no unseen shapes: the problem has nothing to vary")


def test_apply_shape_recomputes_derived_constants():
    module = load_module(TREE / "level2/1_Conv2d_BiasAdd.py", "kb_conv_bias")
    apply_shape(module, {"batch_size": 3, "in_channels": 4, "height": 5, "width": 6})
    assert module.bias_shape == (8, 1, 1) and module.height == 5 and module.width == 6
    classes = load_module(TREE / "level1/2_CrossEntropy_classes.py", "kb_classes")
    apply_shape(classes, {"batch_size": 64, "num_classes": 3})
    assert classes.input_shape == (3,)
    predictions, targets = classes.get_inputs()
    assert predictions.shape == (64, 3) and int(targets.max()) < 3


def test_runs_on_meta_tells_shapes_the_reference_cannot_run():
    from grader.kbproblem import runs_on_meta

    problem = TREE / "level2/1_Conv2d_BiasAdd.py"
    assert runs_on_meta(problem, {"height": 4, "width": 16})
    assert not runs_on_meta(problem, {"height": 2})  # below the 3x3 kernel
    linear = TREE / "level2/2_Linear_init_only.py"
    assert not runs_on_meta(linear, {"in_features": 18})  # not divisible by num_groups = 4
