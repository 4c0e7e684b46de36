import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grader.taskspec import DEFAULT_CATALOG
from tasks.models import Task
from tasks.services import task_sync


@pytest.fixture
def catalog_copy(tmp_path) -> Path:
    target = tmp_path / "catalog"
    shutil.copytree(DEFAULT_CATALOG, target)
    return target


def test_sync_tasks_command_is_idempotent(db, capsys):
    call_command("sync_tasks")
    assert "1 created" in capsys.readouterr().out or Task.objects.count() >= 1
    count = Task.objects.count()
    call_command("sync_tasks")
    assert "0 created, 0 updated" in capsys.readouterr().out
    assert Task.objects.count() == count
    silu = Task.objects.get(slug="silu")
    assert silu.category == "torch2triton" and silu.folder == "core/silu"
    assert "Triton kernel" in silu.prompt


def test_changed_task_gets_a_new_version_hash(db, catalog_copy):
    task_sync(catalog=catalog_copy)
    before = Task.objects.get(slug="silu").version_hash
    reference = catalog_copy / "core" / "silu" / "reference.py"
    reference.write_text(reference.read_text() + "\n# clarified\n")
    report = task_sync(catalog=catalog_copy)
    assert report.updated == ["silu"]
    assert Task.objects.get(slug="silu").version_hash != before


def test_one_broken_manifest_syncs_nothing_and_names_it(db, catalog_copy):
    broken = catalog_copy / "core" / "broken"
    broken.mkdir()
    (broken / "task.toml").write_text('slug = "broken"\n')
    (broken / "reference.py").write_text("")
    with pytest.raises(CommandError, match=r"broken/task.toml: field 'title'"):
        call_command("sync_tasks", "--catalog", str(catalog_copy))
    assert Task.objects.count() == 0


def test_removed_task_is_deactivated_not_deleted(db, catalog_copy):
    task_sync(catalog=catalog_copy)
    shutil.rmtree(catalog_copy / "core" / "silu")
    report = task_sync(catalog=catalog_copy)
    assert report.deactivated == ["silu"]
    assert Task.objects.get(slug="silu").is_active is False


def test_validate_tasks_command_checks_tasks_on_cpu(capsys):
    call_command("validate_tasks", "silu", "t2c-gelu-tanh", "tt-vector-add")
    out = capsys.readouterr().out
    assert "ok   silu" in out and "ok   tt-vector-add" in out
    assert "3 tasks valid" in out


def test_validate_tasks_command_fails_on_a_broken_task(tmp_path, settings):
    folder = tmp_path / "catalog" / "core" / "wrong-bytes"
    shutil.copytree(DEFAULT_CATALOG / "core" / "silu", folder)
    toml = folder / "task.toml"
    toml.write_text(
        toml.read_text()
        .replace('bytes = "8 * N"', 'bytes = "64 * N"')
        .replace('slug = "silu"', 'slug = "wrong-bytes"')
    )
    settings.ARENA_CATALOG_DIR = tmp_path / "catalog"
    with pytest.raises(CommandError, match="1 of 1 tasks failed: wrong-bytes"):
        call_command("validate_tasks", "--no-starters")
