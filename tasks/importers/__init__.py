"""Importers of other benchmarks' trees as catalogue tasks: KernelBench (kernelbench.py),
KernelBench-Hard (kernelbench_hard.py) and AgentKernelArena (agentkernelarena/).

Each reads a checkout the user points it at and writes task folders into the imported catalogue
(settings.ARENA_IMPORTED_CATALOG_DIR), never into the source tree. They share what an import
reports (report.py), how a task.toml is written (manifest.py), the all-or-nothing swap of a
suite's folders and the database sync (staging.py), and their management commands' runs
(command.py)."""
