"""The pure packages import nothing of Django: they run on a GPU host with only torch."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# The pure packages, lowest layer of DESIGN.md (pyproject.toml's layers contract).
PURE = ["grader", "sandboxes", "model_server", "transcript_formats", "transcript_render"]
APPS = ["accounts", "arena", "evaluator", "tasks", "transcripts", "leaderboard"]
NOT_PURE = {"django", "rest_framework", "celery", "config", "web", *APPS}
ALLOWED_IN_ENGINE = {"torch", "triton", "grader", "sandboxes", "numpy"}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def imported_roots(path: Path) -> set[str]:
    return {name.split(".")[0] for name in imported_modules(path)}


def reaches_outside_the_pure_packages(name: str) -> bool:
    pure = {package.replace("/", ".") for package in PURE}
    if any(name == package or name.startswith(package + ".") for package in pure):
        return False
    return name.split(".")[0] in NOT_PURE


@pytest.mark.parametrize("package", PURE)
def test_pure_package_does_not_import_django(package):
    for path in (REPO / package).rglob("*.py"):
        roots = imported_roots(path)
        assert not roots & {"django", "rest_framework", "celery", "arena", "leaderboard"}, path
        outside = {n for n in imported_modules(path) if reaches_outside_the_pure_packages(n)}
        assert not outside, (path, outside)


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
        "import sys, accounts, arena, evaluator, grader, tasks, transcripts, leaderboard, web\n"
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


def test_importing_every_module_of_the_apps_loads_no_celery_app():
    """With Django's settings loaded, as in the web process: the apps' modules (their Celery
    tasks included) bind to whichever Celery app the process made, and make none themselves;
    the project's (config/celery.py) is loaded only by the processes that send or run tasks."""
    import subprocess
    import sys

    script = (
        "import importlib, pkgutil, sys, django\n"
        "django.setup()\n"
        "from celery import _state\n"
        f"for app in {[*APPS, 'web']!r}:\n"
        "    package = importlib.import_module(app)\n"
        "    for info in pkgutil.walk_packages(package.__path__, app + '.'):\n"
        "        if not info.name.endswith('__main__'):\n"
        "            importlib.import_module(info.name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('config.celery')))\n"
        "print(len(list(_state._get_active_apps())))\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "ARENA_SECRET_KEY": "test-only-secret-key",
        "ARENA_DATA_DIR": str(REPO / "var" / "test"),
    }
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "0"]
