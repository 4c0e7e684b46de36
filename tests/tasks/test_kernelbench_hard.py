"""import_kernelbench_hard on a small KernelBench-Hard-format tree written for these tests.

tests/tasks/fixtures/kernelbench_hard reproduces the upstream constructs: problems-<gpu>/NN_name/
folders with problem.yaml (comments, a block-scalar note, a null throughput, a tolerance written
as the string "5e-2", dtype keys with and without "torch."), shapes.py whose names differ from
the reference's constants but for case (batch -> BATCH), a SOTA line needing a package that is
not installed and one needing none, and check.py / sota.py / PROMPT.txt beside them; and
src/eval/numeric_stress.py (module constants named in the cases, NumericStressCase calls with
input_scales, state_scales and per-dtype tolerances, a problem without cases) beside a
property_stress.py.
"""

import hashlib
import shutil
import tomllib
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grader.taskspec import DEFAULT_CATALOG, load_task
from tasks.importers.kernelbench_hard import kernelbench_hard_slug
from tasks.models import Task

TREE = Path(__file__).parent / "fixtures" / "kernelbench_hard"
SLUGS = {"kbh-h100-01-tiny-gemm", "kbh-h100-02-paged-decode", "kbh-b200-01-tiny-gemm"}


@pytest.fixture
def checkout(tmp_path):
    shutil.copytree(TREE, tmp_path / "checkout")
    return tmp_path / "checkout"


@pytest.fixture
def imported(tmp_path, settings):
    folder = tmp_path / "data" / "catalog"
    settings.ARENA_IMPORTED_CATALOG_DIR = folder
    return folder


def run_import(source, capsys):
    call_command("import_kernelbench_hard", str(source))
    return capsys.readouterr()


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_slug_rule():
    assert kernelbench_hard_slug("h100", "01_fp8_gemm") == "kbh-h100-01-fp8-gemm"
    assert kernelbench_hard_slug("RTXPro6000", "06_sonic.moe") == "kbh-rtxpro6000-06-sonic-moe"


def test_imports_every_problem_outside_the_source_tree(db, checkout, imported, capsys):
    before = tree_digest(checkout)
    out = run_import(checkout, capsys)
    assert "3 imported, 0 updated, 0 unchanged, 0 removed, 2 with SOTA unavailable" in out.out
    assert "2 with numeric stress cases (src/eval/numeric_stress.py)" in out.out
    assert "[3/3] problems-h100/02_paged_decode" in out.err
    assert (
        "SOTA unavailable: kbh-h100-01-tiny-gemm: SOTA 'Vendor GEMM' needs "
        "kernel-arena-no-such-package>=1.0 (not installed)" in out.err
    )
    assert tree_digest(checkout) == before
    assert not (DEFAULT_CATALOG / "kernelbench-hard").exists()
    assert not list((imported / ".import").glob("*"))
    rows = Task.objects.filter(suite="kernelbench-hard")
    assert set(rows.values_list("slug", flat=True)) == SLUGS
    folder = imported / "kernelbench-hard" / "kbh-h100-01-tiny-gemm"
    assert sorted(p.name for p in folder.iterdir()) == ["PROMPT.md", "reference.py", "task.toml"]
    source = checkout / "benchmarks" / "hard" / "problems-h100" / "01_tiny_gemm"
    assert (folder / "reference.py").read_text() == (source / "reference.py").read_text()
    prompt = (folder / "PROMPT.md").read_text()
    assert "--task kbh-h100-01-tiny-gemm" in prompt and "`torch._scaled_mm`" in prompt
    assert "I need you to write an fp8 GEMM" in prompt


