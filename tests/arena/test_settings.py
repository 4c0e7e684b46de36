"""Settings load from the environment in a fresh interpreter, as a deployment starts."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def load_settings(
    env: dict[str, str], expression: str, data_dir: Path = REPO / "var" / "test"
) -> subprocess.CompletedProcess:
    code = (
        f"import django; django.setup(); from django.conf import settings as s; print({expression})"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "ARENA_DATA_DIR": str(data_dir),
            **env,
        },
        check=False,
    )


def test_missing_secret_key_stops_start_up_unless_debug(tmp_path):
    refused = load_settings({}, "s.DEBUG", tmp_path)
    assert refused.returncode != 0
    assert "ARENA_SECRET_KEY is not set" in refused.stderr
    allowed = load_settings({"ARENA_DEBUG": "1"}, "s.DEBUG", tmp_path)
    assert allowed.stdout.strip() == "True"


def test_a_debug_start_leaves_a_key_that_later_commands_in_a_new_shell_use(tmp_path):
    # `make run` starts in debug mode; `manage.py createsuperuser` later runs without it.
    first = load_settings({"ARENA_DEBUG": "1"}, "s.SECRET_KEY", tmp_path)
    key_file = tmp_path / "secret-key"
    assert first.returncode == 0, first.stderr
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    key = key_file.read_text().strip()
    assert len(key) >= 50 and first.stdout.strip() == key
    later = load_settings({}, "s.SECRET_KEY, s.DEBUG", tmp_path)
    assert later.returncode == 0, later.stderr
    assert later.stdout.strip() == f"{key} False"
    # A deployment's own key wins over the file.
    assert (
        load_settings({"ARENA_SECRET_KEY": "k" * 50}, "s.SECRET_KEY", tmp_path).stdout.strip()
        == "k" * 50
    )
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".secret-key-")] == []


def test_embedded_defaults_are_sqlite_in_wal_mode_and_a_file_broker():
    out = load_settings(
        {"ARENA_SECRET_KEY": "k"},
        "s.DATABASES['default']['ENGINE'], s.DATABASES['default']['OPTIONS']['init_command'],"
        " s.CELERY_BROKER_URL, s.DEBUG",
    )
    assert out.returncode == 0, out.stderr
    assert "sqlite3" in out.stdout and "journal_mode=WAL" in out.stdout
    assert "filesystem://" in out.stdout and out.stdout.strip().endswith("False")


def test_database_url_and_broker_url_switch_to_postgres_and_redis():
    out = load_settings(
        {
            "ARENA_SECRET_KEY": "k",
            "DATABASE_URL": "postgres://u@db.internal:5432/arena",
            "ARENA_BROKER_URL": "redis://cache.internal:6379/0",
        },
        "s.DATABASES['default']['ENGINE'], s.DATABASES['default']['HOST'], s.CELERY_BROKER_URL",
    )
    assert out.returncode == 0, out.stderr
    assert "postgresql" in out.stdout and "db.internal" in out.stdout
    assert "redis://cache.internal:6379/0" in out.stdout


def test_bad_boolean_in_the_environment_stops_start_up():
    out = load_settings({"ARENA_SECRET_KEY": "k", "ARENA_DEBUG": "maybe"}, "s.DEBUG")
    assert out.returncode != 0
    assert "ARENA_DEBUG='maybe' is not a boolean" in out.stderr


@pytest.mark.parametrize(
    ("variable", "refused", "given", "read"),
    [
        ("ARENA_GRADER_DEVICE", "gpu", " CPU ", "cpu"),
        ("ARENA_GRADER_SANDBOX", "bwarp", "BWRAP", "bwrap"),
        ("ARENA_AGENT_SANDBOX", "vm", "docker", "docker"),
    ],
)
def test_a_choice_outside_its_list_stops_start_up_naming_the_variable(
    variable, refused, given, read
):
    out = load_settings({"ARENA_SECRET_KEY": "k", variable: refused}, "s.DEBUG")
    assert out.returncode != 0
    assert f"{variable}={refused!r} is not one of" in out.stderr
    chosen = load_settings({"ARENA_SECRET_KEY": "k", variable: given}, f"s.{variable}")
    assert chosen.stdout.strip() == read, chosen.stderr


def test_celery_app_has_four_queues_and_late_acks_for_gpu_work():
    out = load_settings(
        {"ARENA_SECRET_KEY": "k"},
        "__import__('config.celery').celery.app.conf.task_acks_late,"
        " sorted(q.name for q in __import__('config.celery').celery.app.conf.task_queues),"
        " __import__('config.celery').celery.app.conf.worker_prefetch_multiplier,"
        " __import__('config.celery').celery.app.conf.task_reject_on_worker_lost",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True ['agents', 'build', 'default', 'gpu'] 1 True"


def test_suite_runs_against_the_configured_database_and_broker():
    import os

    from django.conf import settings
    from django.db import connection

    expect_postgres = bool(os.environ.get("DATABASE_URL"))
    assert connection.vendor == ("postgresql" if expect_postgres else "sqlite")
    expect_redis = bool(os.environ.get("ARENA_BROKER_URL"))
    assert settings.CELERY_BROKER_URL.startswith("redis://" if expect_redis else "filesystem://")


def test_submissions_are_graded_on_the_gpu_queue():
    from config.celery import app

    router = app.amqp.router
    route = router.route({}, "arena.submission_evaluate", args=(1,), kwargs={})
    assert route["queue"].name == "gpu"
    # A task with no route of its own goes to the default queue.
    assert router.route({}, "arena.unrouted", args=(1,), kwargs={})["queue"].name == "default"


def test_the_cache_is_shared_by_processes_a_folder_by_default_or_redis():
    folder = load_settings(
        {"ARENA_SECRET_KEY": "k"},
        "s.CACHES['default']['BACKEND'], s.CACHES['default']['LOCATION']",
    )
    assert folder.returncode == 0, folder.stderr
    assert folder.stdout.split()[0].endswith("FileBasedCache")
    assert folder.stdout.split()[1] == str(REPO / "var" / "test" / "cache")
    redis = load_settings(
        {"ARENA_SECRET_KEY": "k", "ARENA_CACHE_URL": "redis://127.0.0.1:6379/14"},
        "s.CACHES['default']['BACKEND'], s.CACHES['default']['LOCATION']",
    )
    assert redis.stdout.split() == [
        "django.core.cache.backends.redis.RedisCache",
        "redis://127.0.0.1:6379/14",
    ]
    refused = load_settings({"ARENA_SECRET_KEY": "k", "ARENA_CACHE_URL": "memcached://x"}, "1")
    assert refused.returncode != 0
    assert "ARENA_CACHE_URL='memcached://x'" in refused.stderr


def test_a_value_cached_by_one_process_is_read_by_another(tmp_path):
    env = {"ARENA_SECRET_KEY": "k", "ARENA_DATA_DIR": str(tmp_path)}
    writer = load_settings(env, "__import__('django.core.cache').core.cache.cache.set('k', 42)")
    assert writer.returncode == 0, writer.stderr
    reader = load_settings(env, "__import__('django.core.cache').core.cache.cache.get('k')")
    assert reader.stdout.strip() == "42", reader.stderr
