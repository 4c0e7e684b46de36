"""The grader's candidate child in the docker sandbox, from the full image (torch, triton)."""

import pytest

from grader import EvaluateOptions, evaluate, load_task
from tests.sandbox.conftest import _docker_usable

pytestmark = pytest.mark.skipif(not _docker_usable(), reason="no Docker engine answers here")


def grade_in_docker(solution):
    return evaluate(load_task("silu"), solution, "cpu", EvaluateOptions(sandbox="docker"))


def test_an_honest_solution_passes_inside_a_container(full_sandbox_image, solutions_dir):
    result = grade_in_docker(solutions_dir / "silu_triton.py")
    assert result.environment["sandbox"] == "docker"
    assert result.status == "passed", result.gates
    assert result.gates["generalization"].passed is True


def test_a_verdict_printed_inside_a_container_is_ignored(full_sandbox_image, solutions_dir):
    result = grade_in_docker(solutions_dir / "prints_fake_verdict.py")
    assert result.status == "failed"
    assert result.gates["correctness"].passed is False
    assert '"reward": 99.0' in result.log