def test_problem_yaml_is_mapped_onto_the_manifest(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    gemm = load_task("kbh-h100-01-tiny-gemm", catalogs=[imported])
    assert (gemm.category, gemm.suite, gemm.dtype, gemm.regime) == (
        "hard",
        "kernelbench-hard",
        "float8_e4m3fn",
        "compute",
    )
    assert gemm.flops == "2 * M * N * K" and gemm.bytes_moved == "M*K + K*N + M*N*2"
    assert gemm.visible_shapes == ({"M": 32, "N": 32, "K": 32}, {"M": 4, "N": 64, "K": 48})
    assert gemm.tolerance == {"atol": 0.05, "rtol": 0.05}  # the dtype's entry, "5e-2"
    assert gemm.forbidden_ops == ("aten::_scaled_mm",)
    manifest = tomllib.loads((gemm.folder / "task.toml").read_text())
    upstream = manifest["upstream"]
    assert upstream["sota_available"] is False
    assert upstream["sota_missing"] == ["kernel-arena-no-such-package>=1.0 (not installed)"]
    assert "import some_vendor_gemm" in upstream["forbidden_patterns"]
    problem = upstream["problem"]
    assert problem["peak_tflops_key"] == "fp8" and problem["num_perf_trials"] == 30
    assert problem["sota"]["notes"] == "Informational only;\nnot graded.\n"
    assert "reference_throughput_tflops_h100" not in problem["sota"]  # null: no TOML value

    decode = load_task("kbh-h100-02-paged-decode", catalogs=[imported])
    # shapes.py says batch, reference.py's constant is BATCH: the grader sets constants by name.
    assert decode.visible_shapes[0] == {"BATCH": 2, "NUM_HEADS": 4, "HEAD_DIM": 16, "SEQ_LEN": 40}
    assert decode.flops == "4 * BATCH * NUM_HEADS * SEQ_LEN * HEAD_DIM"
    assert decode.tolerance == {"atol": 0.02, "rtol": 0.02}  # "torch.bfloat16" is bfloat16
    assert decode.forbidden_ops == ("aten::scaled_dot_product_attention", "aten::softmax")
    upstream = tomllib.loads((decode.folder / "task.toml").read_text())["upstream"]
    assert upstream["sota_available"] is True
    assert upstream["renamed_dimensions"]["batch"] == "BATCH"


def test_second_import_changes_nothing(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    folder = imported / "kernelbench-hard"
    stamps = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    out = run_import(checkout / "benchmarks" / "hard", capsys)  # the hard folder itself
    assert "0 imported, 0 updated, 3 unchanged, 0 removed" in out.out
    assert "nothing changed" in out.out
    assert "tasks: 0 created, 0 updated, " in out.out and "0 deactivated" in out.out
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == stamps


def test_a_changed_and_a_removed_problem(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    hard = checkout / "benchmarks" / "hard"
    problem = hard / "problems-h100" / "02_paged_decode" / "problem.yaml"
    problem.write_text(problem.read_text().replace("torch.bfloat16: 0.02", "torch.bfloat16: 0.03"))
    shutil.rmtree(hard / "problems-b200")
    out = run_import(checkout, capsys)
    assert "0 imported, 1 updated, 1 unchanged, 1 removed" in out.out
    assert not Task.objects.get(slug="kbh-b200-01-tiny-gemm").is_active
    decode = load_task("kbh-h100-02-paged-decode", catalogs=[imported])
    assert decode.tolerance == {"atol": 0.03, "rtol": 0.03}


def test_a_folder_that_is_no_kernelbench_hard_tree_is_refused(db, tmp_path, imported, capsys):
    (tmp_path / "elsewhere" / "level1").mkdir(parents=True)
    with pytest.raises(CommandError, match="not a KernelBench-Hard tree"):
        run_import(tmp_path / "elsewhere", capsys)
    assert not Task.objects.filter(suite="kernelbench-hard").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("precision: bf16\nregime: [oops\n", "not valid YAML"),
        ("- just\n- a list\n", "must be a mapping"),
        ("precision: int2\nregime: compute\n", "field 'precision': 'int2' is not one of"),
        (
            'precision: bf16\nregime: memory\nflops_formula: "2 * M * Q"\nbytes_formula: "M"\n',
            "field 'flops_formula': unknown dimension",
        ),
    ],
)
def test_a_malformed_problem_yaml_is_refused_naming_the_file(
    db, checkout, imported, capsys, text, message
):
    run_import(checkout, capsys)
    stamps = {p: p.stat().st_mtime_ns for p in (imported / "kernelbench-hard").rglob("*")}
    broken = checkout / "benchmarks" / "hard" / "problems-h100" / "01_tiny_gemm" / "problem.yaml"
    broken.write_text(text)
    with pytest.raises(CommandError) as info:
        run_import(checkout, capsys)
    assert f"{broken}: " in str(info.value) and message in str(info.value)
    assert {p: p.stat().st_mtime_ns for p in (imported / "kernelbench-hard").rglob("*")} == stamps
    assert Task.objects.filter(suite="kernelbench-hard", is_active=True).count() == 3


def test_a_shape_that_is_no_constant_of_the_reference_is_refused(db, checkout, imported, capsys):
    shapes = checkout / "benchmarks" / "hard" / "problems-h100" / "01_tiny_gemm" / "shapes.py"
    shapes.write_text('SHAPES = [{"M": 4, "N": 4, "L": 4}]\n')
    with pytest.raises(CommandError, match="dimension 'L' is not a module constant"):
        run_import(checkout, capsys)
    assert not (imported / "kernelbench-hard").exists()


def test_numeric_stress_cases_become_the_tasks_stress_cases(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    gemm = load_task("kbh-h100-01-tiny-gemm", catalogs=[imported])
    small, large, weight, tiny = gemm.stress_cases
    # The reference returns bf16: the cases' bfloat16 entries apply, whatever their spelling.
    assert (small.name, small.input_scales, small.tolerance) == (
        "small_input",
        {0: 1e-3},
        {"atol": 5e-4, "rtol": 5e-2},  # _MED_BF16, a module constant
    )
    assert large.tolerance == {"atol": 12.0, "rtol": 12.0}  # a number is atol and rtol
    assert (weight.state_scales, weight.input_scales) == ({"weight": 1e-2}, {})
    assert weight.tolerance == {"atol": 3e-3, "rtol": 5e-2}  # "torch.bfloat16"
    assert tiny.tolerance == {}  # float32 only: the problem's tolerance stands
    upstream = tomllib.loads((gemm.folder / "task.toml").read_text())["upstream"]
    assert upstream["numeric_stress"] == {
        "file": "src/eval/numeric_stress.py",
        "problem": "01_tiny_gemm",
        "cases": ["small_input", "large_input", "small_weight", "tiny_input"],
        "dtype": "bfloat16",
    }
    assert "property_stress.py" in upstream["property_stress"]
    assert "small_input (input 0 x 0.001)" in (gemm.folder / "PROMPT.md").read_text()
    decode = load_task("kbh-h100-02-paged-decode", catalogs=[imported])
    assert decode.stress_cases == ()
    upstream = tomllib.loads((decode.folder / "task.toml").read_text())["upstream"]
    assert upstream["numeric_stress"]["cases"] == []


def test_the_task_page_shows_the_suite_the_stress_cases_and_no_unseen_shapes(
    client, db, checkout, imported, capsys
):
    run_import(checkout, capsys)
    html = client.get("/tasks/kbh-h100-01-tiny-gemm/").content.decode()
    assert 'href="/tasks/?suite=kernelbench-hard">kernelbench-hard</a>' in html
    assert "<code>small_input</code>: input 0 \u00d70.001, atol 0.0005 rtol 0.05" in html
    assert "<code>small_weight</code>: weight \u00d70.01" in html
    assert "in place of the generic scaled and outlier inputs" in html
    assert "No unseen shapes: " in html
    assert "drawn at grading time" not in html
    # A problem without stress cases says nothing of them.
    html = client.get("/tasks/kbh-h100-02-paged-decode/").content.decode()
    assert "Stress cases" not in html and "No unseen shapes: " in html


def test_a_tree_without_numeric_stress_imports_as_before(db, checkout, imported, capsys):
    shutil.rmtree(checkout / "benchmarks" / "hard" / "src")
    out = run_import(checkout, capsys)
    assert "no numeric stress cases (the tree has no src/eval/numeric_stress.py)" in out.out
    gemm = load_task("kbh-h100-01-tiny-gemm", catalogs=[imported])
    assert gemm.stress_cases == ()
    upstream = tomllib.loads((gemm.folder / "task.toml").read_text())["upstream"]
    assert "numeric_stress" not in upstream and "property_stress" not in upstream


CASE = "NumericStressCase"


MALFORMED = [
    ("_CASES = {", "not valid Python"),
    ("OTHER = {}", "no _CASES = {...} assignment"),
    (f'_CASES = {{"p": ({CASE}("a", input_scales={{0: -1.0}}),)}}', "positive finite"),
    (f'_CASES = {{"p": ({CASE}("a", input_scales={{"x": 2.0}}),)}}', "input positions"),
    (f'_CASES = {{"p": ({CASE}("a", tolerance=_NOWHERE),)}}', "'_NOWHERE' is not a module"),
    (f'_CASES = {{"p": ({CASE}("a", scales={{0: 2.0}}),)}}', "unexpected argument 'scales'"),
    ('_CASES = {"p": (make_case(),)}', "'make_case()' is not a literal"),
    (f'_CASES = {{"p": {CASE}("a", input_scales={{0: 2.0}})}}', "must be a tuple of"),
    (f'_CASES = {{"p": ({CASE}("a b", input_scales={{0: 2.0}}),)}}', "its name must be"),
    (f'_CASES = {{"p": ({CASE}("a", input_scales={{0: 2.0}}),) * 2}}', "is not a literal"),
    (
        f'_CASES = {{"p": ({CASE}("a", input_scales={{0: 2.0}}), {CASE}("a", '
        "input_scales={1: 2.0}))}",
        "names case 'a' twice",
    ),
]


def test_a_malformed_numeric_stress_file_is_refused_naming_it(db, checkout, imported, capsys):
    run_import(checkout, capsys)
    stamps = {p: p.stat().st_mtime_ns for p in (imported / "kernelbench-hard").rglob("*")}
    broken = checkout / "benchmarks" / "hard" / "src" / "eval" / "numeric_stress.py"
    for cases, message in MALFORMED:
        broken.write_text(f"from x import {CASE}\n{cases}\n")
        with pytest.raises(CommandError) as info:
            run_import(checkout, capsys)
        assert f"{broken}: " in str(info.value) and message in str(info.value), cases
    assert {p: p.stat().st_mtime_ns for p in (imported / "kernelbench-hard").rglob("*")} == stamps
