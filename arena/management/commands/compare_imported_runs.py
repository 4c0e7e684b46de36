from django.core.management.base import BaseCommand

from arena.imported_runs import imported_runs_compare


class Command(BaseCommand):
    help = (
        "For every imported run our grader has finished, print where our verdict and the "
        "benchmark's published one differ, with both reasons, then the count of agreements."
    )

    def add_arguments(self, parser):
        parser.add_argument("--gpu", default="", help="only the runs on this GPU, e.g. h100")
        parser.add_argument("--all", action="store_true", help="print agreements too")

    def handle(self, *args, gpu: str = "", all: bool = False, **options):
        rows = imported_runs_compare(gpu=gpu.lower())
        for row in rows:
            if row.agrees and not all:
                continue
            mark = "agree" if row.agrees else "DIFFER"
            self.stdout.write(
                f"{mark} run {row.run.pk} {row.external_id} ({row.run.task.slug}): "
                f"ours {'pass' if row.ours_passed else 'fail'} ({row.ours_reason}); "
                f"theirs {'pass' if row.theirs_passed else 'fail'} ({row.theirs_reason})"
            )
        agree = sum(row.agrees for row in rows)
        self.stdout.write(
            f"{len(rows)} graded runs compared: {agree} agree, {len(rows) - agree} differ"
        )
