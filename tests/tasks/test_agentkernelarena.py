"""import_agentkernelarena on a small AgentKernelArena-format tree written for these tests.

tests/tasks/fixtures/agentkernelarena reproduces the upstream constructs: vllm task runners with a
TEST_SHAPES of integers (a local derived from a dimension, allclose tolerances), a flag column
with a harness helper and an in-place entry called with a keyword, a SEEDS runner whose
gen_inputs returns (args, kwargs), an AMD-only launch option, an AMD intrinsic guarded by a
ROCm test (imported), an early exit while building the
inputs; rocmbench pytest files (a list-comprehension parametrize with a dtype string, a grid
function and a launch into a preallocated output checked by assert_close; a harness wrapper,
crossed parametrize decorators with ids, a parameter default, a ROCm-only skip and a derived
output; a pytest.skip inside the inputs, refused; one without the kernel/tests separator,
refused) and GEAK harnesses (shapes passed to run_correctness from a computed constant, an
aliased import of the entry, a harness helper shadowing the kernel's; rows of ALL_CONFIGS picked
by the indices main passes, an entry that is an alias in the kernel, a dtype constant, checks of
different tolerances; a check of gradients, refused; one without run_correctness, refused).
"""

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grader.taskspec import DEFAULT_CATALOG, load_task
from tasks.models import Task

TREE = Path(__file__).parent / "fixtures" / "agentkernelarena"
SLUGS = {
    "aka-vllm-triton-scale",
    "aka-vllm-triton-fill",
    "aka-vllm-triton-seeded",
    "aka-vllm-triton-guarded",
    "aka-rocmbench-easy-test-vadd",
    "aka-rocmbench-medium-test-rowmax",
    "aka-geak-eval-l2-scale-geak",
    "aka-geak-eval-l3-indexed-geak",
    "aka-vllm-triton-mixed",
}


@pytest.fixture
def checkout(tmp_path):
    shutil.copytree(TREE, tmp_path / "checkout")
    return tmp_path / "checkout"


@pytest.fixture
def imported(tmp_path, settings):
    folder = tmp_path / "data" / "catalog"
    settings.ARENA_IMPORTED_CATALOG_DIR = folder
    return folder


def run_import(checkout, capsys):
    call_command("import_agentkernelarena", str(checkout))
    return capsys.readouterr()


