"""Fixtures shared by the suite, including a real Celery worker process.

The worker is started once per session against the test database (a SQLite file or the
PostgreSQL test database) and the same broker as the tests, embedded or Redis.
"""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

import config.celery  # noqa: F401 - the Celery app that the tests' enqueued tasks go through
from tests.waiting import wait_for

REPO = Path(__file__).resolve().parent.parent

# What makes a test talk to the database, the broker or the cache: `make test-services` runs
# these again against PostgreSQL and Redis (`-m services`); the rest need neither.
_SERVICE_MARKERS = ("django_db", "worker")
_SERVICE_FIXTURES = {
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
    "live_server",
    "celery_worker_process",
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if any(item.get_closest_marker(m) for m in _SERVICE_MARKERS) or uses & _SERVICE_FIXTURES:
            item.add_marker(pytest.mark.services)


# What makes a test render pages or serve static files: the pages name each static file by its
# content hash, which only the collected manifest knows (config/settings.py, STORAGES).
_PAGE_FIXTURES = {"client", "admin_client", "async_client", "live_server", "rf"} | _SERVICE_FIXTURES


@pytest.fixture(scope="session")
def collected_static():
    """The static files collected into this data folder's STATIC_ROOT, hashed and compressed as
    deployed; collected again only when a source file changed since (the first run of a fresh
    data folder takes about a minute)."""
    from web.static_files import static_files_collect

    static_files_collect()


@pytest.fixture(autouse=True)
def _static_for_pages(request):
    if request.node.get_closest_marker("django_db") or set(request.fixturenames) & _PAGE_FIXTURES:
        request.getfixturevalue("collected_static")


@pytest.fixture(autouse=True)
def _grading_heartbeat_outside_test_transactions(request):
    """A grading's heartbeat renews its lease from a thread of its own, on a connection of its
    own, which cannot see the rows of a test wrapped in a transaction: after its first beat it
    would find the evaluation gone and stop the grading (evaluator/heartbeat.py). Inside such a
    test it beats once an hour; tests that commit (transactional_db, workers) beat as deployed."""
    marker = request.node.get_closest_marker("django_db")
    in_transaction = "db" in request.fixturenames or (
        marker is not None and not marker.kwargs.get("transaction")
    )
    if not in_transaction or {"transactional_db", "live_server"} & set(request.fixturenames):
        yield
        return
    settings = request.getfixturevalue("settings")
    settings.ARENA_GRADER_HEARTBEAT_S = 3600
    yield


@pytest.fixture(scope="session")
def live_server(request, collected_static):
    """pytest-django's live server, serving static files as deployed: WhiteNoise, from the
    collected files (pytest-django's own handler serves the source folders, which hold no
    hashed names)."""
    from pytest_django.live_server_helper import LiveServer

    addr = (
        request.config.getvalue("liveserver")
        or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS")
        or "localhost"
    )
    server = LiveServer(addr, start=False)
    server.thread.static_handler = _as_deployed
    server.start()
    yield server
    server.stop()


def _as_deployed(application):
    return application


def _worker_database_env() -> dict[str, str]:
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return {"ARENA_SQLITE_PATH": str(db["NAME"])}
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return {"DATABASE_URL": f"postgres://{auth}{db['HOST']}{port}/{db['NAME']}"}


def worker_env(**extra: str) -> dict[str, str]:
    """A test worker's environment: this test database, grading on the CPU; `extra` wins."""
    defaults = {"ARENA_GRADER_DEVICE": "cpu", "ARENA_GRADER_TIMEOUT_S": "120"}
    return {**os.environ, **_worker_database_env(), **defaults, **extra}


def worker_command(*, queues: str, hostname: str) -> list[str]:
    """A real `celery worker` of concurrency 1 on `queues`."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "--queues",
        queues,
        "--concurrency",
        "1",
        "--loglevel",
        "INFO",
        "--hostname",
        hostname,
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]


def _purge_broker() -> None:
    if settings.CELERY_BROKER_URL == settings.EMBEDDED_BROKER_URL:
        shutil.rmtree(settings.ARENA_BROKER_DIR, ignore_errors=True)
        for key in ("data_folder_in", "control_folder"):
            Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS[key]).mkdir(parents=True, exist_ok=True)
        return
    from config.celery import app

    with app.connection_for_write() as conn:
        for queue in ("default", "agents", "build", "gpu"):
            conn.default_channel.queue_purge(queue)


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker, tmp_path_factory):
    """A real `celery worker` process on queues default, agents, build and gpu."""
    _purge_broker()
    log_path = tmp_path_factory.mktemp("worker") / "worker.log"
    # It sweeps for lost runs and gradings once, at its start, never again: a run test's lost
    # grading (a lease run out in the test's own queues) is that test's workers' to take over.
    # Swept here every 30 s, it was taken over by this worker and its 120 s grading timeout in
    # some whole passes (a test of 20 s took 133-146 s).
    env = worker_env(ARENA_RUN_SWEEP_S=str(24 * 3600))
    command = worker_command(
        queues="default,agents,build,gpu", hostname=f"test-worker-{os.getpid()}@%h"
    )
    with log_path.open("wb") as log:
        # A session of its own: its pool's child goes with it, never left holding a database
        # connection when the test database is dropped.
        proc = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    proc.log_path = log_path  # type: ignore[attr-defined]

    def ready() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the worker exited:\n{log_path.read_text()[-4000:]}")
        return b" ready." in log_path.read_bytes()

    wait_for(ready, timeout_s=90, what="the Celery worker to start")
    yield proc
    # A warm shutdown; then whatever of its session is left goes, its pool's child included.
    proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# A task the worker took, and its end (celery.worker.strategy's and celery.app.trace's lines).
_TASK_RECEIVED = re.compile(rb"Task \S+\[([0-9a-f-]+)\] received")
_TASK_ENDED = re.compile(rb"Task \S+\[([0-9a-f-]+)\] (?:succeeded|raised|failed|retry|rejected)")


def wait_worker_idle(log_path: Path, *, quiet_s: float = 0.5, timeout_s: float = 120) -> None:
    """Until every task the worker took has ended and none has come for `quiet_s` (a task's
    own follow-ups are queued as it commits), or `timeout_s` has passed."""
    deadline = time.monotonic() + timeout_s
    seen, quiet_since = b"", time.monotonic()
    while time.monotonic() < deadline:
        text = log_path.read_bytes()
        if text != seen:
            seen, quiet_since = text, time.monotonic()
        pending = set(_TASK_RECEIVED.findall(text)) - set(_TASK_ENDED.findall(text))
        if not pending and time.monotonic() - quiet_since >= quiet_s:
            return
        time.sleep(0.05)


@pytest.fixture
def celery_worker(celery_worker_process):
    """The session's worker, for one test: at the test's end its tasks are waited for (those the
    test queued, and those they queued in turn), so that none is still writing when the test's
    rows are truncated (a TRUNCATE beside a worker's transaction can deadlock)."""
    yield celery_worker_process
    wait_worker_idle(celery_worker_process.log_path)


@pytest.fixture
def catalog_tasks(db):
    """The real catalogue, synced into Task rows."""
    from grader.taskspec import DEFAULT_CATALOG
    from tasks.services import task_sync

    report = task_sync(catalog=DEFAULT_CATALOG)
    assert not report.errors, report.errors
    return report


@pytest.fixture
def solutions_dir() -> Path:
    return REPO / "tests" / "evaluator" / "solutions"


def build_sandbox_image(flavour: str) -> str:
    """sandboxes/image/build.sh for this checkout's interpreter; returns the image's name."""
    built = subprocess.run(
        [str(REPO / "sandboxes" / "image" / "build.sh"), flavour],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHON": sys.executable},
    )
    assert built.returncode == 0, built.stderr
    return built.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def full_sandbox_image():
    """The docker sandbox's full image (torch, triton), built for this checkout's interpreter on
    first use, as `make sandbox-image` does; its tag pins its contents, so an unchanged machine
    reuses it. ARENA_SANDBOX_IMAGE names it for the session."""
    image = build_sandbox_image("full")
    # In this process through settings; in the workers the tests start, through their settings.
    with pytest.MonkeyPatch.context() as patch, override_settings(ARENA_SANDBOX_IMAGE=image):
        patch.setenv("ARENA_SANDBOX_IMAGE", image)
        yield image
