import sys
from pathlib import Path

import pytest

from grader import index_limit
from grader.formulas import formula_evaluate, relation_holds
from grader.generalization import (
    INDEX_LIMIT_ELEMENTS,
    KINDS,
    UNSEEN_SIZE_FACTOR,
    draw_unseen_shapes,
    grading_order,
    hidden_seed_material,
    index_limited,
    kernelbench_rules,
    size_bound_holds,
)
from grader.index_limit import elements_on_meta, run_after_timing, run_after_timing_of
from grader.modules import load_module
from grader.taskspec import TaskSpec, load_task

REPO = Path(__file__).resolve().parents[2]
SEEDS = range(12)

MATMUL = """
slug = "mm"
title = "Matmul"
category = "torch2triton"
backends = ["triton"]
dtype = "float16"
regime = "compute"
flops = "2 * M * N * K"
bytes = "2 * (M * K + K * N + M * N)"
visible_shapes = [{ M = 4096, N = 4096, K = 4096 }, { M = 8192, N = 2048, K = 1024 }]
cpu_shapes = [{ M = 64, N = 64, K = 64 }, { M = 128, N = 32, K = 256 }]

[generalization]
relations = ["K % 64 == 0", "M <= 4 * N"]

[generalization.M]
min = 1
max = 16384

[generalization.N]
min = 16
max = 16384
multiple_of = 16

[generalization.K]
min = 64
max = 8192
"""

ROWS = """
slug = "rows"
title = "Row-wise"
category = "torch2triton"
backends = ["triton"]
dtype = "float32"
regime = "memory"
flops = "B * D"
bytes = "8 * B * D"
visible_shapes = [{ B = 16, D = 1024 }, { B = 33, D = 512 }]

[generalization.B]
min = 1
max = 256
cpu_max = 64

[generalization.D]
min = 8
max = 8192
"""


# Each relation holds for about one random shape in 7 or 97, so draws must be repaired.
HARD = """
slug = "hard"
title = "Hard relations"
category = "torch2triton"
backends = ["triton"]
dtype = "float32"
regime = "memory"
flops = "M * N"
bytes = "4 * (M + N)"
visible_shapes = [{ M = 970, N = 6 }, { M = 194, N = 5 }]

[generalization]
relations = ["(M + N) % 7 == 3", "M % 97 == 0"]

[generalization.M]
min = 1
max = 100000
cpu_max = 3000

[generalization.N]
min = 1
max = 100000
cpu_max = 500
"""


def load_manifest(folder: Path, manifest: str) -> TaskSpec:
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(manifest)
    (folder / "reference.py").write_text("M = 1\nclass Model: pass\n")
    return load_task(folder)


@pytest.fixture
def matmul(tmp_path) -> TaskSpec:
    return load_manifest(tmp_path / "suite" / "mm", MATMUL)


@pytest.fixture
def rows(tmp_path) -> TaskSpec:
    return load_manifest(tmp_path / "suite" / "rows", ROWS)


@pytest.fixture
def silu() -> TaskSpec:
    return load_task(REPO / "tasks" / "catalog" / "core" / "silu")


def follows_rules(spec: TaskSpec, shape: dict[str, int], device: str) -> bool:
    for name, rule in spec.generalization["dims"].items():
        value = shape[name]
        high = rule["cpu_max"] if device == "cpu" else rule["max"]
        if not rule["min"] <= value <= high or value % rule["multiple_of"]:
            return False
        if rule["power_of_two"] and value & (value - 1):
            return False
    return all(relation_holds(r, shape) for r in spec.generalization["relations"])


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_draws_one_shape_of_each_kind_in_order(matmul, device):
    drawn = draw_unseen_shapes(matmul, seed=7, device=device)
    assert [u.kind for u in drawn] == list(KINDS)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("seed", SEEDS)
def test_every_draw_satisfies_the_rules_and_relations(matmul, device, seed):
    for unseen in draw_unseen_shapes(matmul, seed=seed, device=device, count=8):
        assert set(unseen.shape) == {"M", "N", "K"}
        assert follows_rules(matmul, unseen.shape, device), unseen


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_relations_that_random_values_rarely_meet_still_hold(tmp_path, device):
    spec = load_manifest(tmp_path / "suite" / "hard", HARD)
    for seed in SEEDS:
        drawn = draw_unseen_shapes(spec, seed=seed, device=device)
        assert len(drawn) == len(KINDS)
        assert all(follows_rules(spec, u.shape, device) for u in drawn)


