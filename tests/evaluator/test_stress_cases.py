"""A task's stress cases: the first seed of each visible shape rerun with inputs and model state
scaled, in both children, under the case's own absolute tolerance."""

import textwrap
from pathlib import Path

import pytest
import torch

from grader import EvaluateOptions, evaluate, load_task
from grader.cases import (
    Stress,
    StressError,
    cases_for,
    scaled_state,
    state_problems,
    stress_inputs,
)
from grader.child import _judge_stress_state
from grader.taskspec import TaskError

MANIFEST = """
slug = "test-stress-linear"
title = "A bias-free linear layer times a step count"
category = "torch2triton"
backends = ["triton"]
dtype = "float32"
regime = "compute"
flops = "2 * N * D * D"
bytes = "4 * (2 * N * D + D * D)"
visible_shapes = [{ N = 8, D = 16 }, { N = 8, D = 8 }]
tolerance = { atol = 1e-2, rtol = 1e-2 }
"""
STRESS = """
[[stress_cases]]
name = "tiny_x"
input_scales = { "0" = 1e-4 }
tolerance = { atol = 1e-6, rtol = 1e-3 }

[[stress_cases]]
name = "small_weight"
state_scales = { "proj.weight" = 1e-3 }
tolerance = { atol = 1e-6, rtol = 1e-3 }
"""
REFERENCE = """
import torch
import torch.nn as nn

N = 8
D = 16


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d, bias=False)

    def forward(self, x, steps):
        return self.proj(x) * steps


def get_inputs():
    return [torch.randn(N, D), 3]


def get_init_inputs():
    return [D]
"""
HEADER = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
CORRECT = """
class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d, bias=False)

    def forward(self, x, steps):
        return F.linear(x, self.proj.weight) * steps
"""
# Right at the inputs' own scale only, one way per shape: with D = 16 it adds a constant that is
# within the task's tolerance there and far outside it at a thousandth of the scale; with D = 8
# its weight (the same values: the same seeded initialisation) lives under another name.
CHEAT = """
class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.epsilon = 1e-3 if d == 16 else 0.0
        self.w = nn.Parameter(torch.empty(d, d))
        nn.init.kaiming_uniform_(self.w, a=math.sqrt(5))

    def forward(self, x, steps):
        return F.linear(x, self.w) * steps + self.epsilon
"""


def make_task(root: Path, stress: str = STRESS) -> Path:
    folder = root / "suite" / "stress-linear"
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(MANIFEST + stress)
    (folder / "reference.py").write_text(REFERENCE)
    return folder


def grade(tmp_path: Path, solution: str, stress: str = STRESS):
    path = tmp_path / "solution.py"
    path.write_text(HEADER + textwrap.dedent(solution))
    return evaluate(make_task(tmp_path, stress), path, "cpu", EvaluateOptions(timeout_s=120))


def test_correct_solution_passes_every_stress_case(tmp_path):
    result = grade(tmp_path, CORRECT)
    gate = result.gates["correctness"]
    assert gate.passed is True, (gate, result.log[-2000:])
    assert gate.detail["stress_cases"] == ["tiny_x", "small_weight"]
    # Three seeds of the problem's inputs, signed normal inputs, then the two stress cases in
    # place of the generic scaled and outlier distributions.
    assert gate.detail["cases_per_shape"] == 6


def test_solution_right_only_at_nominal_scale_fails_the_stress_cases_by_name(tmp_path):
    result = grade(tmp_path, CHEAT)
    gate = result.gates["correctness"]
    assert result.status == "failed"
    assert gate.passed is False
    assert gate.reason.startswith("incorrect on shape {'N': 8, 'D': 16}: stress case tiny_x: ")
    # The case's atol as written, not one that follows the outputs' scale.
    assert "atol=1e-06 rtol=0.001" in gate.reason
    # A model without the state a case scales fails that case, as upstream's strict
    # load_state_dict fails it.
    assert result.per_shape[1].reason == (
        "stress case small_weight: ModelNew has no parameter or buffer 'proj.weight'"
    )


def test_input_out_of_range_is_the_tasks_error_not_the_solutions(tmp_path):
    stress = '[[stress_cases]]\nname = "far"\ninput_scales = { "2" = 2.0 }\n'
    result = grade(tmp_path, CORRECT, stress)
    assert result.status == "error"
    gate = result.gates["correctness"]
    assert gate.passed is None
    assert gate.reason.startswith("grader error: the task is at fault on shape")
    assert "stress case far: input 2 is out of range (get_inputs() returns 2 values)" in gate.reason
    assert gate.reason.endswith("this is not the solution's failure")


def test_tasks_without_stress_cases_draw_the_cases_they_always_did():
    assert cases_for(seen=True, base_seed=0) == cases_for(seen=True, base_seed=0, stress=())
    stressed = cases_for(seen=True, base_seed=100, stress=["a"])
    assert stressed[-1].to_dict() == {"seed": 100, "distribution": "problem", "stress": "a"}
    assert "stress" not in stressed[0].to_dict()
    assert cases_for(seen=False, base_seed=0, stress=["a"]) == cases_for(seen=False, base_seed=0)


