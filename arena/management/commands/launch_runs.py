"""`python manage.py launch_runs --agent <name> --tasks <selector> --repeats N`.

Queues arena runs of one agent on the selected tasks (slugs, globs like tt-*, category:<name>,
or all; comma-separated) and shows a live table of their states until every one has finished,
or returns at once with --no-wait. The runs are carried by the workers of the agents and gpu
queues (docs/deploy.md).
"""

import json
import time
from collections import Counter

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rich.console import Console
from rich.live import Live
from rich.table import Table

from arena.agents.base import AdapterError
from arena.models import Run, Submission
from arena.runs import agent_for_launch, runs_launch, tasks_select

FINISHED = (Run.Status.DONE, Run.Status.FAILED, Run.Status.CANCELLED)
STATE_STYLES = {
    Run.Status.DONE: "green",
    Run.Status.FAILED: "red",
    Run.Status.CANCELLED: "yellow",
    Run.Status.QUEUED: "dim",
}
POLL_S = 1.0


class Command(BaseCommand):
    help = "Queue agent runs on tasks and follow them until they finish."

    def add_arguments(self, parser):
        parser.add_argument("--agent", required=True, help="agent slug or name; or scripted-weak")
        parser.add_argument(
            "--tasks", required=True, help="slugs, globs (tt-*), category:<name> or all"
        )
        parser.add_argument("--repeats", type=int, default=1, help="runs per task (default 1)")
        parser.add_argument(
            "--budget",
            default="",
            help='JSON over the agent\'s budget, e.g. {"wall_clock_s": 600, "max_turns": 50}',
        )
        parser.add_argument("--no-wait", action="store_true", help="queue the runs and return")
        parser.add_argument(
            "--timeout", type=float, default=0, help="stop following after this many seconds"
        )

    def handle(self, *args, agent, tasks, repeats, budget, no_wait, timeout, **options):
        console = Console(file=self.stdout, width=120)
        runs = self.launch(agent_name=agent, selector=tasks, repeats=repeats, budget=budget)
        console.print(
            f"launch_runs: {len(runs)} runs of {runs[0].agent.name} queued "
            f"(ids {runs[0].pk}..{runs[-1].pk})"
        )
        if no_wait:
            return
        ids = [run.pk for run in runs]
        final = self.follow(console=console, ids=ids, timeout_s=timeout)
        counts = Counter(run.status for run in final)
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        console.print(f"launch_runs: {summary}")
        if any(run.status not in FINISHED for run in final):
            raise CommandError(f"stopped following after {timeout:g} s; the runs go on")

    @transaction.atomic
    def launch(self, *, agent_name: str, selector: str, repeats: int, budget: str) -> list[Run]:
        try:
            override = json.loads(budget) if budget else None
            if override is not None and not isinstance(override, dict):
                raise ValueError("budget: a JSON object is needed")
            return runs_launch(
                agent=agent_for_launch(name=agent_name),
                tasks=tasks_select(selector=selector),
                repeats=repeats,
                budget=override,
            )
        except (ValueError, AdapterError) as exc:
            raise CommandError(str(exc)) from None

    def follow(self, *, console: Console, ids: list[int], timeout_s: float) -> list[Run]:
        """A live table until every run has finished (or timeout_s, when given)."""
        deadline = time.monotonic() + timeout_s if timeout_s else None
        runs = _runs(ids)
        with Live(runs_table(runs), console=console, refresh_per_second=4) as live:
            while any(run.status not in FINISHED for run in runs):
                if deadline is not None and time.monotonic() > deadline:
                    break
                time.sleep(POLL_S)
                runs = _runs(ids)
                live.update(runs_table(runs))
        return runs


def _runs(ids: list[int]) -> list[Run]:
    return list(Run.objects.filter(pk__in=ids).select_related("task").order_by("pk"))


def runs_table(runs: list[Run]) -> Table:
    table = Table(title="Arena runs", title_justify="left")
    for column in ("run", "task", "state", "reward", "tokens", "detail"):
        table.add_column(column)
    rewards = _rewards(runs)
    for run in runs:
        tokens = run.input_tokens + run.output_tokens + run.cache_read_tokens
        reward = rewards.get(run.pk)
        table.add_row(
            str(run.pk),
            run.task.slug,
            f"[{STATE_STYLES.get(run.status, 'cyan')}]{run.status}[/]",
            "" if reward is None else f"{reward:.3g}",
            f"{tokens:,}" if tokens else "",
            run.failure_reason or ("flagged" if run.protected_changed else ""),
        )
    return table


def _rewards(runs: list[Run]) -> dict[int, float | None]:
    return dict(
        Submission.objects.filter(run__in=[r.pk for r in runs]).values_list(
            "run_id", "evaluation__reward"
        )
    )