def test_same_seed_and_device_draw_the_same_shapes(matmul):
    first = draw_unseen_shapes(matmul, seed=42, device="cuda")
    assert first == draw_unseen_shapes(matmul, seed=42, device="cuda")


def test_different_seeds_draw_different_shapes(matmul, silu):
    for spec in (matmul, silu):
        drawn = [
            [u.shape for u in draw_unseen_shapes(spec, seed=seed, device="cuda")] for seed in SEEDS
        ]
        assert len({repr(shapes) for shapes in drawn}) == len(SEEDS)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_no_unseen_shape_is_a_visible_or_cpu_shape_or_repeats(matmul, silu, rows, device):
    for spec in (matmul, silu, rows):
        seen = [*spec.visible_shapes, *spec.cpu_shapes]
        for seed in SEEDS:
            shapes = [u.shape for u in draw_unseen_shapes(spec, seed=seed, device=device, count=9)]
            assert not [s for s in shapes if s in seen]
            assert len({repr(sorted(s.items())) for s in shapes}) == len(shapes)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_misaligned_draws_are_not_multiples_of_8_where_the_rule_allows(silu, rows, device):
    for seed in SEEDS:
        for spec in (silu, rows):
            misaligned = draw_unseen_shapes(spec, seed=seed, device=device)[3]
            assert misaligned.kind == "misaligned"
            assert all(value % 8 for value in misaligned.shape.values()), misaligned


def test_misaligned_keeps_multiple_of_and_power_of_two(tmp_path):
    manifest = ROWS.replace("B = 33", "B = 32").replace(
        "max = 8192", "max = 8192\npower_of_two = true"
    )
    manifest = manifest.replace("max = 256", "max = 256\nmultiple_of = 16")
    spec = load_manifest(tmp_path / "suite" / "rows", manifest)
    for seed in SEEDS:
        shape = draw_unseen_shapes(spec, seed=seed, device="cuda")[3].shape
        assert shape["B"] % 16 == 0 and shape["D"] & (shape["D"] - 1) == 0


def test_cpu_draws_stay_under_cpu_max_and_the_byte_cap(matmul, silu):
    for spec in (matmul, silu):
        cap = 4 * max(formula_evaluate(spec.bytes_moved, s) for s in spec.cpu_shapes)
        bounds = {n: r["cpu_max"] for n, r in spec.generalization["dims"].items()}
        for seed in SEEDS:
            for unseen in draw_unseen_shapes(spec, seed=seed, device="cpu", count=8):
                assert all(unseen.shape[n] <= bounds[n] for n in bounds), unseen
                assert formula_evaluate(spec.bytes_moved, unseen.shape) <= cap, unseen


def test_default_cpu_max_is_four_times_the_largest_cpu_value(matmul):
    dims = matmul.generalization["dims"]
    assert (dims["M"]["cpu_max"], dims["N"]["cpu_max"], dims["K"]["cpu_max"]) == (512, 256, 1024)


def test_each_kind_lands_where_its_name_says(silu):
    for seed in SEEDS:
        cpu = {u.kind: u.shape["N"] for u in draw_unseen_shapes(silu, seed=seed, device="cpu")}
        gpu = {u.kind: u.shape["N"] for u in draw_unseen_shapes(silu, seed=seed, device="cuda")}
        assert cpu["edge"] <= 3 and gpu["edge"] <= 3
        assert 280_000 <= cpu["scale_up"] <= 300_000
        assert 250_000_000 <= gpu["scale_up"] <= 268_435_456
        assert cpu["scale_down"] < 4096 and gpu["scale_down"] < 67_108_864


def test_asymmetric_draws_put_dimensions_far_apart(rows):
    for seed in SEEDS:
        shape = draw_unseen_shapes(rows, seed=seed, device="cuda")[4].shape
        # One dimension near the top of its range, the other within 8x of its own minimum.
        assert (shape["B"] >= 240 and shape["D"] <= 64) or (shape["D"] >= 7680 and shape["B"] <= 8)


def test_extra_draws_are_random_and_count_is_honoured(matmul):
    drawn = draw_unseen_shapes(matmul, seed=3, device="cuda", count=8)
    assert [u.kind for u in drawn] == [*KINDS, "random", "random", "random"]
    assert [u.kind for u in draw_unseen_shapes(matmul, seed=3, device="cuda", count=2)] == [
        "edge",
        "scale_up",
    ]
    assert draw_unseen_shapes(matmul, seed=3, device="cuda", count=0) == []


