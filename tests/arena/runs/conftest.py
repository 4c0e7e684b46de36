"""Agents, runs and worker processes for the run tests.

Each worker test gets queues of its own (ARENA_AGENTS_QUEUE, ARENA_BUILD_QUEUE and
ARENA_GPU_QUEUE named for the test), so the suite's shared worker, which serves the default
queues, never takes its runs.
"""

import os
import signal
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.test import override_settings

from arena.models import Agent, Run
from tasks.models import Task
from tests.conftest import REPO, worker_command, worker_env
from tests.waiting import wait_for

# Quick to grade on CPU under the Triton interpreter, with a correct starter kernel.
TASK = "tt-vector-add"


@dataclass
class Worker:
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL to the worker and its pool processes, as when a host dies."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        """Ends the worker once its test is done. Its queues are the test's own, so a warm
        shutdown would hand nothing back, and it takes 6 s or more: the consumer's 2 s drain,
        the pool, then the exit of an interpreter that imported torch."""
        if self.process.poll() is None:
            self.kill()


def start_worker(*, queues: list[str], log_path: Path, **env_extra: str) -> Worker:
    """A real `celery worker` on `queues`, in a session of its own so it can be killed whole."""
    env = worker_env(**env_extra)
    command = worker_command(queues=",".join(queues), hostname=f"runs-{uuid.uuid4().hex[:8]}@%h")
    log = log_path.open("wb")
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    worker = Worker(process, log_path)

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the worker exited:\n{worker.log()[-4000:]}")
        return " ready." in worker.log()

    wait_for(ready, timeout_s=90, what="a Celery worker to start")
    return worker


@dataclass(frozen=True)
class Queues:
    agents: str
    build: str
    gpu: str

    def env(self) -> dict[str, str]:
        return {
            "ARENA_AGENTS_QUEUE": self.agents,
            "ARENA_BUILD_QUEUE": self.build,
            "ARENA_GPU_QUEUE": self.gpu,
        }


@pytest.fixture
def run_queues():
    """Queues of this test's own, used by the test process and by its workers."""
    tag = uuid.uuid4().hex[:8]
    queues = Queues(agents=f"agents-{tag}", build=f"build-{tag}", gpu=f"gpu-{tag}")
    with override_settings(
        ARENA_AGENTS_QUEUE=queues.agents,
        ARENA_BUILD_QUEUE=queues.build,
        ARENA_GPU_QUEUE=queues.gpu,
    ):
        yield queues


@pytest.fixture
def workers(run_queues, tmp_path):
    """Starts workers on demand; all are stopped at the end of the test."""
    started = []

    def start(name: str, queues: list[str], **env: str):
        worker = start_worker(
            queues=queues, log_path=tmp_path / f"{name}.log", **run_queues.env(), **env
        )
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def vector_add(catalog_tasks) -> Task:
    return Task.objects.get(slug=TASK)


def make_agent(slug: str, harness: str, **config) -> Agent:
    return Agent.objects.create(slug=slug, name=slug, harness=harness, config=config)


def command_agent(slug: str, template: str, **options) -> Agent:
    return make_agent(slug, "command", template=template, **options)


def wait_for_status(run: Run, *statuses: str, timeout_s: float = 240) -> Run:
    def reached():
        fresh = Run.objects.get(pk=run.pk)
        return fresh if fresh.status in statuses else None

    return wait_for(reached, timeout_s=timeout_s, what=f"run {run.pk} to reach {statuses}")
