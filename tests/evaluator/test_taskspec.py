from pathlib import Path

import pytest

from grader.taskspec import TaskError, load_task

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


RULES = """
[generalization]
relations = ["N % 512 == 0"]

[generalization.N]
min = 512
max = 65536
multiple_of = 256
"""


def test_reads_generalization_rules_into_the_spec_and_its_dict(tmp_path):
    spec = load_task(write_task(tmp_path / "suite" / "t", VALID + RULES))
    rule = {"min": 512, "max": 65536, "multiple_of": 256, "power_of_two": False, "cpu_max": 4096}
    assert spec.generalization == {"dims": {"N": rule}, "relations": ["N % 512 == 0"], "fixed": []}
    assert spec.to_dict()["generalization"] == spec.generalization


def test_a_task_without_generalization_rules_is_valid(tmp_path):
    spec = load_task(write_task(tmp_path / "suite" / "t", VALID))
    assert spec.generalization == {}
    assert spec.to_dict()["generalization"] == {}


def test_the_catalogue_silu_task_has_rules_for_n():
    silu = load_task(Path(__file__).resolve().parents[2] / "tasks" / "catalog" / "core" / "silu")
    assert silu.generalization["dims"]["N"]["max"] == 268435456
    assert silu.generalization["dims"]["N"]["cpu_max"] == 300000


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("[generalization.N]", "[generalization.Q]"), "field 'generalization.Q': no visible"),
        (("[generalization.N]", "[generalization.N]\nstep = 2"), "field 'generalization.N.step'"),
        (("min = 512", "min = 100000"), "field 'generalization.N.max': 65536 is below min"),
        (("min = 512", "min = 0"), "field 'generalization.N.min': must be a positive integer"),
        (("min = 512", "min = 2048"), "field 'generalization.N.min': visible_shapes[0] has N"),
        (("max = 65536", "max = 2048"), "field 'generalization.N.max': visible_shapes[2] has N"),
        (("max = 65536", 'max = "big"'), "field 'generalization.N.max'"),
        (("multiple_of = 256", "multiple_of = 3"), "field 'generalization.N.multiple_of'"),
        (
            ("multiple_of = 256", "multiple_of = 131072"),
            "field 'generalization.N.multiple_of': no value in 512..65536",
        ),
        (
            ("max = 65536", "max = 65536\npower_of_two = 1"),
            "field 'generalization.N.power_of_two': must be true or false",
        ),
        (("max = 65536", "max = 65536\ncpu_max = 99999999"), "field 'generalization.N.cpu_max'"),
        (('"N % 512 == 0"', '"K % 512 == 0"'), "field 'generalization.relations[0]': unknown"),
        (('"N % 512 == 0"', '"N % 3 == 0"'), "relations[0]': visible_shapes[0] does not"),
        (('"N % 512 == 0"', "\"__import__('os') == 0\""), "field 'generalization.relations[0]'"),
        (('"N % 512 == 0"', '"N + 1"'), "field 'generalization.relations[0]': "),
        (('["N % 512 == 0"]', '"N > 1"'), "field 'generalization.relations': must be a list"),
    ],
)
def test_generalization_errors_name_the_file_and_the_field(tmp_path, change, message):
    folder = write_task(tmp_path / "suite" / "t", (VALID + RULES).replace(*change))
    with pytest.raises(TaskError) as caught:
        load_task(folder)
    assert str(folder / "task.toml") in str(caught.value)
    assert message in str(caught.value)


def test_every_visible_dimension_needs_a_rule(tmp_path):
    manifest = VALID.replace("{ N = 1024 }, { N = 2048 }, { N = 4096 }", "{ N = 1024, B = 2 }")
    folder = write_task(tmp_path / "suite" / "t", manifest + RULES)
    with pytest.raises(TaskError, match=r"field 'generalization\.B': missing"):
        load_task(folder)


def test_cpu_shapes_must_follow_the_rules_and_fit_under_cpu_max(tmp_path):
    with_cpu = VALID + "cpu_shapes = [{ N = 768 }, { N = 1000 }]\n"
    folder = write_task(tmp_path / "suite" / "t", with_cpu + RULES)
    with pytest.raises(TaskError, match=r"cpu_shapes\[1\] has N = 1000, not a multiple"):
        load_task(folder)
    with_cpu = VALID + "cpu_shapes = [{ N = 1024 }]\n"
    rules = RULES.replace("max = 65536", "max = 65536\ncpu_max = 768")
    folder = write_task(tmp_path / "suite" / "u", with_cpu + rules)
    with pytest.raises(TaskError, match=r"field 'generalization\.N\.cpu_max': 768 is below"):
        load_task(folder)


def test_rules_that_pin_every_dimension_are_refused(tmp_path):
    manifest = VALID.replace("{ N = 1024 }, { N = 2048 }, { N = 4096 }", "{ N = 1024 }")
    rules = "[generalization.N]\nmin = 1024\nmax = 1024\n"
    folder = write_task(tmp_path / "suite" / "t", manifest + rules)
    with pytest.raises(TaskError, match="field 'generalization': every dimension is pinned"):
        load_task(folder)


def test_kernelbench_problem_gets_rules_from_its_constants(tmp_path):
    problem = tmp_path / "19_ReLU.py"
    problem.write_text(
        "import torch\nbatch_size = 16\ndim = 16384\n"
        "class Model(torch.nn.Module):\n    def forward(self, x): return torch.relu(x)\n"
        "def get_inputs(): return [torch.randn(batch_size, dim)]\n"
        "def get_init_inputs(): return []\n"
    )
    rules = load_task(problem).generalization
    assert rules["dims"]["dim"]["min"] == 4096 and rules["dims"]["dim"]["max"] == 32768
    assert rules["fixed"] == []
