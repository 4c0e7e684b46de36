import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from arena.imported_runs import (
    ImportRefused,
    imported_traces_attach,
    kernelbench_hard_runs_import,
)

SOURCES = ("kernelbench-hard",)


class Command(BaseCommand):
    help = (
        "Import another benchmark's published runs as runs of their agents, each solution "
        "queued for grading by our grader, the benchmark's own result kept beside ours. "
        "Idempotent: a run imported before is not imported again."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--from", dest="origin", required=True, choices=SOURCES, help="whose runs"
        )
        parser.add_argument("source", type=Path, help="the benchmark's checkout")
        parser.add_argument("--gpu", default="", help="only the runs on this GPU, e.g. h100")
        parser.add_argument(
            "--traces",
            type=Path,
            default=None,
            help="a folder of the runs' logs (<run_id>.jsonl, or <run_id>/ run folders): each "
            "imported run without a transcript gets its own",
        )

    def handle(
        self, *args, origin: str, source: Path, gpu: str = "", traces: Path | None = None, **options
    ):
        if not source.is_dir():
            raise CommandError(f"{source}: no such folder")
        if traces is not None and not traces.is_dir():
            raise CommandError(f"{traces}: no such folder")
        try:
            report = kernelbench_hard_runs_import(
                source=source.resolve(), gpu=gpu.lower(), progress=self._progress
            )
        except ImportRefused as exc:
            raise CommandError(str(exc)) from None
        for line in report.skipped:
            self.stderr.write(f"skipped {line}")
        self.stdout.write(report.summary())
        if traces is None:
            self.stdout.write(
                "transcripts: none attached (the checkout publishes none; trace links kept; "
                "--traces DIR attaches downloaded ones)"
            )
            return
        attached = imported_traces_attach(traces=traces, gpu=gpu.lower(), progress=self._progress)
        for line in attached.refused:
            self.stderr.write(f"transcript refused {line}")
        self.stdout.write(attached.summary())

    def _progress(self, done: int, total: int, label: str) -> None:
        width = len(str(total))
        self.stderr.write(f"[{done:>{width}}/{total}] {label}")
        if self.stderr.isatty():
            sys.stderr.flush()