def test_a_task_without_rules_has_no_unseen_shapes(tmp_path):
    manifest = ROWS.split("[generalization.B]")[0]
    spec = load_manifest(tmp_path / "suite" / "rows", manifest)
    assert spec.generalization == {}
    assert draw_unseen_shapes(spec, seed=1, device="cuda") == []


def test_rules_that_leave_no_new_shape_give_up_instead_of_looping(tmp_path):
    manifest = HARD.replace("{ M = 970, N = 6 }, { M = 194, N = 5 }", "{ M = 4, N = 1 }")
    manifest = manifest.split("[generalization]")[0] + (
        "[generalization.M]\nmin = 4\nmax = 5\n[generalization.N]\nmin = 1\nmax = 1\n"
    )
    spec = load_manifest(tmp_path / "suite" / "tiny", manifest)
    drawn = draw_unseen_shapes(spec, seed=1, device="cuda", count=50)
    assert [u.shape for u in drawn] == [{"M": 5, "N": 1}]


def test_hidden_seed_depends_on_secret_task_and_solution():
    base = hidden_seed_material("secret", "task-v1", "solution-a")
    assert base == hidden_seed_material("secret", "task-v1", "solution-a")
    others = {
        hidden_seed_material("other", "task-v1", "solution-a"),
        hidden_seed_material("secret", "task-v2", "solution-a"),
        hidden_seed_material("secret", "task-v1", "solution-b"),
        hidden_seed_material("secret", "task-v1solution-a", ""),
    }
    assert base not in others and len(others) == 4


def test_hidden_seed_refuses_an_empty_secret():
    with pytest.raises(ValueError, match="ARENA_HIDDEN_SEED"):
        hidden_seed_material("", "task-v1", "solution-a")


def test_kernelbench_rules_scale_sizes_from_a_quarter_to_twice():
    rules = kernelbench_rules({"batch_size": 16, "dim": 16384})
    assert rules["dims"]["batch_size"] == {
        "min": 4,
        "max": 32,
        "cpu_max": 16,
        "multiple_of": 1,
        "power_of_two": False,
    }
    assert (rules["dims"]["dim"]["min"], rules["dims"]["dim"]["max"]) == (4096, 32768)
    assert rules["dims"]["dim"]["cpu_max"] == 4096
    assert rules["fixed"] == [] and rules["relations"] == []


def test_kernelbench_rules_keep_steps_and_checked_bounds():
    rules = kernelbench_rules(
        {"in_channels": 32, "width": 64}, steps={"in_channels": 8}, bounds={"width": (32, 96)}
    )
    assert rules["dims"]["in_channels"]["multiple_of"] == 8
    assert rules["dims"]["in_channels"]["min"] == 8
    assert (rules["dims"]["width"]["min"], rules["dims"]["width"]["max"]) == (32, 96)


def test_kernelbench_problem_with_nothing_to_scale_has_no_rules():
    assert kernelbench_rules({}) == {}
    assert kernelbench_rules({"N": 8}, bounds={"N": (8, 8)}) == {}


def test_kernelbench_file_draws_scaled_shapes_with_fixed_constants(tmp_path):
    problem = tmp_path / "23_Softmax.py"
    problem.write_text(
        "import torch\nbatch_size = 16\ndim = 16384\naxis = 1\n"
        "class Model(torch.nn.Module):\n    def forward(self, x): return torch.softmax(x, 1)\n"
        "def get_inputs(): return [torch.randn(batch_size, dim)]\n"
        "def get_init_inputs(): return []\n"
    )
    spec = load_task(problem)
    # axis reaches no input: it is held as written, not part of the shape.
    assert spec.visible_shapes == ({"batch_size": 16, "dim": 16384},)
    for device in ("cpu", "cuda"):
        drawn = draw_unseen_shapes(spec, seed=5, device=device)
        assert drawn
        for unseen in drawn:
            assert 4 <= unseen.shape["batch_size"] <= 32
            assert 4096 <= unseen.shape["dim"] <= 32768
            assert unseen.shape != spec.visible_shapes[0]
            if device == "cpu":
                assert unseen.shape["batch_size"] <= 16 and unseen.shape["dim"] == 4096


