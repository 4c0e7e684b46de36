# The score projection moves from the leaderboard app to arena, the layer that writes
# submissions. Its tables stay where they are: only Django's state changes here.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('arena', '0005_batch'),
        ('leaderboard', '0001_run_scores'),
        ('tasks', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='LeaderboardGeneration',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('value', models.BigIntegerField(default=0)),
                    ],
                    options={'db_table': 'leaderboard_leaderboardgeneration'},
                ),
                migrations.CreateModel(
                    name='RunScore',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('category', models.CharField(max_length=20)),
                        ('suite_version', models.CharField(max_length=120)),
                        ('gpu', models.CharField(max_length=100)),
                        ('status', models.CharField(max_length=10)),
                        ('compiled', models.BooleanField()),
                        ('correct', models.BooleanField()),
                        ('ranked', models.BooleanField()),
                        ('flagged', models.BooleanField()),
                        ('overfit', models.BooleanField()),
                        ('speedup', models.FloatField(null=True)),
                        ('roofline_fraction', models.FloatField(null=True)),
                        ('unseen_correct', models.PositiveIntegerField(default=0)),
                        ('unseen_total', models.PositiveIntegerField(default=0)),
                        ('reward', models.FloatField(null=True)),
                        ('tokens', models.BigIntegerField(default=0)),
                        ('cost_usd', models.FloatField(null=True)),
                        ('repeat', models.PositiveIntegerField(default=1)),
                        ('finished_at', models.DateTimeField(null=True)),
                        ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='scores', to='arena.agent')),
                        ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='scores', to='arena.run')),
                        ('submission', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='score', to='arena.submission')),
                        ('task', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='scores', to='tasks.task')),
                    ],
                    options={
                        'db_table': 'leaderboard_runscore',
                        'indexes': [models.Index(fields=['agent', 'task'], name='leaderboard_agent_i_b766c5_idx'), models.Index(fields=['category'], name='leaderboard_categor_d22be4_idx'), models.Index(fields=['gpu'], name='leaderboard_gpu_2d5734_idx'), models.Index(fields=['suite_version'], name='leaderboard_suite_v_e6f1f9_idx')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
