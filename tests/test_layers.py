"""The pure packages import nothing of Django: they run on a GPU host with only torch."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PURE = ["grader", "sandboxes", "transcripts/formats", "transcripts/render"]
ALLOWED_IN_ENGINE = {"torch", "triton", "grader", "sandboxes", "numpy"}


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", PURE)
def test_pure_package_does_not_import_django(package):
    for path in (REPO / package).rglob("*.py"):
        roots = imported_roots(path)
        assert not roots & {"django", "rest_framework", "celery", "arena", "leaderboard"}, path


def test_engine_imports_only_torch_triton_and_the_standard_library():
    import sys

    for path in (REPO / "grader").rglob("*.py"):
        outside = {r for r in imported_roots(path) if r not in sys.stdlib_module_names}
        assert outside <= ALLOWED_IN_ENGINE - {"numpy"}, (path, outside)


def test_importing_the_domain_packages_starts_no_celery_app():
    """The Celery app is the project's (config/celery.py): a script that imports the domain's
    packages, the grader's engine among them, gets neither Celery nor Django's settings."""
    import subprocess
    import sys

    script = (
        "import sys, arena, evaluator, grader, tasks, transcripts, leaderboard\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'celery', 'config'}))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_sandboxes_import_only_the_standard_library_and_the_docker_sdk():
    """A GPU host running only the grader imports them with nothing else installed; the Docker
    SDK is imported by the docker backend alone, which is loaded only when docker is asked for."""
    import sys

    for path in (REPO / "sandboxes").rglob("*.py"):
        outside = {r for r in imported_roots(path) if r not in sys.stdlib_module_names}
        allowed = {"sandboxes", "docker", "requests"} if path.name == "docker.py" else {"sandboxes"}
        assert outside <= allowed, (path, outside)
