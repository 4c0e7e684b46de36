# The score projection now belongs to arena (arena/migrations/0006_run_scores.py), over the
# same tables: this app lets go of them in Django's state only.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0001_run_scores'),
        ('arena', '0006_run_scores'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='RunScore'),
                migrations.DeleteModel(name='LeaderboardGeneration'),
            ],
            database_operations=[],
        ),
    ]
