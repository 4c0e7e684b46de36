"""import_kernelbench on a small KernelBench-format tree written for these tests.

tests/tasks/kernelbench_tree reproduces the upstream constructs: sizes written as expressions,
constants derived from others (bias_shape, input_shape), zero padding, float and bool flags,
class-count-bounded integer targets, constants only the constructor reads, a problem without
constants and one that downloads weights.
"""

import json
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grader.taskspec import DEFAULT_CATALOG, load_task
from tasks.models import Task
from tasks.validation import validate_task

TREE = Path(__file__).parent / "kernelbench_tree"
SLUGS = {
    "kernelbench-level1-1-expression-matmul",
    "kernelbench-level1-2-crossentropy-classes",
    "kernelbench-level1-3-no-constants",
    "kernelbench-level2-1-conv2d-biasadd",
    "kernelbench-level2-2-linear-init-only",
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


def run_import(checkout, capsys, *args):
    call_command("import_kernelbench", str(checkout), "--workers", "1", *args)
    return capsys.readouterr()


def test_imports_every_problem_unchanged_outside_the_source_tree(db, checkout, imported, capsys):
    out = run_import(checkout, capsys)
    assert "5 imported, 0 updated, 0 unchanged, 1 skipped, 0 refused" in out.out
    assert "skipped level4/1_pretrained_model.py: downloads weights" in out.err
    assert "[6/6] " in out.err  # the progress line of the last problem
    assert set(Task.objects.filter(suite="kernelbench").values_list("slug", flat=True)) == SLUGS
    for slug in SLUGS:
        assert (imported / "kernelbench" / slug / "task.toml").is_file()
    assert not (DEFAULT_CATALOG / "kernelbench").exists()
    assert not list((imported / ".import").glob("*"))
    source = checkout / "KernelBench" / "level2" / "1_Conv2d_BiasAdd.py"
    folder = imported / "kernelbench" / "kernelbench-level2-1-conv2d-biasadd"
    assert (folder / "reference.py").read_text() == source.read_text()


def test_dimensions_are_the_constants_the_inputs_depend_on(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    matmul = load_task("kernelbench-level1-1-expression-matmul", catalogs=[imported])
    assert matmul.visible_shapes == ({"N": 16},)  # N = 8 * 2
    assert matmul.flops == str(2 * 16**3) and matmul.bytes_moved == str(3 * 16 * 16 * 4)
    assert matmul.generalization["dims"]["N"]["min"] == 4
    assert matmul.generalization["dims"]["N"]["max"] == 32
    conv = load_task("kernelbench-level2-1-conv2d-biasadd", catalogs=[imported])
    # out_channels and kernel_size only reach the constructor; padding = 0, scale = 1e-5 and
    # use_bias = False are accepted and stay as written.
    assert conv.visible_shapes == ({"batch_size": 2, "in_channels": 4, "height": 8, "width": 8},)
    classes = load_task("kernelbench-level1-2-crossentropy-classes", catalogs=[imported])
    assert classes.visible_shapes == ({"batch_size": 32, "num_classes": 10},)
    linear = load_task("kernelbench-level2-2-linear-init-only", catalogs=[imported])
    assert linear.visible_shapes == ({"batch_size": 4, "in_features": 16},)
    # GroupNorm needs in_features divisible by num_groups: found by running it on meta.
    assert linear.generalization["dims"]["in_features"]["multiple_of"] == 4


def test_problem_with_nothing_to_vary_says_so(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    spec = load_task("kernelbench-level1-3-no-constants", catalogs=[imported])
    assert spec.visible_shapes == ({},) and spec.generalization == {}
    assert spec.fixed_reason.startswith("the problem has nothing to vary")
    row = Task.objects.get(slug="kernelbench-level1-3-no-constants")
    assert row.manifest["fixed_reason"] == spec.fixed_reason


def test_reimport_reports_every_problem_unchanged(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    versions = dict(Task.objects.values_list("slug", "version_hash"))
    out = run_import(checkout, capsys)
    assert "0 imported, 0 updated, 5 unchanged, 1 skipped, 0 refused" in out.out
    assert dict(Task.objects.values_list("slug", "version_hash")) == versions


def test_changed_problem_is_updated(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    problem = checkout / "KernelBench" / "level1" / "1_Expression_matmul.py"
    problem.write_text(problem.read_text().replace("N = 8 * 2", "N = 8 * 4"))
    out = run_import(checkout, capsys)
    assert "0 imported, 1 updated, 4 unchanged" in out.out
    assert load_task(
        "kernelbench-level1-1-expression-matmul", catalogs=[imported]
    ).visible_shapes == ({"N": 32},)


def test_broken_problem_refuses_the_whole_import_naming_the_file(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    before = sorted(p.relative_to(imported) for p in imported.rglob("*"))
    rows = dict(Task.objects.values_list("slug", "version_hash"))
    broken = checkout / "KernelBench" / "level1" / "9_Broken.py"
    broken.write_text(
        (checkout / "KernelBench" / "level1" / "1_Expression_matmul.py")
        .read_text()
        .replace("torch.rand(N, N), torch.rand(N, N)", "torch.rand(N, N), torch.rand(N + 1, N)")
    )
    matmul = checkout / "KernelBench" / "level1" / "1_Expression_matmul.py"
    matmul.write_text(matmul.read_text().replace("N = 8 * 2", "N = 8 * 3"))
    with pytest.raises(CommandError) as caught:
        run_import(checkout, capsys)
    assert str(broken) in str(caught.value)
    assert "does not run on the meta device" in str(caught.value)
    # Nothing changed: neither the folders (the good update included) nor the database.
    assert sorted(p.relative_to(imported) for p in imported.rglob("*")) == before
    assert dict(Task.objects.values_list("slug", "version_hash")) == rows


def test_first_import_refused_writes_nothing(db, checkout, imported, capsys):
    (checkout / "KernelBench" / "level3" / "1_Syntax.py").write_text("def Model(:\n")
    with pytest.raises(CommandError, match=r"1_Syntax\.py: line 1"):
        run_import(checkout, capsys)
    assert not imported.exists() or not list(imported.rglob("*.toml"))
    assert not Task.objects.filter(suite="kernelbench").exists()


def test_imported_task_validates_and_lists(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    folder = imported / "kernelbench" / "kernelbench-level2-1-conv2d-biasadd"
    report = validate_task(folder, grade_starter=False)
    assert report.ok, report.problems
    call_command("list_tasks", "--json")
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {row["slug"] for row in rows} >= SLUGS
    call_command("sync_tasks")
    assert "0 deactivated" in capsys.readouterr().out
