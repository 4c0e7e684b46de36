"""The command line's preludes on a real GPU (grader/preludes.py): the judge's child compiles
the torch.compile baseline while the command line gets ready, and the candidate is timed only
after that warm-up has ended.

python -m pytest --noconftest -m gpu tests/evaluator/gpu/test_preludes_gpu.py
"""

import json
from pathlib import Path

import pytest
import torch

from grader.cli import main as cli_main
from tests.evaluator.test_preludes import PROBLEM, SOLUTION
from tests.processes import repo_python

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

HERE = Path(__file__).resolve().parent
SILU_TRITON = HERE.parent / "solutions" / "silu_triton.py"


def run_cli(task: str, solution: Path, capsys) -> dict:
    argv = ["evaluate", "--task", task, "--solution", str(solution), "--device", "cuda"]
    cli_main([*argv, "--json", "--timeout", "300"])
    return json.loads(capsys.readouterr().out)


def assert_warmed_before_timing(result: dict) -> None:
    warmup = result["environment"]["compile_warmup"]
    assert warmup["warmed"] is True, warmup
    assert warmup["compile_s"] > 0
    # The candidate reached its gate and was timed after the warm-up had ended.
    assert warmup["candidate_waited_s"] is not None and warmup["candidate_waited_s"] >= 0
    # The judge timed the model the warm-up compiled, in the same child, without compiling again.
    assert warmup["compiled_model_kept"] is True, warmup
    seen = [row for row in result["per_shape"] if row["seen"]]
    assert seen and all(row["compile_ms"] and row["candidate_ms"] for row in seen)


@pytest.fixture(autouse=True)
def own_baseline_cache(tmp_path, monkeypatch):
    """Baseline and probe caches of the test's own: the first evaluation of a task finds them
    empty (no compiled time, no analysis of a KernelBench file)."""
    monkeypatch.setenv("ARENA_BASELINE_CACHE", str(tmp_path / "baselines.json"))
    monkeypatch.setenv("ARENA_PROBE_CACHE", str(tmp_path / "probes.json"))


def test_a_catalogue_task_is_warmed_up_and_timed_after_it(capsys):
    result = run_cli("silu", SILU_TRITON, capsys)
    assert result["status"] == "passed", result["gates"]
    assert_warmed_before_timing(result)
    assert result["summary"]["speedup_vs_compile"] is not None
    # The next evaluation of the task finds the compiled time in the cache: no judge compiles,
    # and none is warmed up, so the candidate's gate opens at once.
    again = run_cli("silu", SILU_TRITON, capsys)
    assert again["status"] == "passed", again["gates"]
    warmup = again["environment"]["compile_warmup"]
    assert warmup["needless"] is True and warmup["warmed"] is False, warmup
    assert warmup["seconds"] < 5, warmup
    assert again["summary"]["speedup_vs_compile"] is not None


def test_a_kernelbench_file_is_analysed_and_warmed_up_by_the_children(tmp_path, capsys):
    problem, solution = tmp_path / "19_ReLU_times_two.py", tmp_path / "solution.py"
    problem.write_text(PROBLEM)
    solution.write_text(SOLUTION)
    result = run_cli(str(problem), solution, capsys)
    assert result["gates"]["correctness"]["passed"] is True, result["gates"]
    assert result["gates"]["generalization"]["passed"] is True, result["gates"]
    assert_warmed_before_timing(result)
    # The next command line of the same file, in a fresh process as a person runs it: the
    # file's shape read from the analysis the first kept, the baseline cache checked while the
    # process's import of torch is under way, and no warm-up.
    argv = ["evaluate", "--task", str(problem), "--solution", str(solution), "--device", "cuda"]
    again = json.loads(repo_python("-m", "grader", *argv, "--json", "--timeout", "300").stdout)
    assert again["gates"]["correctness"]["passed"] is True, again["gates"]
    warmup = again["environment"]["compile_warmup"]
    assert warmup["needless"] is True and warmup["warmed"] is False, warmup
    assert again["summary"]["speedup_vs_compile"] is not None