def load_module(path: Path) -> dict:
    spec = importlib.util.spec_from_file_location(f"aka_{path.parent.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_imports_translatable_tasks_and_lists_the_rest(db, checkout, imported, capsys):
    before = tree_digest(checkout)
    out = run_import(checkout, capsys)
    assert "agentkernelarena: 9 imported, 0 updated, 0 unchanged, 11 not importable" in out.out
    assert "[20/20] " in out.err
    assert "not importable vllm/triton_amd: needs an AMD GPU: uses waves_per_eu" in out.err
    assert "not importable vllm/triton_early: inputs built with an early exit" in out.err
    assert (
        "not importable rocmbench/easy/test_add: pytest harness: no line of hashes between "
        "the kernel and its tests"
    ) in out.err
    assert (
        "not importable rocmbench/easy/test_skipping: pytest harness: inputs built with an "
        "early exit (line 18)"
    ) in out.err
    assert "not importable geak_eval/L1/copy: GEAK harness: runner has no run_correctness" in (
        out.err
    )
    assert (
        "not importable geak_eval/L2/grad_geak: GEAK harness: the check after line 11 reads "
        "nothing the kernel wrote"
    ) in out.err
    assert set(Task.objects.filter(suite="agentkernelarena").values_list("slug", flat=True)) == (
        SLUGS
    )
    assert tree_digest(checkout) == before  # nothing written into the source tree
    assert not (DEFAULT_CATALOG / "agentkernelarena").exists()
    assert not list((imported / ".import").glob("*"))


def test_harness_shapes_inputs_and_tolerance(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    spec = load_task("aka-vllm-triton-scale", catalogs=[imported])
    assert spec.category == "triton2triton" and spec.dtype == "float16"
    assert spec.visible_shapes == (
        {"rows": 4, "cols": 64},
        {"rows": 3, "cols": 100},
    )
    # The row number i only seeded the harness's generator: no CASE dimension for it.
    assert spec.tolerance == {"atol": 1e-3, "rtol": 1e-3}
    assert spec.bytes_moved == "2 * (rows * cols)"
    folder = spec.folder
    kernel = (checkout / "tasks/triton2triton/vllm/triton_scale/source/triton_scale.py").read_text()
    reference, starter = (
        (folder / "reference.py").read_text(),
        (folder / "starter" / "solution.py").read_text(),
    )
    # The pristine kernel is both the reference and the starter; the harness is not copied.
    assert reference.startswith(kernel.rstrip()) and starter.startswith(kernel.rstrip())
    assert "class Model(" in reference and "class ModelNew(" in starter
    assert "manual_seed" not in reference and "def run_correctness" not in reference
    assert "x = torch.randn(n, device=device, dtype=dtype)" in reference


def test_reference_modules_run(db, checkout, imported, capsys):
    """get_inputs() builds what the harness passes; forward returns what the entry wrote."""
    torch = pytest.importorskip("torch")
    run_import(checkout, capsys)
    fill = imported / "agentkernelarena" / "aka-vllm-triton-fill" / "reference.py"
    namespace = load_module(fill)

    def fill(out, value, negate=False):  # the kernel's entry, in place, returning nothing
        out.fill_(-value if negate else value)

    namespace["fill"] = fill
    namespace["CASE"] = 1
    inputs = namespace["get_inputs"]()
    assert load_task("aka-vllm-triton-fill", catalogs=[imported]).visible_shapes == (
        {"n": 32, "CASE": 1},
        {"n": 48, "CASE": 2},
    )
    assert inputs[0].shape == (96,) and inputs[1] == 1.5 and inputs[2] == {"negate": True}
    (written,) = namespace["Model"]()(*inputs)
    assert torch.equal(written, torch.full((96,), -1.5)) and not inputs[0].any()
    seeded = imported / "agentkernelarena" / "aka-vllm-triton-seeded" / "reference.py"
    namespace = load_module(seeded)
    assert "def gen_inputs(" in seeded.read_text()
    args = namespace["get_inputs"]()
    assert args[0].shape == (2, 8) and args[1] == {"factor": 0.5}
    spec = load_task("aka-vllm-triton-seeded", catalogs=[imported])
    assert spec.visible_shapes == ({},) and spec.fixed_reason


def test_pytest_harness_becomes_shapes_inputs_and_tolerance(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    spec = load_task("aka-rocmbench-easy-test-vadd", catalogs=[imported])
    # Integer columns are dimensions; the dtype string is picked per row by CASE.
    assert spec.visible_shapes == tuple(
        {"SIZE": size, "BLOCK_SIZE": 32, "CASE": case}
        for case, size in enumerate([96, 96, 200, 200], 1)
    )
    assert spec.dtype == "float16" and spec.tolerance == {"atol": 1e-3, "rtol": 1e-2}
    assert spec.bytes_moved == "4 * SIZE + 4 * SIZE"  # the output buffer is not an input read
    source = checkout / "tasks/triton2triton/rocmbench/easy/test_vadd/test_vadd.py"
    kernel = source.read_text().split("#" * 100)[0].rstrip()
    reference = (spec.folder / "reference.py").read_text()
    starter = (spec.folder / "starter" / "solution.py").read_text()
    assert reference.startswith(kernel) and starter.startswith(kernel)
    for dropped in ("def test_", "performance_utils", "result_gold", "request", "manual_seed"):
        assert dropped not in reference
    assert "vadd_kernel[grid](x, y, output, SIZE, BLOCK_SIZE=BLOCK_SIZE)" in reference
    rowmax = load_task("aka-rocmbench-medium-test-rowmax", catalogs=[imported])
    # Two parametrize decorators cross; the ROCm-only skip is dropped, the wrapper kept.
    assert len(rowmax.visible_shapes) == 4 and rowmax.dtype == "float32"
    assert rowmax.tolerance == {"atol": 0.0, "rtol": 0.0}
    text = (rowmax.folder / "reference.py").read_text()
    assert "def rowmax(x):" in text and "is_hip" not in text and "dtype = torch.float16" in text


def test_geak_harness_becomes_shapes_inputs_and_tolerance(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    spec = load_task("aka-geak-eval-l2-scale-geak", catalogs=[imported])
    # HARNESS_SHAPES, computed from ALL_SHAPES, is what the correctness mode checks.
    assert spec.visible_shapes == (
        {"rows": 4, "cols": 32, "CASE": 1},
        {"rows": 8, "cols": 64, "CASE": 2},
    )
    assert spec.tolerance == {"atol": 1e-5, "rtol": 1e-6}
    text = (spec.folder / "reference.py").read_text()
    assert "out = scale(*args, **kwargs)" in text and "aiter" not in text
    # The harness's make_input (seed dropped, put on the grader's device) is renamed beside the
    # kernel's.
    assert text.index("def _harness_make_input(rows, cols") > text.index("def make_input(n)")
    assert "= _harness_make_input(" in text
    assert "manual_seed" not in text and '"cuda"' not in text.split("def _harness_make_input")[1]
    indexed = load_task("aka-geak-eval-l3-indexed-geak", catalogs=[imported])
    # `for idx in indices: cfg = ALL_CONFIGS[idx]`, indices = every row: one CASE per config.
    assert indexed.visible_shapes == tuple({"CASE": n} for n in range(1, 5))
    assert indexed.dtype == "float16"  # DTYPE, the constant the inputs are built with
    assert indexed.tolerance == {"atol": 1e-2, "rtol": 1e-3}  # the loosest of its checks
    text = (indexed.folder / "reference.py").read_text()
    assert "out = scale_a16(*args, **kwargs)" in text and "[CASE - 1]" in text


RUN_UNDER_INTERPRETER = """
import importlib.util, sys, torch
def load(path, **shape):
    spec = importlib.util.spec_from_file_location(path.split("/")[-2].replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    vars(module).update(shape)
    return module
root = sys.argv[1]
vadd = load(root + "/aka-rocmbench-easy-test-vadd/reference.py", SIZE=200, CASE=4)
x, y, output = vadd.get_inputs()
(written,) = [vadd.Model()(x, y, output)]
assert x.dtype == torch.float32 and torch.equal(written, x + y) and not output.equal(written)
rowmax = load(root + "/aka-rocmbench-medium-test-rowmax/starter/solution.py", M=3, N=32, CASE=3)
(x,) = rowmax.get_inputs()
assert x.dtype == torch.float16 and torch.equal(rowmax.ModelNew()(x), x.max(dim=1)[0])
scale = load(root + "/aka-geak-eval-l2-scale-geak/reference.py", rows=8, cols=64, CASE=2)
x, factor = scale.get_inputs()
assert factor == 2.0 and torch.equal(scale.Model()(x, factor), x * 2.0)
print("ran")
"""


def test_translated_modules_run_their_kernels_under_the_interpreter(db, checkout, imported, capsys):
    """get_inputs() builds what the test builds; forward launches the kernel and returns what
    the test's check reads (the output buffer, on a copy; the wrapper's result)."""
    pytest.importorskip("triton")
    run_import(checkout, capsys)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(RUN_UNDER_INTERPRETER),
            str(imported / "agentkernelarena"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.stdout.strip() == "ran", ran.stderr[-3000:]


def test_reimport_reports_every_task_unchanged(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    versions = dict(Task.objects.values_list("slug", "version_hash"))
    out = run_import(checkout, capsys)
    assert "0 imported, 0 updated, 9 unchanged, 11 not importable" in out.out
    assert dict(Task.objects.values_list("slug", "version_hash")) == versions


def test_broken_config_refuses_the_whole_import_naming_the_file(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    before = sorted(p.relative_to(imported) for p in imported.rglob("*"))
    config = checkout / "tasks/triton2triton/vllm/triton_scale/config.yaml"
    config.write_text("source_file_path: [source/missing.py]\n")
    with pytest.raises(CommandError) as refused:
        run_import(checkout, capsys)
    assert f"{config}: source file source/missing.py" in str(refused.value)
    config.write_text("source_file_path: [unclosed\n")
    with pytest.raises(CommandError) as refused:
        run_import(checkout, capsys)
    assert f"{config}: cannot be read" in str(refused.value)
    assert sorted(p.relative_to(imported) for p in imported.rglob("*")) == before


def test_a_folder_without_tasks_is_refused(db, tmp_path, imported):
    with pytest.raises(CommandError, match="no tasks/triton2triton"):
        call_command("import_agentkernelarena", str(tmp_path))


MIXED_UNDER_INTERPRETER = """
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("mixed", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
torch.manual_seed(0)
inputs = module.get_inputs()
before = [t.clone() for t in inputs]
out = module.ModelNew()(*inputs)
assert all(torch.equal(a, b) for a, b in zip(inputs, before)), "inputs modified"
assert isinstance(out, tuple) and len(out) == 2, out
assert torch.allclose(out[0], inputs[0] * 2) and torch.allclose(out[1], inputs[1] + inputs[0])
print("ran")
"""


def test_runner_constructs_translate_or_are_refused(db, checkout, imported, capsys):
    """mod.<name> in the inputs, a harness import, a harness helper named like a jit function of
    the kernel, an entry that returns a tuple (None, a Python int) and writes an argument the
    harness checks; refused: raw device pointers, a check of part of an output, a check at
    slots the kernel chose, AMD's fp8 type, a cache filled element by element four loops deep."""
    out = run_import(checkout, capsys)
    for refused in (
        "vllm/triton_pointers: inputs hold raw device pointers (data_ptr())",
        "vllm/triton_partial: the harness checks only 'out[r, :k]'",
        "vllm/triton_slots: the harness checks 'out[idx]': a buffer at positions the kernel",
        "vllm/triton_fnuz: needs an AMD GPU: uses torch.float8_e4m3fnuz",
        "vllm/triton_paged_fill: inputs built element by element in 4 or more nested Python loops "
        "(setup_cache, line ",
    ):
        assert f"not importable {refused}" in out.err
    path = imported / "agentkernelarena" / "aka-vllm-triton-mixed" / "starter" / "solution.py"
    text = path.read_text()
    assert "import math  # noqa: E402" in text
    assert "scale = _scale_of()" in text and "mod." not in text.split("class ModelNew")[1]
    assert "def _harness_round_up(n):" in text and "_harness_round_up(n) * scale" in text
    assert "args = [_copy(a) for a in args]" in text
    assert "return _compared(out, args, kwargs, [0], [1])" in text
    pytest.importorskip("triton")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    ran = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(MIXED_UNDER_INTERPRETER), str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.stdout.strip() == "ran", ran.stderr[-3000:]
