"""DRF's plain-text authtoken keys become hashed tokens named "migrated"; the old table goes."""

import importlib
from datetime import UTC, datetime

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from rest_framework.test import APIClient

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db

migration = importlib.import_module("accounts.migrations.0002_migrated")
OLD_KEY = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"


class SchemaEditor:
    """What the migration uses of Django's schema editor, inside the test's transaction."""

    connection = connection
    quote_name = staticmethod(connection.ops.quote_name)

    def execute(self, sql: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql)


def old_table_with_a_key(user_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
            "created timestamp NOT NULL, user_id integer NOT NULL)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token VALUES (%s, %s, %s)",
            [OLD_KEY, "2024-05-01 10:00:00", user_id],
        )
    MigrationRecorder(connection).record_applied("authtoken", "0001_initial")


def test_old_keys_keep_working_and_are_no_longer_kept_in_plain_text(django_user_model):
    user = django_user_model.objects.create_user("alice")
    old_table_with_a_key(user.pk)
    migration.copy_drf_keys(apps, SchemaEditor())

    token = ApiToken.objects.get()
    assert (token.user, token.name, token.prefix) == (user, "migrated", OLD_KEY[:11])
    assert token.created == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert OLD_KEY not in token.digest
    assert "authtoken_token" not in connection.introspection.table_names()
    assert not MigrationRecorder(connection).migration_qs.filter(app="authtoken").exists()

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {OLD_KEY}")
    response = client.post("/api/v1/evaluations", {"task": "no-such-task", "solution": "x"})
    assert response.status_code == 400  # known: past authentication, refused for its task


def test_a_database_that_never_had_drf_tokens_has_nothing_to_migrate():
    migration.copy_drf_keys(apps, SchemaEditor())
    assert not ApiToken.objects.exists()
