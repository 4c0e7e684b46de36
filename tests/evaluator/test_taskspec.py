from pathlib import Path

import pytest

from evaluator.engine.taskspec import TaskError, load_task

VALID = """
slug = "t"
title = "T"
category = "torch2triton"
backends = ["triton"]
dtype = "float32"
regime = "memory"
flops = "N"
bytes = "8 * N"
visible_shapes = [{ N = 1024 }, { N = 2048 }, { N = 4096 }]
"""


def write_task(folder: Path, manifest: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.toml").write_text(manifest)
    (folder / "reference.py").write_text("N = 1\nclass Model: pass\n")
    return folder


def test_loads_a_valid_folder_with_a_stable_version_hash(tmp_path):
    folder = write_task(tmp_path / "suite" / "t", VALID)
    first, second = load_task(folder), load_task(folder)
    assert first.slug == "t" and first.suite == "suite"
    assert first.visible_shapes == ({"N": 1024}, {"N": 2048}, {"N": 4096})
    assert first.version_hash == second.version_hash
    (folder / "reference.py").write_text("N = 2\nclass Model: pass\n")
    assert load_task(folder).version_hash != first.version_hash


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('category = "torch2triton"', 'category = "torch2rust"'), "field 'category'"),
        (('bytes = "8 * N"', 'bytes = "8 * K"'), "field 'bytes': unknown dimension(s) K"),
        (('flops = "N"', 'flops = "__import__(1)"'), "field 'flops'"),
        (("{ N = 2048 }", "{ N = -1 }"), "field 'visible_shapes[1].N': must be positive"),
        (("{ N = 4096 }", "{ M = 4096 }"), "names different dimensions"),
        (('dtype = "float32"', ""), "field 'dtype'"),
    ],
)
def test_errors_name_the_file_and_the_field(tmp_path, change, message):
    folder = write_task(tmp_path / "suite" / "t", VALID.replace(*change))
    with pytest.raises(TaskError) as caught:
        load_task(folder)
    assert str(folder / "task.toml") in str(caught.value)
    assert message in str(caught.value)


def test_reads_a_raw_kernelbench_problem_with_its_constants_as_the_shape(tmp_path):
    problem = tmp_path / "19_ReLU.py"
    problem.write_text(
        "import torch\nbatch_size = 16\ndim = 16384\n"
        "class Model(torch.nn.Module):\n    def forward(self, x): return torch.relu(x)\n"
        "def get_inputs(): return [torch.randn(batch_size, dim)]\n"
        "def get_init_inputs(): return []\n"
    )
    spec = load_task(problem)
    assert spec.visible_shapes == ({"batch_size": 16, "dim": 16384},)
    assert spec.slug == "kernelbench/19_ReLU"


def test_kernelbench_file_without_get_inputs_is_refused(tmp_path):
    problem = tmp_path / "bad.py"
    problem.write_text("class Model: pass\ndef get_init_inputs(): return []\n")
    with pytest.raises(TaskError, match="must define get_inputs"):
        load_task(problem)
