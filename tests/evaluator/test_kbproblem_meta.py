"""Problems that move their tensors to the GPU themselves are analysed on the meta device."""

import textwrap

from evaluator.engine.taskspec import load_task

MOVES_ITS_TENSORS = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8).cuda()

    def forward(self, a, b):
        return self.proj(a) + b.cpu().to(a)


batch = 16


def get_inputs():
    a = torch.randn(batch, 8).cuda()
    b = torch.randn(batch, 8).to("cuda", torch.float16)
    return [a, b]


def get_init_inputs():
    return []
"""


def test_cuda_calls_in_a_problem_keep_its_tensors_on_the_meta_device(tmp_path):
    problem = tmp_path / "moves_its_tensors.py"
    problem.write_text(textwrap.dedent(MOVES_ITS_TENSORS))
    spec = load_task(problem)
    assert spec.visible_shapes == ({"batch": 16},)
    assert spec.generalization["dims"]["batch"]["min"] == 4
