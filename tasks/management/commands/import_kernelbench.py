from tasks.importers.command import ImportCommand
from tasks.importers.kernelbench import DEFAULT_WORKERS, kernelbench_import


class Command(ImportCommand):
    help = (
        "Import an upstream KernelBench checkout (its root or its KernelBench/ folder) as suite "
        "'kernelbench', into the imported catalogue under ARENA_DATA_DIR; all or nothing."
    )
    source_help = "the KernelBench checkout"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--workers", type=int, default=DEFAULT_WORKERS, help="processes analysing problems"
        )

    def run_import(self, *, source, catalog, progress, workers=DEFAULT_WORKERS, **options):
        return kernelbench_import(
            source=source, catalog=catalog, progress=progress, workers=workers
        )

    def report_tasks(self, report):
        for line in report.skipped:
            self.stderr.write(f"skipped {line}")
