"""What an import did, task by task, and the refusal that leaves everything as it was."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tasks.services import SyncReport

# (done, total, label of the task just read)
Progress = Callable[[int, int, str], None]


class ImportRefused(Exception):
    """Some task could not be imported; nothing was changed. One line per task."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("nothing was imported:\n" + "\n".join(reasons))
        self.reasons = reasons


@dataclass(frozen=True)
class Outcome:
    """One task of the source: its folder's files, or why it was skipped or refused."""

    label: str  # where it is in the source, for messages
    slug: str
    files: dict[str, str] | None = None  # relative path: text
    skipped: str = ""
    refused: str = ""


@dataclass
class ImportReport:
    """Every importer's report: slugs imported, updated, unchanged and removed (folders of the
    suite the source no longer has); "label: reason" of tasks skipped; and what the summary
    line names beyond the first three counts (`counted`: (list's name, words); `notes`)."""

    suite: str
    counted: tuple[tuple[str, str], ...] = ()
    imported: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    # "slug: SOTA <name> needs <requirement> (not installed)", one per problem.
    sota_unavailable: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    says_when_nothing_changed: bool = False
    sync: SyncReport | None = None

    @property
    def changed(self) -> bool:
        return bool(self.imported or self.updated or self.removed)

    def summary(self) -> str:
        counts = [(self.imported, "imported"), (self.updated, "updated")]
        counts += [(self.unchanged, "unchanged")]
        counts += [(getattr(self, name), words) for name, words in self.counted]
        parts = [f"{len(items)} {words}" for items, words in counts] + self.notes
        line = f"{self.suite}: " + ", ".join(parts)
        if self.says_when_nothing_changed and not self.changed:
            return line + "; nothing changed"
        return line

    def skipped_by_reason(self) -> dict[str, int]:
        """How many tasks were skipped for each reason (names, quotes and lines left out),
        the most frequent first."""
        groups: dict[str, int] = {}
        for line in self.skipped:
            reason = re.sub(r"\(.*?\)|'[^']*'|line \d+", "…", line.split(": ", 1)[1])
            groups[reason] = groups.get(reason, 0) + 1
        return dict(sorted(groups.items(), key=lambda kv: -kv[1]))

    def sync_summary(self) -> str:
        sync = self.sync
        assert sync is not None
        return (
            f"tasks: {len(sync.created)} created, {len(sync.updated)} updated, "
            f"{len(sync.unchanged)} unchanged, {len(sync.deactivated)} deactivated"
        )
