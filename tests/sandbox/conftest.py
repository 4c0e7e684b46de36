"""Backends under test, each built for real: bwrap where namespaces work, docker where an
engine answers (CI starts one: `make system-deps`), with the small image built on first use."""

import json
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandboxes.backends import Limits, Outcome, ProcessSandbox, bwrap_usable, sandbox_for
from sandboxes.backends import scrubbed_env as _scrubbed_env
from tests.conftest import build_sandbox_image

REPO = Path(__file__).resolve().parents[2]


def _docker_usable() -> bool:
    from sandboxes.docker import docker_usable

    return docker_usable()


NAMESPACE_BACKENDS = [
    pytest.param(
        "bwrap",
        marks=pytest.mark.skipif(
            not bwrap_usable(), reason="bubblewrap is not installed or cannot create namespaces"
        ),
    ),
    pytest.param(
        "docker",
        marks=pytest.mark.skipif(not _docker_usable(), reason="no Docker engine answers here"),
    ),
]


@pytest.fixture(scope="session")
def docker_image() -> str:
    """The minimal flavour: Python, a shell and coreutils; enough for every isolation test."""
    return build_sandbox_image("minimal")


@pytest.fixture
def make_sandbox(request):
    def make(backend: str) -> ProcessSandbox:
        if backend == "docker":
            from sandboxes.docker import DockerSandbox

            return DockerSandbox(image=request.getfixturevalue("docker_image"))
        return sandbox_for(backend, allow_unisolated=backend == "process")

    return make


@dataclass
class Ran:
    outcome: Outcome
    report: dict
    workdir: Path


@pytest.fixture
def run_code(make_sandbox, tmp_path):
    """Run a Python snippet in the backend; the snippet may write report.json in its folder."""

    def run(backend: str, code: str, *, allow_hosts=(), **limits) -> Ran:
        workdir = tmp_path / "work"
        workdir.mkdir(exist_ok=True)
        script = workdir / "snippet.py"
        script.write_text(textwrap.dedent(code))
        limits.setdefault("timeout_s", 60)
        outcome = make_sandbox(backend).run(
            [sys.executable, str(script)],
            workdir=workdir,
            env=_scrubbed_env({}, home=workdir),
            limits=Limits(**limits),
            allow_hosts=allow_hosts,
        )
        report_path = workdir / "report.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else {}
        return Ran(outcome, report, workdir)

    return run
