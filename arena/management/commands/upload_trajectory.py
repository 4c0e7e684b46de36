"""python manage.py upload_trajectory <file-or-folder> --agent NAME --task SLUG
[--solution FILE | --solution-path PATH | --transcript-only] [--model MODEL], or --run N"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.log_uploads import log_upload
from arena.run_logs import trajectory_upload
from evaluator.solution_checks import SolutionRefused, solution_decode, solution_max_bytes
from transcripts.models import Trajectory
from transcripts.services import TrajectoryRejected


class Command(BaseCommand):
    help = (
        "Upload an agent's log (a file, a .gz, a .zip or a folder) as a new run of an agent on "
        "a task, graded with its kernel (attached, or the last the log's agent wrote), or as "
        "the log of an existing run."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="log file, .gz, .zip, or a session folder")
        parser.add_argument("--run", type=int, help="id of the run the log belongs to")
        parser.add_argument("--agent", default="", help="agent name, for a new run")
        parser.add_argument("--task", default="", help="task slug, for a new run")
        parser.add_argument("--model", default="", help="the model a new agent declares")
        kernel = parser.add_mutually_exclusive_group()
        kernel.add_argument("--solution", type=Path, help="the final kernel (default: the log's)")
        kernel.add_argument("--solution-path", default="", help="the kernel's path in the log")
        kernel.add_argument(
            "--transcript-only", action="store_true", help="store the log alone, never graded"
        )

    def handle(self, *args, path: Path, run: int | None, agent: str, task: str, **options):
        if run is None and not (agent and task):
            raise CommandError("give --agent NAME and --task SLUG, or --run N")
        try:
            if run is not None:
                if agent or task or _kernel_given(options):
                    raise CommandError("--run takes the log alone")
                trajectory = trajectory_upload(path=path, run_id=run)
            else:
                trajectory = self._new_run(path, agent=agent, task=task, options=options)
        except TrajectoryRejected as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        self._report(trajectory)

    def _new_run(self, path: Path, *, agent: str, task: str, options: dict) -> Trajectory:
        made = log_upload(
            user=None,
            path=path,
            agent_name=agent,
            task_slug=task,
            model=options["model"],
            solution=_solution(options["solution"]),
            solution_path=options["solution_path"],
            transcript_only=options["transcript_only"],
        )
        assert made.trajectory is not None
        return made.trajectory

    def _report(self, trajectory: Trajectory) -> None:
        run = trajectory.run
        self.stdout.write(
            f"trajectory {trajectory.pk} for run {run.pk}: {trajectory.format}, "
            f"{trajectory.event_count} events, {trajectory.turn_count} turns, "
            f"{trajectory.tool_call_count} tool calls, {trajectory.subagent_count} subagents, "
            f"{trajectory.malformed_line_count} malformed lines"
        )
        submission = run.submissions.select_related("evaluation").first()
        if submission is None:
            self.stdout.write("  transcript only: no kernel is graded")
        else:
            self.stdout.write(f"  kernel {_provenance(submission)}: submission {submission.pk}")
        if run.log_names_task is False:
            self.stdout.write(f"  note: the log never names the task {run.task.slug}")
        for line in trajectory.summary.get("malformed_lines", []):
            self.stdout.write(
                f"  malformed: {line['source']} line {line['line']}: {line['reason']}"
            )


def _kernel_given(options: dict) -> bool:
    return bool(options["solution"] or options["solution_path"] or options["transcript_only"])


def _solution(path: Path | None) -> tuple[str, str] | None:
    if path is None:
        return None
    try:
        with path.open("rb") as file:
            raw = file.read(solution_max_bytes() + 1)
        return path.name, solution_decode(raw, name=path.name)
    except OSError as exc:
        raise CommandError(f"solution: {path}: {exc.strerror}") from None
    except SolutionRefused as exc:
        raise CommandError(f"solution: {exc.message}") from None


def _provenance(submission) -> str:
    if submission.kernel_source == submission.KernelSource.LOG:
        by = f" by {submission.kernel_tool}" if submission.kernel_tool else ""
        return f"written at turn {submission.kernel_turn} of the log{by} ({submission.kernel_path})"
    return f"attached ({submission.evaluation.solution_name})"
