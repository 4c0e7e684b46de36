"""The one schema every agent log is parsed into (plain Python, no Django).

Transcript -> Thread (main | subagent) -> Turn -> Event. A turn is one model call and what
followed from it (the tool results it waited for); usage is attached to the model call that
spent it, once. Subagent threads hang under the event that spawned them (`Event.child_thread`),
and their usage is rolled up separately from the main thread's so that nothing counts twice.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from enum import StrEnum
from typing import Any

from .disk_texts import held, held_inside, read_back


class EventKind(StrEnum):
    USER_TEXT = "user_text"
    ASSISTANT_TEXT = "assistant_text"
    REASONING = "reasoning"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    FILE_CHANGE = "file_change"
    SUBAGENT_SPAWN = "subagent_spawn"
    SYSTEM_NOTICE = "system_notice"
    COMPACTION = "compaction"
    UNKNOWN = "unknown"


@dataclass(slots=True)
class Usage:
    """Tokens of one or more model calls. `input_tokens` never includes the cached part."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )


@dataclass(slots=True)
class Image:
    """An image a message or tool result carried, as base64 the way the log held it.

    `data` is empty when the image was over the reader's cap (IMAGE_DATA_CAP_CHARS) or held
    by reference only; `size_bytes` still says how big it was (decoded) when known.
    """

    media_type: str  # as the log named it; the renderer trusts the data's own signature
    data: str = ""
    size_bytes: int = 0

    def __post_init__(self) -> None:
        self.data = held(self.data)


@dataclass(slots=True)
class Event:
    """One thing that happened. `id` is unique within the transcript and is the page anchor."""

    id: str
    kind: EventKind
    text: str = ""  # message text, reasoning, tool result output, notice text
    timestamp: str | None = None  # ISO 8601 as the log wrote it
    tool_name: str | None = None  # tool_call, tool_result (when known), file_change
    call_id: str | None = None  # joins a tool_call to its tool_result and file_change
    arguments: Any = None  # tool_call arguments as parsed JSON (or the raw string)
    is_error: bool = False  # a failed tool result, a provider error, an error notice
    path: str | None = None  # file_change: the file's path as the agent named it
    diff: str | None = None  # file_change: a unified diff (new file = all added lines)
    child_thread: str | None = None  # subagent_spawn: the Thread it spawned; a notice: a branch
    raw_type: str | None = None  # unknown: the record type the parser did not know
    raw: Any = None  # unknown: the record itself (already size-capped by the parser)
    line: int | None = None  # 1-based line of the source file the event came from
    images: tuple[Image, ...] = ()  # images in a user message or a tool result

    def __post_init__(self) -> None:
        # While an upload is parsed, long texts wait on disk (disk_texts.texts_on_disk).
        self.text = held(self.text)
        # A log repeats these thousands of times, each time a str of its own once decoded.
        self.tool_name = _shared(self.tool_name)
        self.call_id = _shared(self.call_id)
        self.diff = held(self.diff)
        self.raw = held(self.raw)


def _arguments_on_disk() -> None:
    """Event.arguments reads as what the parser gave, always; while an upload is parsed, the
    long strings inside (a file written, a patch) wait on disk in its place
    (disk_texts.held_inside) and are read back each time it is read."""
    slot = Event.__dict__["arguments"]

    def read(event: Event) -> Any:
        return read_back(slot.__get__(event, Event))

    def write(event: Event, value: Any) -> None:
        slot.__set__(event, held_inside(value))

    Event.arguments = property(read, write)  # type: ignore[misc]


_arguments_on_disk()


def _shared(value: str | None) -> str | None:
    return sys.intern(value) if type(value) is str else value


@dataclass(slots=True)
class Turn:
    """One model call (or one user message that starts the exchange) and its events."""

    index: int
    events: list[Event] = field(default_factory=list)
    model: str | None = None
    usage: Usage | None = None  # None where the log records no usage for this call
    timestamp: str | None = None


@dataclass(slots=True)
class Thread:
    """The main conversation or one subagent's. `parent_event` is the spawning event's id.

    `turns` is the path the conversation ended on. A rewind or a retried response leaves a branch
    behind: each is a Thread of kind "branch" in `branches`, whose `parent_event` is the notice
    placed where it branches off. Its tokens were billed: `abandoned_usage()`.
    """

    id: str
    kind: str = "main"  # "main" | "subagent" | "branch" (an abandoned branch, in `branches`)
    title: str = ""  # the subagent's description or prompt head
    parent_thread: str | None = None
    parent_event: str | None = None
    turns: list[Turn] = field(default_factory=list)
    branches: list[Thread] = field(default_factory=list)

    def usage(self) -> Usage:
        """Tokens of the path the thread ended on (its abandoned branches not included)."""
        total = Usage()
        for turn in self.turns:
            if turn.usage is not None:
                total.add(turn.usage)
        return total

    def abandoned_usage(self) -> Usage:
        """Tokens of the thread's abandoned branches."""
        total = Usage()
        for branch in self.branches:
            total.add(branch.usage())
            total.add(branch.abandoned_usage())
        return total


