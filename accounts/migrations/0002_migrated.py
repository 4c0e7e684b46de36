"""DRF's authtoken keys become hashed API tokens named "migrated", and their plain-text table is
dropped. Clients keep sending the same key: its SHA-256 is what is now kept. The table is read
with SQL because rest_framework.authtoken is no longer installed; where it never was (a new
database), there is nothing to do. Going back cannot bring the keys back, so it does nothing."""

import datetime
import hashlib

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone
from django.utils.dateparse import parse_datetime

OLD_TABLE = "authtoken_token"
PREFIX_LENGTH = 11  # accounts.token_secrets.PREFIX_LENGTH when this was written


def _aware(value):
    if isinstance(value, str):  # SQLite hands raw SQL its text
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, datetime.UTC)
    return value or timezone.now()


def copy_drf_keys(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("accounts", "ApiToken")
    table = schema_editor.quote_name(OLD_TABLE)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id, created FROM {table}")  # noqa: S608 (a constant)
        rows = cursor.fetchall()
    ApiToken.objects.bulk_create(
        ApiToken(
            user_id=user_id,
            name="migrated",
            prefix=key[:PREFIX_LENGTH],
            digest=hashlib.sha256(key.encode()).hexdigest(),
            created=_aware(created),
        )
        for key, user_id, created in rows
    )
    schema_editor.execute(f"DROP TABLE {table}")
    # Should rest_framework.authtoken come back, its migrations make its table again.
    MigrationRecorder(connection).migration_qs.filter(app="authtoken").delete()


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [migrations.RunPython(copy_drf_keys, migrations.RunPython.noop)]
