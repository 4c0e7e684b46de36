"""What the template draws: the transcript arranged as a tree, with figures computed once.

Subagent threads hang under the event that spawned them (the spawn event, or the tool call
whose id the thread names as its parent), at any depth. A cycle or an absurd depth in a hostile
log is cut off with a notice instead of recursing without end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from transcript_formats.counts import transcript_counts
from transcript_formats.schema import Event, EventKind, Thread, Transcript, Turn, Usage
from transcript_formats.tolerant import unknown_type_counts
from transcript_render.ansi import strip_ansi
from transcript_render.commands import command_summary, has_command_tags
from transcript_render.content import without_image_marks
from transcript_render.timing import IDLE_AFTER_S, transcript_timing

MAX_DEPTH = 40
# A tool result longer than this shows its head, with the rest one click away.
RESULT_PREVIEW_CHARS = 1_500
RESULT_PREVIEW_LINES = 24
ARGUMENTS_PREVIEW_CHARS = 160
TITLE_CHARS = 90
OUTLINE_WORDS_CHARS = 70
# The kinds a reader can hide, in the order the page offers them. "subagent" is a subagent's
# spawn and the fold of its thread; whatever is not listed here (notices, compaction markers,
# unknown records) always shows.
FILTER_KINDS = {
    "user_text": "User",
    "assistant_text": "Assistant",
    "reasoning": "Reasoning",
    "tool_call": "Tool calls",
    "tool_result": "Tool results",
    "file_change": "File changes",
    "subagent": "Subagents",
}
# Markdown that reads as noise on one line: emphasis stars, backticks, heading and quote marks.
_MARKDOWN_MARKS = re.compile(r"[*`]+|^[ \t]*(?:#{1,6}|>)[ \t]+", re.M)


@dataclass
class RunContext:
    """What the Django side knows about the run and the log does not (all optional)."""

    agent: str | None = None
    task: str | None = None
    task_url: str | None = None
    run_url: str | None = None
    run_status: str | None = None
    verdict: str | None = None  # the run's verdict as the site words it: "flagged: overfit"
    # Its colour: "pass" (ranked alone), "fail", "flag", or "neutral"/"wait" (no colour).
    verdict_tone: str | None = None
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
    duration_s: float | None = None  # active time (see timing.py); None without timestamps
    ordinal: int = 0  # its place in its thread, from 0 (the outline's line for a main turn)

    @property
    def filter_kinds(self) -> str:
        """The filterable kinds of its events, space-separated ("other" for the rest): the turn
        shows while any of them does."""
        kinds = {_filter_kind(view) for view in self.events}
        kinds.update("subagent" for view in self.events if _spawns_subagent(view))
        return " ".join(sorted(kinds))


@dataclass
class ThreadView:
    thread: Thread
    turns: list[TurnView]
    depth: int
    usage: Usage
    event_count: int


@dataclass
class Figures:
    turns: int  # of the main thread: the outline's lines and the timeline's sections
    subagent_turns: int
    tool_calls: int
    events: int
    subagents: int
    file_changes: int
    errors: int
    usage: Usage
    main_usage: Usage
    active_s: float | None = None  # timing.py: gaps longer than idle_after_s count as idle
    wall_s: float | None = None
    idle_after_s: float = IDLE_AFTER_S
    kinds: dict[str, int] = field(default_factory=dict)  # FILTER_KINDS present, with counts
    # Record types the reader did not know, each with its count: named once on the page.
    unknown_types: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class TranscriptView:
    transcript: Transcript
    main: ThreadView | None
    orphans: list[ThreadView]  # subagent threads whose spawning event is not in the log
    figures: Figures


def build_view(transcript: Transcript) -> TranscriptView:
    children = _children_by_event(transcript)
    timing = transcript_timing(transcript)
    placed: set[str] = set()
    main = None
    if transcript.threads:
        main = _thread_view(transcript.main, children, placed, depth=0, durations=timing.turns)
    orphans = [
        _thread_view(thread, children, placed, depth=1, durations=timing.turns)
        for thread in transcript.threads[1:]
        if thread.id not in placed
    ]
    figures = _figures(transcript)
    figures.active_s, figures.wall_s = timing.active_s, timing.wall_s
    return TranscriptView(transcript, main, orphans, figures)


def _children_by_event(transcript: Transcript) -> dict[str, list[Thread]]:
    # Abandoned branches hang under the notice where they branch off, as subagents do.
    by_id = {thread.id: thread for thread in transcript.all_threads()}
    children: dict[str, list[Thread]] = {}
    for thread in transcript.all_threads()[1:]:
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
    thread: Thread,
    children: dict[str, list[Thread]],
    placed: set[str],
    *,
    depth: int,
    durations: dict[int, float] | None = None,
) -> ThreadView:
    durations = durations if durations is not None else {}
    placed.add(thread.id)
    turns = []
    count = 0
    for ordinal, turn in enumerate(thread.turns):
        events = []
        for event in turn.events:
            view = EventView(event)
            for child in children.get(event.id, []):
                if child.id in placed or depth + 1 > MAX_DEPTH:
                    view.cut_off = True
                    continue
                view.children.append(
                    _thread_view(child, children, placed, depth=depth + 1, durations=durations)
                )
            events.append(view)
        count += len(events)
        turns.append(TurnView(turn, events, durations.get(id(turn)), ordinal))
    return ThreadView(thread, turns, depth, thread.usage(), count)


def _filter_kind(view: EventView) -> str:
    kind = view.event.kind.value
    if kind == EventKind.SUBAGENT_SPAWN:
        return "subagent"
    return kind if kind in FILTER_KINDS else "other"


def _spawns_subagent(view: EventView) -> bool:
    return any(child.thread.kind != "branch" for child in view.children)


def _figures(transcript: Transcript) -> Figures:
    events = transcript.events()
    counts = transcript_counts(transcript)
    kinds = {kind: 0 for kind in FILTER_KINDS}
    for event in events:
        kind = "subagent" if event.kind == EventKind.SUBAGENT_SPAWN else event.kind.value
        if kind in kinds:
            kinds[kind] += 1
    # A subagent counts once, whether a spawn event or a tool call started it.
    kinds["subagent"] = max(len(transcript.threads) - 1, 0)
    return Figures(
        turns=counts.main_turns,
        subagent_turns=counts.subagent_turns,
        kinds={kind: count for kind, count in kinds.items() if count},
        tool_calls=counts.tool_calls,
        events=counts.events,
        subagents=max(len(transcript.threads) - 1, 0),
        file_changes=counts.file_changes,
        errors=counts.errors,
        usage=transcript.usage(),
        main_usage=transcript.usage(include_subagents=False),
        unknown_types=unknown_type_counts(transcript),
    )


def first_prompt(transcript: Transcript) -> str | None:
    """The first thing the user asked, on one line, cut at TITLE_CHARS (for the page title)."""
    if not transcript.threads:
        return None
    for turn in transcript.main.turns:
        for event in turn.events:
            if event.kind == EventKind.USER_TEXT:
                line = one_line(event.text, TITLE_CHARS)
                if line:
                    return line
    return None


def one_line(text: str, limit: int) -> str:
    """Text as one trimmed line of at most `limit` characters; command tags read as commands."""
    if has_command_tags(text):
        text = command_summary(text)
    text = _MARKDOWN_MARKS.sub("", strip_ansi(without_image_marks(text[: limit * 4])))
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "\u2026"


@dataclass
class OutlineEntry:
    turn: TurnView
    kind: str  # user | assistant | tools | other: what the turn mostly is
    words: str  # its first words, or the names of the tools it called


def outline(thread: ThreadView) -> list[OutlineEntry]:
    return [_outline_entry(turn) for turn in thread.turns]


def _outline_entry(view: TurnView) -> OutlineEntry:
    tools: list[str] = []
    for event in view.turn.events:
        if event.kind in (EventKind.USER_TEXT, EventKind.ASSISTANT_TEXT) and event.text.strip():
            kind = "user" if event.kind == EventKind.USER_TEXT else "assistant"
            words = one_line(event.text, OUTLINE_WORDS_CHARS)
            if tools:
                words = ", ".join(tools) + " \u00b7 " + words
            return OutlineEntry(view, kind, words)
        if event.kind == EventKind.TOOL_CALL and event.tool_name not in tools and len(tools) < 4:
            tools.append(event.tool_name or "?")
    if tools:
        return OutlineEntry(view, "tools", one_line(", ".join(tools), OUTLINE_WORDS_CHARS))
    kinds = sorted({event.kind.value.replace("_", " ") for event in view.turn.events})
    return OutlineEntry(view, "other", ", ".join(kinds[:3]))


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
