"""Nothing left behind: a web worker killed during an upload leaves files only where the orphan
sweep looks, and the sweep removes them and never a file of a live row."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bench.archive_bombs import gzip_bomb
from bench.transcript_logs import write_codex_rollout
from tests.conftest import REPO, _worker_database_env, worker_command
from tests.waiting import wait_for
from transcripts.models import Trajectory
from transcripts.services import (
    TrajectoryRejected,
    TrajectoryTooLarge,
    trajectory_import,
    trajectory_orphans_sweep,
)
from transcripts.spool import PARTIAL_SUFFIX

# Larger than Django's FILE_UPLOAD_MAX_MEMORY_SIZE (2.5 MB): received into a temporary file.
UPLOAD_BYTES = 4_000_000
HOUR_S = 3600


@pytest.fixture
def folders(settings, tmp_path):
    """The app's folders as the server and the sweep see them (media_root set MEDIA_ROOT and
    DATA_DIR already)."""
    data, media = Path(settings.DATA_DIR), Path(settings.MEDIA_ROOT)
    settings.FILE_UPLOAD_TEMP_DIR = str(data / "tmp" / "uploads")
    Path(settings.FILE_UPLOAD_TEMP_DIR).mkdir(parents=True)
    return {"data": data, "media": media, "uploads": data / "tmp" / "uploads"}


@pytest.fixture
def live(folders, tmp_path):
    """A trajectory stored before anything is killed: its files must survive every sweep."""
    path = tmp_path / "live" / "rollout-2025-11-20T12-00-00-live.jsonl"
    write_codex_rollout(path, target_bytes=30_000)
    trajectory = trajectory_import(path=path)
    files = [Path(trajectory.raw_log.path), Path(trajectory.normalized.path)]
    return {path: path.read_bytes() for path in files}


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def entries_under(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.exists() else []


def assert_only_live_files_remain(folders, live) -> None:
    assert Trajectory.objects.count() == 1
    assert files_under(folders["media"]) == sorted(live)
    assert all(path.read_bytes() == data for path, data in live.items())
    assert entries_under(folders["uploads"]) == []
    assert entries_under(folders["data"] / "tmp" / "trajectories") == []


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


# -- the sweep ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_sweep_removes_old_leftovers_and_keeps_live_files_and_young_work(folders, live):
    data, media = folders["data"], folders["media"]
    month = next(iter(live)).parent
    upload = folders["uploads"] / "tmpab12.upload.jsonl"
    work = data / "tmp" / "trajectories" / "import-old"
    partial = month / f"abcd1234-rollout.jsonl.gz{PARTIAL_SUFFIX}"
    unreferenced = month / "deadbeef-transcript.json.gz"
    pages = data / "transcript-pages"
    page = pages / "tmp1234.tmp"
    work.mkdir(parents=True)
    pages.mkdir()
    for path in (upload, work / "raw.gz", partial, unreferenced, page):
        path.write_bytes(b"left behind")
    young = folders["uploads"] / "tmpcd34.upload.jsonl"
    young.write_bytes(b"being received")
    for path in (upload, work, partial, unreferenced, page, *live):
        age(path, 2 * HOUR_S)

    report = trajectory_orphans_sweep(max_age_s=HOUR_S)

    assert (report.temporary, report.partial, report.unreferenced, report.pages) == (2, 1, 1, 1)
    assert entries_under(folders["uploads"]) == [young]
    assert entries_under(data / "tmp" / "trajectories") == []
    assert files_under(media) == sorted(live)
    assert all(path.read_bytes() == content for path, content in live.items())
    assert not page.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "data", "error"),
    [
        ("bad.jsonl", b'{"no": "agent log"}\n', TrajectoryRejected),
        ("bomb.jsonl.gz", gzip_bomb(expanded_bytes=8 << 20), TrajectoryTooLarge),
    ],
    ids=["not-a-log", "gzip-bomb"],
)
def test_a_refused_upload_leaves_no_work_folder_and_no_file(folders, name, data, error):
    with pytest.raises(error, match=name):
        trajectory_import(data=data, filename=name, max_bytes=4 << 20)
    assert entries_under(folders["data"] / "tmp" / "trajectories") == []
    assert files_under(folders["media"]) == []


# -- killed mid-way ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(folders, tmp_path: Path, **env: str) -> tuple[subprocess.Popen, int]:
    """The app as deployed (gunicorn, one gthread worker) on this test's database and folders,
    in a process group of its own."""
    port = free_port()
    environment = {
        **os.environ,
        **_worker_database_env(),
        "ARENA_DATA_DIR": str(folders["data"]),
        "ARENA_MEDIA_ROOT": str(folders["media"]),
        "ARENA_DEBUG": "0",
        **env,
    }
    command = [
        *(sys.executable, "-m", "gunicorn", "tests.transcripts.web.paused_import_wsgi:application"),
        *(f"--bind=127.0.0.1:{port}", "--workers=1", "--worker-class=gthread", "--threads=2"),
        *("--timeout=300", "--log-level=warning"),
    ]
    log = (tmp_path / "gunicorn.log").open("wb")
    server = subprocess.Popen(
        command, cwd=REPO, env=environment, stdout=log, stderr=log, start_new_session=True
    )

    def listening() -> bool:
        assert server.poll() is None, (tmp_path / "gunicorn.log").read_text()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    wait_for(listening, timeout_s=60, what="gunicorn to listen")
    return server, port


def kill(server: subprocess.Popen) -> None:
    os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=30)


def upload_parts(token: str, task: str, log: Path) -> tuple[bytes, bytes, bytes]:
    """(request head with the form's start, the file, the form's end) of an upload to the API."""
    boundary = uuid.uuid4().hex
    form = "".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'
        for key, value in {"agent": "Killed Agent", "task": task}.items()
    )
    form += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{log.name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    data, tail = log.read_bytes(), f"\r\n--{boundary}--\r\n".encode()
    length = len(form.encode()) + len(data) + len(tail)
    head = (
        "POST /api/v1/trajectories HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Token {token}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {length}\r\nConnection: close\r\n\r\n{form}"
    )
    return head.encode(), data, tail


@pytest.fixture
def big_log(tmp_path) -> Path:
    path = tmp_path / "logs" / "rollout-2025-11-20T12-00-00-big.jsonl"
    write_codex_rollout(path, target_bytes=UPLOAD_BYTES)
    return path


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_upload_leaves_nothing_once_swept(
    folders, live, api_token, task, big_log, tmp_path
):
    server, port = serve(folders, tmp_path)
    head, data, _ = upload_parts(api_token, task.slug, big_log)
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(head + data[: len(data) // 3])
        receiving = wait_for(
            lambda: [p for p in entries_under(folders["uploads"]) if p.stat().st_size > 0],
            timeout_s=60,
            what="Django to spool the upload to its temporary folder",
        )
        kill(server)
    assert receiving[0].parent == folders["uploads"]  # the app's folder, not /tmp
    assert Trajectory.objects.count() == 1

    trajectory_orphans_sweep(max_age_s=0)

    assert_only_live_files_remain(folders, live)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("pause_at", "left_in"),
    [("raw", "work folder"), ("placed", "media")],
    ids=["while-the-raw-log-is-written", "after-the-files-move-before-the-commit"],
)
def test_a_worker_killed_while_a_log_is_stored_leaves_nothing_once_swept(
    folders, live, api_token, task, big_log, tmp_path, pause_at, left_in
):
    marker = tmp_path / "paused"
    server, port = serve(
        folders, tmp_path, PAUSE_IMPORT_AT=pause_at, PAUSE_IMPORT_MARKER=str(marker)
    )
    head, data, tail = upload_parts(api_token, task.slug, big_log)
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(head + data + tail)
        wait_for(marker.exists, timeout_s=120, what=f"the import to pause at {pause_at!r}")
        kill(server)
    work = folders["data"] / "tmp" / "trajectories"
    if left_in == "work folder":
        [folder] = entries_under(work)
        assert (folder / "raw.gz").stat().st_size > 0
        assert files_under(folders["media"]) == sorted(live)
    else:
        assert len(files_under(folders["media"])) == len(live) + 2
    assert Trajectory.objects.count() == 1

    trajectory_orphans_sweep(max_age_s=0)

    assert_only_live_files_remain(folders, live)


# -- the sweep runs on its own -------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_a_worker_of_the_default_queue_sweeps_orphans_when_it_starts(folders, tmp_path):
    orphan = folders["uploads"] / "tmpold.upload.jsonl"
    orphan.write_bytes(b"left by a killed worker")
    age(orphan, 2 * HOUR_S)
    environment = {
        **os.environ,
        **_worker_database_env(),
        "ARENA_DATA_DIR": str(folders["data"]),
        "ARENA_MEDIA_ROOT": str(folders["media"]),
        "ARENA_ORPHAN_MAX_AGE_S": str(HOUR_S),
    }
    # A broker of its own (files under its data folder): it takes no other test's messages.
    for name in ("ARENA_BROKER_URL", "ARENA_BROKER_DIR"):
        environment.pop(name, None)
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        worker_command(queues="default", hostname=f"orphans-{os.getpid()}@%h"),
        cwd=REPO,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(
            lambda: not orphan.exists(),
            timeout_s=120,
            what="the worker's first orphan sweep",
        )
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
