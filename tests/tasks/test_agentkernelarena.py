"""import_agentkernelarena on a small AgentKernelArena-format tree written for these tests.

tests/tasks/fixtures/agentkernelarena reproduces the upstream constructs: vllm task runners with a
TEST_SHAPES of integers (a local derived from a dimension, allclose tolerances), a flag column
with a harness helper and an in-place entry called with a keyword, a SEEDS runner whose
gen_inputs returns (args, kwargs), an AMD-only launch option, an AMD intrinsic guarded by a
ROCm test (imported), an early exit while building the
inputs, a rocmbench pytest task and a GEAK harness task.
"""

import hashlib
import importlib.util
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluator.engine.taskspec import DEFAULT_CATALOG, load_task
from tasks.models import Task

TREE = Path(__file__).parent / "fixtures" / "agentkernelarena"
SLUGS = {
    "aka-vllm-triton-scale",
    "aka-vllm-triton-fill",
    "aka-vllm-triton-seeded",
    "aka-vllm-triton-guarded",
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
    assert "agentkernelarena: 4 imported, 0 updated, 0 unchanged, 4 not importable" in out.out
    assert "[8/8] " in out.err
    assert "not importable vllm/triton_amd: needs an AMD GPU: uses waves_per_eu" in out.err
    assert "not importable vllm/triton_early: inputs built with an early exit" in out.err
    assert "not importable rocmbench/easy/test_add: pytest harness" in out.err
    assert "not importable geak_eval/L1/copy: GEAK harness" in out.err
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


def test_reimport_reports_every_task_unchanged(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    versions = dict(Task.objects.values_list("slug", "version_hash"))
    out = run_import(checkout, capsys)
    assert "0 imported, 0 updated, 4 unchanged, 4 not importable" in out.out
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