def test_stress_cases_replace_the_generic_scaled_and_outlier_distributions():
    plain = [c.distribution for c in cases_for(seen=True, base_seed=0)]
    assert plain == ["problem", "problem", "problem", "normal", "scaled", "outliers"]
    stressed = cases_for(seen=True, base_seed=0, stress=["small", "large"])
    assert [(c.seed, c.distribution, c.stress) for c in stressed] == [
        (0, "problem", ""),
        (1, "problem", ""),
        (2, "problem", ""),
        (3, "normal", ""),
        (0, "problem", "small"),
        (0, "problem", "large"),
    ]


def stress(**fields) -> Stress:
    return Stress(
        **{"name": "s", "input_scales": {}, "state_scales": {}, "atol": 0, "rtol": 0, **fields}
    )


def test_inputs_scale_as_upstream_does_and_refuse_what_is_not_a_float_tensor():
    x = torch.tensor([1.0, 3.0], dtype=torch.bfloat16)
    scaled = stress_inputs(stress(input_scales={0: 0.5}), [x, 3])
    assert scaled[0].dtype == torch.bfloat16 and scaled[0].tolist() == [0.5, 1.5]
    assert x.tolist() == [1.0, 3.0]
    with pytest.raises(StressError, match="stress case s: input 1 is not a floating-point tensor"):
        stress_inputs(stress(input_scales={1: 2.0}), [x, 3])
    with pytest.raises(StressError, match="input 1 is not a floating-point tensor"):
        stress_inputs(stress(input_scales={1: 2.0}), [x, torch.arange(3)])


def test_state_is_scaled_for_the_case_and_put_back_after():
    model = torch.nn.Linear(4, 4)
    before = model.weight.detach().clone()
    case = stress(state_scales={"weight": 1e-2})
    with scaled_state(case, model):
        assert torch.allclose(model.weight, before * 1e-2)
    assert torch.equal(model.weight, before)


def test_state_the_reference_lacks_is_the_tasks_error():
    case = stress(state_scales={"proj.weight": 2.0})
    assert state_problems(case, torch.nn.Linear(4, 4)) == [
        "has no parameter or buffer 'proj.weight'"
    ]
    with pytest.raises(StressError, match="stress case s: the reference's Model has no parameter"):
        _judge_stress_state(case, torch.nn.Linear(4, 4))
    embedding = torch.nn.Module()
    embedding.register_buffer("ids", torch.arange(3))
    assert state_problems(stress(state_scales={"ids": 2.0}), embedding) == [
        "holds 'ids' as torch.int64, not floating point"
    ]


def test_stress_cases_are_read_from_the_manifest(tmp_path):
    spec = load_task(make_task(tmp_path))
    tiny, weight = spec.stress_cases
    assert (tiny.name, tiny.input_scales, tiny.state_scales) == ("tiny_x", {0: 1e-4}, {})
    assert tiny.tolerance == {"atol": 1e-6, "rtol": 1e-3}
    assert weight.state_scales == {"proj.weight": 1e-3}
    assert spec.to_dict()["stress_cases"][0]["input_scales"] == {"0": 1e-4}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'name = "a"\ninput_scales = { "0" = 2.0 }\nfactor = 2',
            "stress_cases[0].factor': unknown key",
        ),
        ('name = "a"\ninput_scales = { "0" = 0.0 }', "input_scales.0': must be a positive finite"),
        ('name = "a"\ninput_scales = { "0" = -1.0 }', "input_scales.0': must be a positive finite"),
        ('name = "a"\ninput_scales = { "0" = inf }', "input_scales.0': must be a positive finite"),
        ('name = "a"\ninput_scales = { "0" = nan }', "input_scales.0': must be a positive finite"),
        ('name = "a"\ninput_scales = { "0" = "2" }', "input_scales.0': must be a positive finite"),
        ('name = "a"\ninput_scales = { x = 2.0 }', "input_scales.x': must be an input position"),
        ('name = "a"\nstate_scales = { proj.weight = 2.0 }', "a dotted name must be quoted"),
        ('name = "a"\nstate_scales = { w = 0 }', "state_scales.w': must be a positive finite"),
        ('input_scales = { "0" = 2.0 }', "stress_cases[0].name'"),
        ('name = "a b"\ninput_scales = { "0" = 2.0 }', "stress_cases[0].name'"),
        ('name = "a"', "scales nothing"),
        ('name = "a"\ninput_scales = { "0" = 2.0 }\ntolerance = { eps = 1 }', "tolerance.eps'"),
        ('name = "a"\ninput_scales = { "0" = 2.0 }\ntolerance = { atol = -1 }', "tolerance.atol'"),
    ],
)
def test_bad_stress_cases_are_task_errors_naming_the_field(tmp_path, table, message):
    folder = make_task(tmp_path, f"\n[[stress_cases]]\n{table}\n")
    with pytest.raises(TaskError) as caught:
        load_task(folder)
    assert str(folder / "task.toml") in str(caught.value)
    assert message in str(caught.value)


def test_stress_case_names_are_unique(tmp_path):
    twice = '[[stress_cases]]\nname = "a"\ninput_scales = { "0" = 2.0 }\n' * 2
    with pytest.raises(TaskError, match="name 'a' is used more than once"):
        load_task(make_task(tmp_path, twice))
