from tasks.importers.agentkernelarena import agentkernelarena_import, describe
from tasks.importers.command import ImportCommand


class Command(ImportCommand):
    help = (
        "Import an AgentKernelArena checkout's triton2triton tasks as suite 'agentkernelarena', "
        "into the imported catalogue under ARENA_DATA_DIR; all or nothing."
    )
    source_help = "the AgentKernelArena checkout"

    def run_import(self, *, source, catalog, progress, **options):
        return agentkernelarena_import(source=source, catalog=catalog, progress=progress)

    def report_tasks(self, report):
        for line in report.skipped:
            self.stderr.write(f"not importable {line}")
        if report.skipped:
            self.stdout.write("not importable, by reason:")
            for line in describe(report):
                self.stdout.write(line)
