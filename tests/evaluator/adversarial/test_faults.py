"""Solutions that break their own process end their own evaluation only: it fails as the
solution's fault (never the grader's error), nothing of theirs outlives it, and the next
evaluation on the same grader is judged right."""

import uuid
from pathlib import Path

import pytest

from grader import EvaluateOptions, evaluate, load_task
from sandboxes.backends import bwrap_usable
from tests.processes import processes_called

pytestmark = pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap cannot run here")

SOLUTIONS = Path(__file__).resolve().parent / "solutions"
HONEST = Path(__file__).resolve().parents[1] / "solutions" / "silu_triton.py"
# Enough for torch to import under the address-space limit, little enough to fill in a moment.
MEMORY_BYTES = 1024**3
PR_SET_NAME = 15
NAME_PROCESS = f"import ctypes; ctypes.CDLL(None).prctl({PR_SET_NAME}, b'%s', 0, 0, 0)"


@pytest.fixture(scope="module")
def silu():
    return load_task("silu")


def marked(tmp_path: Path, name: str) -> tuple[Path, str]:
    """A copy of the solution that first names its process with a marker of this test's own:
    every process it forks inherits the name (an environment variable set at run time would
    not show in /proc, and the grader starts the candidate with an environment of its own)."""
    marker = f"flt{uuid.uuid4().hex[:12]}"  # the kernel keeps 15 characters of a name
    code = (SOLUTIONS / name).read_text()
    solution = tmp_path / name
    solution.write_text(f"{NAME_PROCESS % marker}\n{code}")
    return solution, marker


def grade_alone(silu, tmp_path: Path, name: str, **options):
    """The solution's result, once nothing of it runs any more and an honest solution graded
    right after it has passed."""
    solution, marker = marked(tmp_path, name)
    broken = evaluate(silu, solution, "cpu", EvaluateOptions(timeout_s=120, **options))
    assert broken.status == "failed", broken.gates
    assert processes_called(marker) == []
    honest = evaluate(silu, HONEST, "cpu", EvaluateOptions())
    assert (honest.status, honest.flags) == ("passed", []), honest.gates
    return broken


def test_a_solution_that_exhausts_memory_fails_alone(silu, tmp_path):
    broken = grade_alone(silu, tmp_path, "exhausts_memory.py", memory_bytes=MEMORY_BYTES)
    compile_gate = broken.gates["compile"]
    assert compile_gate.passed is False
    # Killed with its tree by the memory cgroup where the grader can make one (root), else
    # refused by each process's own address-space limit.
    error = compile_gate.detail["error"]
    assert "went over the memory limit" in error or "MemoryError" in error, error


def test_a_solution_that_segfaults_fails_alone(silu, tmp_path):
    broken = grade_alone(silu, tmp_path, "segfaults.py")
    assert broken.gates["compile"].passed is True
    assert broken.gates["correctness"].passed is False
    # bwrap passes on the child's death by SIGSEGV (11) as the shell does: 128 + 11.
    error = broken.gates["correctness"].detail["error"]
    assert "SIGSEGV" in error or "code 139" in error, error


def test_a_solution_that_forks_200_detached_processes_fails_alone_and_leaves_none(silu, tmp_path):
    broken = grade_alone(silu, tmp_path, "forks_200.py")
    assert broken.gates["compile"].passed is True
    assert "this solution only forks" in broken.gates["correctness"].detail["error"]
