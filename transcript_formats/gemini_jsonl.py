"""Gemini CLI session JSONL (0.40 and later): `~/.gemini/tmp/<project>/chats/session-*.jsonl`.

The first line is the session's metadata `{sessionId, projectHash, startTime, lastUpdated,
kind}`. Then every change is appended: a message `{id, timestamp, type: user | gemini | info |
warning | error, content, displayContent?, thoughts?, toolCalls?, tokens?, model?}` is written
again, whole, each time it changes (its tool calls complete, its tokens arrive), and the last
copy of an id wins in the place of the first; `{"$set": {...}}` updates the metadata (with
`messages`, it restates the whole history after a compression); `{"$rewindTo": id}` marks a
rewind to before that message. Tool results come back to the model as a user message of
`functionResponse` parts, which repeats what the tool call record already holds.

A subagent writes its own file, `chats/<parent session id>/<agent id>.jsonl` (`kind:
"subagent"`), and the spawning tool call records the same `agentId`.

Rewound messages are kept where they were and followed by a notice: Gemini CLI drops them on
resume, but they happened and were billed. A history restated by `$set` adds only the messages
it did not hold before (the compression summary), shown as a compaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import TranscriptFormatError
from .finish import finish_transcript
from .genai_parts import (
    calls_of,
    file_diff,
    is_only_responses,
    responses_of,
    result_text,
    str_or_none,
    thought_texts,
    tool_name,
    usage_of,
    visible_text,
)
from .records import (
    RECORD_ERRORS,
    EventIds,
    SourceFile,
    as_dict,
    capped_raw,
    images_of,
    iter_jsonl,
    record_not_understood,
)
from .schema import Event, EventKind, MalformedLine, Thread, Transcript, Turn, Usage
from .spawns import spawn_after

FORMAT = "gemini-cli-jsonl"
_DONE = frozenset({"success", "error", "cancelled"})


@dataclass
class _Entry:
    line: int
    message: dict[str, Any] | None = None  # the last copy of the message written here
    rewind_to: str | None = None
    restated: list[dict[str, Any]] = field(default_factory=list)  # new messages of a $set


@dataclass
class _Session:
    source: SourceFile
    meta: dict[str, Any] = field(default_factory=dict)
    entries: list[_Entry] = field(default_factory=list)

    @property
    def session_id(self) -> str | None:
        return str_or_none(self.meta.get("sessionId"))

    @property
    def is_subagent(self) -> bool:
        return self.meta.get("kind") == "subagent"


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    sessions = [_read(source, transcript.malformed) for source in files]
    sessions = [s for s in sessions if s.meta or s.entries]
    if not sessions:
        raise TranscriptFormatError(f"{files[0].name}: no Gemini CLI session record")
    main = next((s for s in sessions if not s.is_subagent), sessions[0])
    transcript.session_id = main.session_id
    transcript.started_at = str_or_none(main.meta.get("startTime"))
    transcript.ended_at = str_or_none(main.meta.get("lastUpdated"))
    builder = _Builder(transcript, EventIds())
    builder.thread(main, Thread(id="main", kind="main"))
    agents = {s.session_id: s for s in sessions if s.is_subagent and s is not main and s.session_id}
    builder.subagents(agents)
    for other in sessions:
        if other is not main and not other.is_subagent:
            transcript.notes.append(f"{other.source.name} is another session, not shown here.")
    return finish_transcript(transcript)


def _read(source: SourceFile, malformed: list[MalformedLine]) -> _Session:
    session = _Session(source)
    where: dict[str, _Entry] = {}
    for line, record in iter_jsonl(source, malformed):
        try:
            _record(session, where, record, line)
        except RECORD_ERRORS as exc:
            record_not_understood(malformed, source.name, line, exc)
    return session


def _record(session: _Session, where: dict[str, _Entry], record: dict[str, Any], line: int) -> None:
    if isinstance(record.get("$rewindTo"), str):
        session.entries.append(_Entry(line, rewind_to=record["$rewindTo"]))
    elif isinstance(record.get("$set"), dict):
        update = record["$set"]
        session.meta.update({k: v for k, v in update.items() if k != "messages"})
        if isinstance(update.get("messages"), list):
            new = [m for m in update["messages"] if _message_id(m) and _message_id(m) not in where]
            entry = _Entry(line, restated=new)
            session.entries.append(entry)
            for message in new:
                where[str(message["id"])] = entry
    elif _message_id(record):
        _message(session, where, record, line)
    elif "sessionId" in record or "projectHash" in record:
        # The header; a session migrated from the JSON format may hold its messages on it.
        session.meta.update({k: v for k, v in record.items() if k != "messages"})
        for message in record.get("messages") or []:
            if _message_id(message):
                _message(session, where, message, line)
    else:
        raise ValueError("neither a message, a metadata line, an update nor a rewind")


def _message_id(value: Any) -> str | None:
    return str_or_none(value.get("id")) if isinstance(value, dict) else None


def _message(
    session: _Session, where: dict[str, _Entry], message: dict[str, Any], line: int
) -> None:
    message_id = str(message["id"])
    entry = where.get(message_id)
    if entry is None or entry.message is None:
        entry = _Entry(line)
        session.entries.append(entry)
        where[message_id] = entry
    entry.message = message


class _Builder:
    def __init__(self, transcript: Transcript, ids: EventIds) -> None:
        self.transcript, self.ids = transcript, ids
        self.calls: dict[str, tuple[Thread, Turn, Event]] = {}
        self.answered: set[str] = set()
        self.spawners: list[tuple[str, Thread, Turn, Event]] = []  # agent id, where it spawned

    def thread(self, session: _Session, thread: Thread) -> Thread:
        self.transcript.threads.append(thread)
        positions: dict[str, int] = {}
        for entry in session.entries:
            try:
                self._entry(thread, entry, positions)
            except RECORD_ERRORS as exc:
                record_not_understood(
                    self.transcript.malformed, session.source.name, entry.line, exc
                )
        return thread

    def subagents(self, agents: dict[str, _Session]) -> None:
        for agent_id, parent, turn, call in self.spawners:
            session = agents.pop(agent_id, None)
            if session is not None:
                child = self._child(session, call.tool_name or "")
                spawn_after(child, parent, turn, call, self.ids)
        main = self.transcript.main
        for session in agents.values():
            child = self._child(session, "")
            turn = self._turn(main, session.meta.get("startTime"), None)
            spawn_after(child, main, turn, None, self.ids)
            self.transcript.notes.append(
                f"Subagent {session.session_id} names no tool call of this session; "
                "it is shown at the end."
            )

    def _child(self, session: _Session, title: str) -> Thread:
        thread = Thread(id=f"agent-{session.session_id}", kind="subagent", title=title)
        return self.thread(session, thread)

    def _turn(self, thread: Thread, stamp: Any, model: Any) -> Turn:
        turn = Turn(index=len(thread.turns), timestamp=str_or_none(stamp), model=str_or_none(model))
        thread.turns.append(turn)
        return turn

    def _event(self, turn: Turn, kind: EventKind, line: int, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, timestamp=turn.timestamp, **fields)
        turn.events.append(event)
        return event

    def _entry(self, thread: Thread, entry: _Entry, positions: dict[str, int]) -> None:
        if entry.message is not None:
            positions[str(entry.message["id"])] = len(thread.turns)
            self._message(thread, entry.message, entry.line)
        elif entry.rewind_to is not None:
            self._rewind(thread, entry, positions)
        elif entry.restated:
            turn = self._turn(thread, entry.restated[0].get("timestamp"), None)
            text = "\n\n".join(visible_text(m.get("content")) for m in entry.restated)
            self._event(turn, EventKind.COMPACTION, entry.line, text=text.strip())

    def _rewind(self, thread: Thread, entry: _Entry, positions: dict[str, int]) -> None:
        start = positions.get(str(entry.rewind_to), 0)
        gone = len(thread.turns) - start
        turn = self._turn(thread, None, None)
        self._event(
            turn,
            EventKind.SYSTEM_NOTICE,
            entry.line,
            text=f"Rewound to before message {entry.rewind_to}: the {gone} turns above it were "
            "dropped from the conversation (their tokens were spent and are counted).",
        )

    def _message(self, thread: Thread, message: dict[str, Any], line: int) -> None:
        kind = message.get("type")
        if kind == "user":
            self._user(thread, message, line)
        elif kind == "gemini":
            self._gemini(thread, message, line)
        elif kind in ("info", "warning", "error"):
            turn = self._turn(thread, message.get("timestamp"), None)
            text = visible_text(message.get("content"))
            self._event(turn, EventKind.SYSTEM_NOTICE, line, text=text, is_error=kind == "error")
        else:
            turn = self._turn(thread, message.get("timestamp"), None)
            self._event(turn, EventKind.UNKNOWN, line, raw_type=str(kind), raw=capped_raw(message))

    def _user(self, thread: Thread, message: dict[str, Any], line: int) -> None:
        content = message.get("content")
        if is_only_responses(content):
            self._responses(thread, message, line)
            return
        shown = message.get("displayContent") or content
        turn = self._turn(thread, message.get("timestamp"), None)
        self._event(
            turn,
            EventKind.USER_TEXT,
            line,
            text=visible_text(shown),
            images=images_of(content if isinstance(content, list) else []),
        )

    def _responses(self, thread: Thread, message: dict[str, Any], line: int) -> None:
        """Results the tool call records lacked (older writers); others are already shown."""
        for response in responses_of(message.get("content")):
            if response.call_id in self.answered:
                continue
            site = self.calls.get(response.call_id or "")
            turn = site[1] if site else self._turn(thread, message.get("timestamp"), None)
            self._event(
                turn,
                EventKind.TOOL_RESULT,
                line,
                tool_name=response.name,
                call_id=response.call_id,
                text=response.text,
                is_error=response.is_error,
            )
            if response.call_id:
                self.answered.add(response.call_id)

    def _gemini(self, thread: Thread, message: dict[str, Any], line: int) -> None:
        turn = self._turn(thread, message.get("timestamp"), message.get("model"))
        content = message.get("content")
        for thought in message.get("thoughts") or []:
            self._event(turn, EventKind.REASONING, line, text=_thought_text(thought))
        for text in thought_texts(content):
            self._event(turn, EventKind.REASONING, line, text=text)
        text = visible_text(content)
        if text.strip():
            self._event(turn, EventKind.ASSISTANT_TEXT, line, text=text)
        records = [as_dict(c) for c in message.get("toolCalls") or []]
        recorded = {str_or_none(c.get("id")) for c in records} - {None}
        for record in records:
            self._tool_call(thread, turn, record, line)
        for call in calls_of(content):
            if call.call_id not in recorded:
                self._call_event(thread, turn, call.call_id, call.name, call.args, line)
        turn.usage = _usage(message.get("tokens"))
        if not turn.events:
            self._event(turn, EventKind.SYSTEM_NOTICE, line, text="The model returned no text.")

    def _call_event(
        self, thread: Thread, turn: Turn, call_id: str | None, name: str, args: Any, line: int
    ) -> Event:
        event = self._event(
            turn, EventKind.TOOL_CALL, line, tool_name=name, call_id=call_id, arguments=args
        )
        if call_id:
            self.calls[call_id] = (thread, turn, event)
        return event

    def _tool_call(self, thread: Thread, turn: Turn, record: dict[str, Any], line: int) -> None:
        call_id, name = str_or_none(record.get("id")), tool_name(record.get("name"))
        call = self._call_event(thread, turn, call_id, name, record.get("args"), line)
        agent_id = str_or_none(record.get("agentId"))
        if agent_id:
            self.spawners.append((agent_id, thread, turn, call))
        status = record.get("status")
        display = record.get("resultDisplay")
        if status not in _DONE and record.get("result") is None:
            return  # still running when the session was written
        is_error = status in ("error", "cancelled")
        self._event(
            turn,
            EventKind.TOOL_RESULT,
            line,
            tool_name=name,
            call_id=call_id,
            text=result_text(record.get("result"), display),
            is_error=is_error,
        )
        if call_id:
            self.answered.add(call_id)
        change = None if is_error else file_diff(display)
        if change is not None:
            self._event(
                turn,
                EventKind.FILE_CHANGE,
                line,
                tool_name=name,
                call_id=call_id,
                path=change.path,
                diff=change.diff,
            )


def _thought_text(thought: Any) -> str:
    thought = as_dict(thought)
    subject, body = str_or_none(thought.get("subject")), str(thought.get("description") or "")
    return f"{subject}\n{body}" if subject else body


def _usage(tokens: Any) -> Usage | None:
    """`tokens` {input, output, cached, thoughts, tool, total}: Gemini's usage metadata."""
    if not isinstance(tokens, dict):
        return None
    return usage_of(
        prompt=tokens.get("input"),
        candidates=tokens.get("output"),
        cached=tokens.get("cached"),
        thoughts=tokens.get("thoughts"),
        tool=tokens.get("tool"),
        total=tokens.get("total"),
        thoughts_in_candidates=False,
    )
