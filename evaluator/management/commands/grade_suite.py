import fnmatch
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evaluator.batch import grade_suite
from grader.evaluate import resolve_device
from tasks.models import Task


class Command(BaseCommand):
    help = (
        "Grade a folder of solutions against a suite's tasks on this host, one JSON line per "
        "result; run it again with the same --out to grade only what it lacks."
    )

    def add_arguments(self, parser):
        parser.add_argument("--suite", required=True, help="the suite, e.g. kernelbench or core")
        parser.add_argument("--solutions", required=True, type=Path, help="the solutions' folder")
        parser.add_argument(
            "--out", type=Path, default=None, help="results (JSON lines); default SOLUTIONS.jsonl"
        )
        parser.add_argument("--tasks", default="*", help="only tasks whose slug matches (glob)")
        parser.add_argument(
            "--device", default=None, help="cuda, cpu or auto (default: ARENA_GRADER_DEVICE)"
        )

    def handle(self, *args, suite: str, solutions: Path, out: Path | None, **options):
        if not solutions.is_dir():
            raise CommandError(f"{solutions}: no such folder")
        tasks = [
            task
            for task in Task.objects.filter(suite=suite, is_active=True).order_by("slug")
            if fnmatch.fnmatchcase(task.slug, options["tasks"])
        ]
        if not tasks:
            known = sorted(set(Task.objects.filter(is_active=True).values_list("suite", flat=True)))
            raise CommandError(
                f"no active task of suite {suite!r} matches {options['tasks']!r} "
                f"(suites: {', '.join(known) or 'none; run sync_tasks'})"
            )
        try:
            device = resolve_device(options["device"] or settings.ARENA_GRADER_DEVICE)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        out = out or solutions.with_name(solutions.name + ".jsonl")
        report = grade_suite(
            tasks=tasks, folder=solutions, out=out, device=device, progress=self._progress
        )
        for name in report.unmatched:
            self.stderr.write(f"matched no task of suite {suite!r}: {name}")
        self.stdout.write(f"{report.summary()} (results in {out})")

    def _progress(self, done: int, total: int, line: dict[str, Any]) -> None:
        width = len(str(total))
        filled = round(20 * done / total)
        bar = "#" * filled + "." * (20 - filled)
        verdict = line["status"] + (" ranked" if line.get("ranked") else "")
        reason = f": {line['reason'][:120]}" if line.get("reason") else ""
        self.stderr.write(
            f"[{bar}] {done:>{width}}/{total} {line['task']} {line['solution']}: "
            f"{verdict} ({line['wall_s']:.1f} s){reason}"
        )
        if self.stderr.isatty():
            sys.stderr.flush()
