from tasks.importers.command import ImportCommand
from tasks.importers.kernelbench_hard import kernelbench_hard_import


class Command(ImportCommand):
    help = (
        "Import a KernelBench-Hard checkout (its root or its benchmarks/hard folder): every "
        "problems-<gpu>/<problem>/ as suite 'kernelbench-hard', into the imported catalogue "
        "under ARENA_DATA_DIR; all or nothing."
    )
    source_help = "the KernelBench-Hard checkout"

    def run_import(self, *, source, catalog, progress, **options):
        return kernelbench_hard_import(source=source, catalog=catalog, progress=progress)

    def report_tasks(self, report):
        for line in report.sota_unavailable:
            self.stderr.write(f"SOTA unavailable: {line}")
