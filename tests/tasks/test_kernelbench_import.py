"""import_kernelbench on KernelBench-format files written by the test."""

import json

import pytest
from django.core.management import call_command

from evaluator.engine.taskspec import load_task
from tasks.models import Task
from tasks.validation import validate_task

MATMUL = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


N = 256


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [A, B]


def get_init_inputs():
    return []
"""

CONV = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.relu(self.conv(x) + 1.0)


batch_size = 2
in_channels = 3
out_channels = 16
height = width = 32
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
"""

DOWNLOADS = """from transformers import AutoModel
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = AutoModel.from_pretrained("gpt2")

    def forward(self, x):
        return self.m(x)


def get_inputs():
    return []


def get_init_inputs():
    return []
"""


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "KernelBench" / "KernelBench"
    (root / "level1").mkdir(parents=True)
    (root / "level2").mkdir()
    (root / "level4").mkdir()
    (root / "level1" / "1_Square_matrix_multiplication_.py").write_text(MATMUL)
    (root / "level2" / "3_Conv2d_Add_ReLU.py").write_text(CONV)
    (root / "level4" / "1_gpt2.py").write_text(DOWNLOADS)
    return tmp_path / "KernelBench"


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    folder = tmp_path / "catalog"
    folder.mkdir()
    monkeypatch.setenv("ARENA_CATALOG_DIR", str(folder))
    return folder


def test_imports_problems_unchanged_as_suite_kernelbench(db, checkout, catalog, capsys):
    call_command("import_kernelbench", str(checkout))
    out = capsys.readouterr()
    assert "2 written, 0 unchanged, 1 skipped" in out.out
    assert "level4/1_gpt2.py: downloads weights" in out.err
    matmul = Task.objects.get(slug="kernelbench-level1-1-square-matrix-multiplication")
    assert matmul.suite == "kernelbench" and matmul.category == "torch2cuda"
    folder = catalog / "kernelbench" / matmul.slug
    source = checkout / "KernelBench" / "level1" / "1_Square_matrix_multiplication_.py"
    assert (folder / "reference.py").read_text() == source.read_text()
    spec = load_task(folder)
    assert spec.visible_shapes == ({"N": 256},)
    assert spec.regime == "compute" and spec.flops == str(2 * 256**3)
    assert spec.bytes_moved == str(3 * 256 * 256 * 4)
    assert spec.generalization["dims"]["N"]["max"] == 512


def test_reimport_is_idempotent(db, checkout, catalog, capsys):
    call_command("import_kernelbench", str(checkout))
    versions = dict(Task.objects.values_list("slug", "version_hash"))
    call_command("import_kernelbench", str(checkout))
    assert "0 written, 2 unchanged" in capsys.readouterr().out
    assert dict(Task.objects.values_list("slug", "version_hash")) == versions


def test_imported_task_counts_conv_work_and_validates(db, checkout, catalog):
    call_command("import_kernelbench", str(checkout))
    folder = catalog / "kernelbench" / "kernelbench-level2-3-conv2d-add-relu"
    spec = load_task(folder)
    # 2 * N * Cout * Hout * Wout * Cin * k * k, as FlopCounterMode counts a convolution.
    assert spec.flops == str(2 * 2 * 16 * 30 * 30 * 3 * 3 * 3)
    assert set(spec.generalization["fixed"]) >= {"kernel_size"} or (
        spec.generalization["dims"]["kernel_size"]["min"]
        == spec.generalization["dims"]["kernel_size"]["max"]
    )
    report = validate_task(folder, grade_starter=False)
    assert report.ok, report.problems


def test_list_tasks_prints_one_json_object_per_task(db, checkout, catalog, capsys):
    call_command("import_kernelbench", str(checkout))
    capsys.readouterr()
    call_command("list_tasks", "--json")
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 2
    assert {
        "slug",
        "category",
        "backends",
        "dtype",
        "regime",
        "shapes",
        "generalization",
        "sota",
        "version",
    } <= set(rows[0])
