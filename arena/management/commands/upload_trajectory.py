"""python manage.py upload_trajectory <file-or-folder> --run N | --agent NAME --task SLUG"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.run_logs import trajectory_upload
from transcripts.services import TrajectoryRejected


class Command(BaseCommand):
    help = "Import an agent's log (a file, a .gz, a .zip or a folder) as a run's trajectory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="log file, .gz, .zip, or a session folder")
        parser.add_argument("--run", type=int, help="id of the run the log belongs to")
        parser.add_argument("--agent", default="", help="agent name, for a new run")
        parser.add_argument("--task", default="", help="task slug, for a new run")

    def handle(self, *args, path: Path, run: int | None, agent: str, task: str, **options):
        if run is None and not (agent and task):
            raise CommandError("give --run N, or --agent NAME and --task SLUG")
        try:
            trajectory = trajectory_upload(path=path, run_id=run, agent_slug=agent, task_slug=task)
        except TrajectoryRejected as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        self.stdout.write(
            f"trajectory {trajectory.pk} for run {trajectory.run.pk}: {trajectory.format}, "
            f"{trajectory.event_count} events, {trajectory.turn_count} turns, "
            f"{trajectory.tool_call_count} tool calls, {trajectory.subagent_count} subagents, "
            f"{trajectory.malformed_line_count} malformed lines"
        )
        for line in trajectory.summary.get("malformed_lines", []):
            self.stdout.write(
                f"  malformed: {line['source']} line {line['line']}: {line['reason']}"
            )
