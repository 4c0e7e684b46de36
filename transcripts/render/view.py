"""What the template draws: the transcript arranged as a tree, with figures computed once.

Subagent threads hang under the event that spawned them (the spawn event, or the tool call
whose id the thread names as its parent), at any depth. A cycle or an absurd depth in a hostile
log is cut off with a notice instead of recursing without end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transcripts.formats.schema import Event, EventKind, Thread, Transcript, Turn, Usage

MAX_DEPTH = 40
# A tool result longer than this shows its head, with the rest one click away.
RESULT_PREVIEW_CHARS = 1_500
RESULT_PREVIEW_LINES = 24
ARGUMENTS_PREVIEW_CHARS = 160


@dataclass
class RunContext:
    """What the Django side knows about the run and the log does not (all optional)."""

    agent: str | None = None
    task: str | None = None
    task_url: str | None = None
    run_url: str | None = None
    run_status: str | None = None
    verdict: str | None = None  # the grader's status: passed, failed, error, ...
    reward: float | None = None
    solution: str | None = None
    solution_name: str = "solution.py"
    grader_log: str | None = None
    download_url: str | None = None


@dataclass
class EventView:
    event: Event
    children: list[ThreadView] = field(default_factory=list)
    cut_off: bool = False  # subagents below this event were not drawn (depth or cycle)


@dataclass
class TurnView:
    turn: Turn
    events: list[EventView]


@dataclass
class ThreadView:
    thread: Thread
    turns: list[TurnView]
    depth: int
    usage: Usage
    event_count: int


@dataclass
class Figures:
    turns: int
    tool_calls: int
    events: int
    subagents: int
    file_changes: int
    errors: int
    usage: Usage
    main_usage: Usage


@dataclass
class TranscriptView:
    transcript: Transcript
    main: ThreadView | None
    orphans: list[ThreadView]  # subagent threads whose spawning event is not in the log
    figures: Figures


def build_view(transcript: Transcript) -> TranscriptView:
    children = _children_by_event(transcript)
    placed: set[str] = set()
    main = None
    if transcript.threads:
        main = _thread_view(transcript.main, children, placed, depth=0)
    orphans = [
        _thread_view(thread, children, placed, depth=1)
        for thread in transcript.threads[1:]
        if thread.id not in placed
    ]
    return TranscriptView(transcript, main, orphans, _figures(transcript))


def _children_by_event(transcript: Transcript) -> dict[str, list[Thread]]:
    by_id = {thread.id: thread for thread in transcript.threads}
    children: dict[str, list[Thread]] = {}
    for thread in transcript.threads[1:]:
        if thread.parent_event:
            children.setdefault(thread.parent_event, []).append(thread)
    for event in transcript.events():
        child = by_id.get(event.child_thread or "")
        if child is not None and child is not transcript.threads[0]:
            siblings = children.setdefault(event.id, [])
            if child not in siblings:
                siblings.append(child)
    return children


def _thread_view(
    thread: Thread, children: dict[str, list[Thread]], placed: set[str], *, depth: int
) -> ThreadView:
    placed.add(thread.id)
    turns = []
    count = 0
    for turn in thread.turns:
        events = []
        for event in turn.events:
            view = EventView(event)
            for child in children.get(event.id, []):
                if child.id in placed or depth + 1 > MAX_DEPTH:
                    view.cut_off = True
                    continue
                view.children.append(_thread_view(child, children, placed, depth=depth + 1))
            events.append(view)
        count += len(events)
        turns.append(TurnView(turn, events))
    return ThreadView(thread, turns, depth, thread.usage(), count)


def _figures(transcript: Transcript) -> Figures:
    events = transcript.events()
    return Figures(
        turns=sum(len(t.turns) for t in transcript.threads),
        tool_calls=sum(e.kind == EventKind.TOOL_CALL for e in events),
        events=len(events),
        subagents=max(len(transcript.threads) - 1, 0),
        file_changes=sum(e.kind == EventKind.FILE_CHANGE for e in events),
        errors=sum(e.is_error for e in events),
        usage=transcript.usage(),
        main_usage=transcript.usage(include_subagents=False),
    )


def result_preview(text: str) -> str | None:
    """The head of a long tool result, or None when the whole of it is short enough."""
    head = text[:RESULT_PREVIEW_CHARS]
    lines = head.split("\n")
    if len(lines) > RESULT_PREVIEW_LINES:
        head = "\n".join(lines[:RESULT_PREVIEW_LINES])
    return head if len(head) < len(text) else None


def arguments_preview(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, dict):
        parts = [f"{key}={_scalar(value)}" for key, value in arguments.items()]
        text = " ".join(parts)
    else:
        text = _scalar(arguments)
    text = " ".join(text.split())
    if len(text) > ARGUMENTS_PREVIEW_CHARS:
        return text[: ARGUMENTS_PREVIEW_CHARS - 3] + "..."
    return text


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value[:ARGUMENTS_PREVIEW_CHARS]
    if isinstance(value, dict | list):
        return "{...}" if isinstance(value, dict) else "[...]"
    return str(value)


def diff_stats(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (file headers not counted)."""
    added = removed = 0
    for line in diff.split("\n"):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed
