from django.core.management.base import BaseCommand

from arena.models import RunScore
from arena.run_scores import leaderboard_invalidate, leaderboard_rebuild


class Command(BaseCommand):
    help = "Score every finished evaluation that has no leaderboard row (--all: rebuild every row)"

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="drop and rebuild every row")

    def handle(self, *args, **options):
        if options["all"]:
            RunScore.objects.all().delete()
            leaderboard_invalidate()
        added = leaderboard_rebuild()
        self.stdout.write(f"{added} evaluations scored; {RunScore.objects.count()} rows in all")
