"""Problems that move their tensors to the GPU themselves, and recurrent networks, are analysed
on the meta device."""

import json
import textwrap
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from grader.kbproblem import on_meta
from grader.taskspec import load_task
from tests.processes import fresh_interpreter

KB_TASKS = Path(__file__).parent / "tasks"

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


@pytest.mark.parametrize(
    ("layer", "shape"),
    [
        (lambda: torch.nn.LSTM(16, 24, 3, batch_first=True, bidirectional=True), (4, 9, 16)),
        (lambda: torch.nn.LSTM(12, 20, 2, proj_size=8), (7, 3, 12)),
        (lambda: torch.nn.GRU(10, 14, 2, bidirectional=True), (5, 2, 10)),
        (lambda: torch.nn.RNN(6, 8, 2, batch_first=True, nonlinearity="relu"), (3, 4, 6)),
    ],
)
def test_recurrent_layers_on_meta_get_their_shapes_and_flops_without_unrolling(layer, shape):
    with torch.device("meta"):
        model, x = layer().to("meta"), torch.randn(shape)
        unrolled = FlopCounterMode(display=False)
        with unrolled:
            expected = model(x)
    with on_meta() as meta:
        counter = FlopCounterMode(display=False)
        with counter:
            got = model(x)
    assert counter.get_total_flops() == 0  # nothing was unrolled
    assert meta.recurrent_flops == unrolled.get_total_flops() > 0

    def shapes(result):
        states = result[1] if isinstance(result[1], tuple) else (result[1],)
        return [tuple(t.shape) for t in (result[0], *states)]

    assert shapes(got) == shapes(expected)


def test_the_meta_device_analysis_leaves_the_compiler_unimported_and_restores_torch():
    # Meta tensors' Python kernels and dispatch modes (the FLOP counter) are wrapped by
    # torch._disable_dynamo, whose first call imports torch._dynamo: seconds on a GPU host.
    # The analysis, a drawn shape's footprint and the work count run without it, with the
    # same answers, and every wrapper is as torch made it afterwards.
    code = textwrap.dedent(
        f"""
        import gc, json, sys, types
        from pathlib import Path
        import torch
        from grader.compiler_off import _KEPT, _functions, compiler_off
        from grader.kbproblem import analyse_problem, count_work, parse_problem, runs_on_meta
        gc.freeze()  # as a prepared child does after its imports: the wrappers are still found
        path = Path({str(KB_TASKS / "kb_gemm_epilogue.py")!r})
        analysis = analyse_problem(path, parse_problem(path))
        work = count_work(path, parse_problem(path))
        with compiler_off():
            with compiler_off():  # nested: taken back once, by the outermost
                pass
            inner = [getattr(f, _KEPT, None) is f for f in _functions()]
        print(json.dumps({{
            "compiler": [m for m in ("torch._dynamo", "torch._inductor") if m in sys.modules],
            "wrappers": len(_functions()),
            "given_inside": all(inner),
            "kept_after": sum(getattr(f, _KEPT, None) is not None for f in _functions()),
            "shape": analysis.shape,
            "flops": work["flops"],
            "runs": runs_on_meta(path, analysis.shape),
            "frozen": gc.get_freeze_count() > 0,
        }}))
        """
    )
    report = json.loads(fresh_interpreter(code)[-1])
    assert report["compiler"] == []
    assert report["wrappers"] > 100  # torch's references and dispatch modes, all found
    assert report["given_inside"] is True
    assert report["kept_after"] == 0
    assert report["runs"] is True
    assert report["frozen"] is True  # set aside again after the search
    assert report["shape"] == {"batch_size": 64, "in_features": 256}
    assert report["flops"] == 2 * 64 * 256 * 128  # the GEMM's, seen by the FLOP counter's mode