def test_no_unseen_kernelbench_shape_grows_past_the_size_factor(tmp_path):
    problem = tmp_path / "9_Matmul.py"
    problem.write_text(
        "import torch\nbatch_size = 1024\nin_features = 8192\nout_features = 8192\n"
        "class Model(torch.nn.Module):\n"
        "    def __init__(self, i, o):\n        super().__init__()\n"
        "        self.linear = torch.nn.Linear(i, o)\n"
        "    def forward(self, x): return self.linear(x)\n"
        "def get_inputs(): return [torch.randn(batch_size, in_features)]\n"
        "def get_init_inputs(): return [in_features, out_features]\n"
    )
    spec = load_task(problem)
    visible = spec.visible_shapes[0]
    for seed in SEEDS:
        for unseen in draw_unseen_shapes(spec, seed=seed, device="cuda", count=8):
            growth = 1.0
            for name, value in unseen.shape.items():
                growth *= max(1.0, value / visible[name])
            # Every tensor here is a product of distinct dimensions: none outgrows this product.
            assert growth <= UNSEEN_SIZE_FACTOR, unseen


def test_drawn_shapes_keep_the_byte_formula_within_the_size_factor(matmul, rows):
    for spec in (matmul, rows):
        largest = max(formula_evaluate(spec.bytes_moved, s) for s in spec.visible_shapes)
        for seed in SEEDS:
            for unseen in draw_unseen_shapes(spec, seed=seed, device="cuda", count=8):
                assert formula_evaluate(spec.bytes_moved, unseen.shape) <= 2 * largest
        assert size_bound_holds(2 * 10**6, 10**6) and not size_bound_holds(2 * 10**6 + 1, 10**6)


def test_unseen_shapes_are_graded_smallest_first(silu):
    drawn = draw_unseen_shapes(silu, seed=3, device="cuda")
    ordered = [u.shape["N"] for u in grading_order(drawn, silu, "cuda")]
    assert ordered == sorted(ordered)


SHAPES = [{"seen": True}, {"seen": False}, {"seen": False}, {"seen": False}]


def test_a_failure_only_past_two_to_the_31_is_that_limit_not_overfit():
    below, past = INDEX_LIMIT_ELEMENTS - 1, 3 * 2**30
    largest = {0: 1_600_000_000, 1: below, 2: past, 3: 2 * past}
    assert index_limited(SHAPES, [2, 3], largest) == [2, 3]
    # A shape below the limit failed too: the kernel is wrong, not merely 32-bit.
    assert index_limited(SHAPES, [1, 2], largest) == []
    # The visible shape itself is past the limit: a 32-bit kernel was never right.
    assert index_limited(SHAPES, [2], {**largest, 0: past}) == []
    # What the judge did not measure excuses nothing.
    assert index_limited(SHAPES, [2], {1: below, 2: past}) == []


def test_shapes_past_two_to_the_31_run_after_the_visible_shapes_are_timed(tmp_path, monkeypatch):
    problem = tmp_path / "19_ReLU.py"
    problem.write_text(
        "import torch\nbatch_size = 4096\ndim = 393216\n"
        "class Model(torch.nn.Module):\n    def forward(self, x): return torch.relu(x)\n"
        "def get_inputs(): return [torch.randn(batch_size, dim)]\n"
        "def get_init_inputs(): return []\n"
    )
    reference = load_module(problem, "reference_index_limit")
    shapes = [
        {"shape": {"batch_size": 4096, "dim": 393216}, "seen": True},  # 1.6e9 elements
        {"shape": {"batch_size": 2048, "dim": 393216}, "seen": False},
        {"shape": {"batch_size": 8192, "dim": 393216}, "seen": False},  # 3.2e9 elements
    ]
    assert elements_on_meta(reference, shapes[2]["shape"]) == 8192 * 393216
    assert run_after_timing(reference, shapes, "cuda") == {2}
    assert run_after_timing(reference, shapes, "cpu") == set()  # nothing is timed there
    past = [{**shapes[0], "shape": {"batch_size": 8192, "dim": 393216}}, *shapes[1:]]
    assert run_after_timing(reference, past, "cuda") == set()
    # As the grading process hands it to the candidate's job: from the file, in a module of
    # its own that does not stay behind; a reference that does not load runs no shape last.
    assert run_after_timing_of(problem, shapes, "cuda") == [2]
    assert run_after_timing_of(problem, shapes, "cpu") == []
    assert not [name for name in sys.modules if name.startswith("arena_index_limit_")]
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('no')\n")
    assert run_after_timing_of(broken, shapes, "cuda") == []
    # With no unseen shape there is nothing to order: the reference is not even loaded.
    loaded = []
    monkeypatch.setattr(index_limit, "load_module", lambda *args: loaded.append(args))
    assert run_after_timing_of(problem, shapes[:1], "cuda") == []
    assert loaded == []
