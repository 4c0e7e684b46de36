"""Rows and logs for the transcript web tests: a task, an agent, a run, real generated logs."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from bench.transcript_logs import write_claude_code_session, write_codex_rollout


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path / "data"  # rendered pages are cached under it
    return settings.MEDIA_ROOT


@pytest.fixture
def task(db):
    from tasks.models import Task

    return Task.objects.create(
        slug="demo/softmax",
        title="Softmax",
        category="torch2triton",
        suite="demo",
        dtype="fp32",
        regime="memory",
        folder="demo/softmax",
        version_hash="0" * 64,
    )


@pytest.fixture
def uploader(db):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("uploader", password="not-used-here-1")


@pytest.fixture
def run(task, uploader):
    """A run of the uploader's own agent, so that the uploader may attach its log."""
    from arena.models import Agent, Run

    agent = Agent.objects.create(slug="claude-code", name="Claude Code", owner=uploader)
    return Run.objects.create(agent=agent, task=task, status=Run.Status.DONE, created_by=uploader)


@pytest.fixture
def api_token(uploader):
    from tests.api.factories import token_for

    return token_for(uploader).key


@pytest.fixture
def codex_log(tmp_path) -> tuple[Path, object]:
    path = tmp_path / "logs" / "rollout-2025-11-20T12-00-00-demo.jsonl"
    expected = write_codex_rollout(path, target_bytes=60_000)
    return path, expected


@pytest.fixture
def claude_folder(tmp_path) -> tuple[Path, object]:
    """A Claude Code 2.1.x session: the main file and its subagents folder."""
    folder = tmp_path / "claude"
    expected = write_claude_code_session(
        folder / "sess-demo.jsonl", target_bytes=150_000, events=150
    )
    return folder, expected


def zip_folder(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def stored_files(media_root: Path) -> list[Path]:
    return [p for p in Path(media_root).rglob("*") if p.is_file()]
