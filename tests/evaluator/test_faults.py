"""Solutions that break their own process end their own evaluation only: it fails as the
solution's fault (never the grader's error), nothing of theirs outlives it, and the next
evaluation on the same grader is judged right."""

import os
import textwrap
import uuid
from pathlib import Path

import pytest

from evaluator.engine import EvaluateOptions, evaluate, load_task
from evaluator.engine.sandbox import bwrap_usable

pytestmark = pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap cannot run here")

ALLOCATES_UNTIL_KILLED = """
import torch.nn as nn

hoard = []
while True:
    hoard.append(bytearray(64 * 1024 * 1024))
    for page in range(0, len(hoard[-1]), 4096):
        hoard[-1][page] = 1  # touched, so the memory is really taken
"""

SEGFAULTS = """
import ctypes
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        ctypes.string_at(0)  # reads address 0: SIGSEGV
        return x
"""

FORKS_200 = """
import os, time
import torch.nn as nn

# MARKER
for _ in range(200):
    if os.fork() == 0:
        os.setsid()  # detached: only the sandbox's end can take it
        time.sleep(600)
        os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x):
        return x * 0
"""


@pytest.fixture(scope="module")
def silu():
    return load_task("silu")


def survivors(marker: str) -> list[str]:
    """Host processes whose command line or environment holds the marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or entry.name == str(os.getpid()):
            continue
        try:
            seen = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in seen and state != "Z":
            found.append(entry.name)
    return found


def grade_then_grade_honest(silu, tmp_path, code: str, solutions_dir, **options):
    solution = tmp_path / "breaks.py"
    solution.write_text(textwrap.dedent(code))
    broken = evaluate(silu, solution, "cpu", EvaluateOptions(timeout_s=120, **options))
    honest = evaluate(silu, solutions_dir / "silu_triton.py", "cpu", EvaluateOptions())
    assert honest.status == "passed", honest.gates
    assert honest.flags == []
    return broken


def test_a_solution_that_exhausts_memory_fails_alone(silu, tmp_path, solutions_dir):
    broken = grade_then_grade_honest(
        silu, tmp_path, ALLOCATES_UNTIL_KILLED, solutions_dir, memory_bytes=3 * 1024**3
    )
    assert broken.status == "failed", broken.gates
    assert broken.gates["compile"].passed is False
    assert "killed" in broken.gates["compile"].detail["error"].lower() or "memory" in (
        broken.gates["compile"].detail["error"].lower()
    )


def test_a_solution_that_segfaults_fails_alone(silu, tmp_path, solutions_dir):
    broken = grade_then_grade_honest(silu, tmp_path, SEGFAULTS, solutions_dir)
    assert broken.status == "failed", broken.gates
    assert broken.gates["compile"].passed is True
    assert broken.gates["correctness"].passed is False
    # bwrap hands on the child's death by SIGSEGV (11) as the shell does: exit code 128 + 11.
    error = broken.gates["correctness"].detail["error"]
    assert "SIGSEGV" in error or "code 139" in error, error


def test_a_solution_that_forks_200_processes_fails_alone_and_leaves_none(
    silu, tmp_path, solutions_dir
):
    marker = f"fork-marker-{uuid.uuid4().hex}"
    code = FORKS_200.replace("# MARKER", f"# {marker}\nos.environ['FORK_MARKER'] = {marker!r}")
    broken = grade_then_grade_honest(silu, tmp_path, code, solutions_dir)
    assert broken.status == "failed", broken.gates
    assert broken.gates["correctness"].passed is False  # x * 0 is not silu
    assert survivors(marker) == []