@dataclass(slots=True)
class MalformedLine:
    source: str  # the file it was in (relative name)
    line: int  # 1-based
    reason: str


@dataclass(slots=True)
class Transcript:
    """Everything parsed from one log (a file or a folder with its subagent files)."""

    format: str  # e.g. "claude-code-jsonl", "claude-code-stream-json", "codex-rollout"
    threads: list[Thread] = field(default_factory=list)  # threads[0] is the main thread
    model: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    cli_version: str | None = None
    session_id: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    duration_s: float | None = None
    cost_usd: float | None = None
    cost_computed: bool = False  # True when priced from our table, not read from the log
    is_error: bool = False  # the run ended in an error (e.g. stream-json result is_error)
    final_text: str | None = None  # the agent's final answer where the log has one
    malformed: list[MalformedLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # anything the parser wants a reader to know

    @property
    def main(self) -> Thread:
        return self.threads[0]

    def thread(self, thread_id: str) -> Thread:
        for thread in self.all_threads():
            if thread.id == thread_id:
                return thread
        raise KeyError(thread_id)

    def all_threads(self) -> list[Thread]:
        """Every thread, each followed by its abandoned branches."""
        out: list[Thread] = []
        stack = list(reversed(self.threads))
        while stack:
            thread = stack.pop()
            out.append(thread)
            stack.extend(reversed(thread.branches))
        return out

    def events(self) -> list[Event]:
        return [e for t in self.all_threads() for turn in t.turns for e in turn.events]

    def usage(self, *, include_subagents: bool = True) -> Usage:
        """The billed total: the main path, abandoned branches and subagents (a model call is
        counted on one thread only). With include_subagents=False, the main path alone."""
        total = Usage()
        for thread in self.threads:
            if include_subagents:
                total.add(thread.usage())
                total.add(thread.abandoned_usage())
            elif thread.kind == "main":
                total.add(thread.usage())
        return total

    def abandoned_usage(self) -> Usage:
        """Tokens of abandoned branches (rewinds, retried responses), subagents' included."""
        total = Usage()
        for thread in self.threads:
            total.add(thread.abandoned_usage())
        return total

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Transcript:
        """The inverse of to_dict(); keys a later schema dropped are ignored, and an event kind
        this schema does not know reads as "unknown"."""
        return cls(
            **_known(cls, data),
            threads=[_thread(t) for t in data.get("threads", [])],
            malformed=[
                MalformedLine(**_known(MalformedLine, m)) for m in data.get("malformed", [])
            ],
        )


def transcript_json_pieces(transcript: Transcript) -> Iterator[str]:
    """The transcript as JSON text in pieces of one event (or one small object) at most: their
    concatenation is `json.dumps(transcript.to_dict(), ensure_ascii=False, default=str)`,
    yet neither that text nor the dict is ever built whole (for a large log, each is hundreds
    of MB). A piece boundary never falls inside a string."""
    return _json_pieces(transcript)


# The lists written item by item; everything else is written as one piece.
_PIECEWISE: dict[type, frozenset[str]] = {
    Transcript: frozenset({"threads", "malformed"}),
    Thread: frozenset({"turns", "branches"}),
    Turn: frozenset({"events"}),
}


def _json_pieces(value: Any) -> Iterator[str]:
    piecewise = _PIECEWISE.get(type(value))
    if piecewise is None:
        yield _json(_plain(value))
        return
    yield "{"
    for number, each in enumerate(fields(value)):
        head = (", " if number else "") + _json(each.name) + ": "
        member = getattr(value, each.name)
        if each.name not in piecewise:
            yield head + _json(_plain(member))
            continue
        yield head + "["
        for index, item in enumerate(member):
            if index:
                yield ", "
            yield from _json_pieces(item)
        yield "]"
    yield "}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _plain(value: Any) -> Any:
    """What asdict() makes of a value: dataclasses as dicts, containers converted inside."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


# Fields from_dict rebuilds from nested dicts, not passed through.
_NESTED = {"threads", "malformed", "turns", "usage", "events", "images", "branches"}
_FIELDS: dict[type, set[str]] = {}


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = _FIELDS.setdefault(cls, {f.name for f in fields(cls)} - _NESTED)
    return {key: value for key, value in data.items() if key in names}


def _thread(data: dict[str, Any]) -> Thread:
    return Thread(
        **_known(Thread, data),
        turns=[_turn(t) for t in data.get("turns", [])],
        branches=[_thread(b) for b in data.get("branches", [])],
    )


def _turn(data: dict[str, Any]) -> Turn:
    usage = Usage(**_known(Usage, data["usage"])) if data.get("usage") else None
    events = [_event(e) for e in data.get("events", [])]
    return Turn(**_known(Turn, data), usage=usage, events=events)


def _event(data: dict[str, Any]) -> Event:
    known = _known(Event, data)
    kinds = {kind.value for kind in EventKind}
    known["kind"] = EventKind(known["kind"] if known.get("kind") in kinds else "unknown")
    images = data.get("images") or ()
    if images:
        known["images"] = tuple(Image(**_known(Image, i)) for i in images if isinstance(i, dict))
    return Event(**known)
