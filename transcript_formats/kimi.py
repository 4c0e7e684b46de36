"""Kimi CLI sessions (Moonshot's kimi-cli, `~/.kimi/sessions/<md5 of cwd>/<session id>/`).

A session folder holds `context.jsonl`, the model's history, and (since 0.59) `wire.jsonl`,
every event the UI was sent, timed; a subagent writes the same pair under
`subagents/<agent id>/`. Before 0.59 the session was one flat `<session id>.jsonl` context file.

wire.jsonl: an optional `{"type": "metadata", "protocol_version"}` first line (0.86+), then
`{timestamp, message: {type, payload}}` lines: TurnBegin (the user's input), StepBegin (one
model call), ContentPart (text or think parts), ToolCall / ToolCallPart (arguments streamed in
pieces), ToolResult (`return_value: {is_error, output, message, display}`; a `diff` display
block is the file change), StatusUpdate (the step's `token_usage`), CompactionBegin,
StepInterrupted, approvals, and SubagentEvent, which wraps a subagent's own events with the id
of the Agent call that spawned it. When a session has a wire file it is the one read: it holds
everything the context file does, plus times and tokens.

context.jsonl: `{role, content, tool_calls, tool_call_id}` messages (content a string or
`text` / `think` / `image_url` parts, OpenAI-style tool calls), and bookkeeping records
`_system_prompt`, `_checkpoint` and `_usage` (the context's size, not tokens billed).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .diffs import diff_header, text_diff
from .epoch import iso_from_epoch
from .finish import finish_transcript
from .records import (
    JSON_ERRORS,
    RECORD_ERRORS,
    EventIds,
    SourceFile,
    as_dict,
    as_str,
    as_text,
    capped_raw,
    images_of,
    iter_jsonl,
    record_not_understood,
)
from .schema import Event, EventKind, Thread, Transcript, Turn, Usage
from .spawns import spawn_after

FORMAT = "kimi-cli"

# Every message type a wire file may hold (protocol 1.1 to 1.10); detection keys on them.
WIRE_TYPES = frozenset(
    {
        "TurnBegin",
        "TurnEnd",
        "SteerInput",
        "StepBegin",
        "StepInterrupted",
        "StepRetry",
        "ContentPart",
        "ToolCall",
        "ToolCallPart",
        "ToolResult",
        "StatusUpdate",
        "CompactionBegin",
        "CompactionEnd",
        "SubagentEvent",
        "ApprovalRequest",
        "ApprovalResponse",
        "ApprovalRequestResolved",
        "ToolCallRequest",
        "QuestionRequest",
        "HookTriggered",
        "HookResolved",
        "HookRequest",
        "MCPLoadingBegin",
        "MCPLoadingEnd",
        "Notification",
        "PlanDisplay",
        "BtwBegin",
        "BtwEnd",
    }
)
CONTEXT_BOOKKEEPING = frozenset({"_system_prompt", "_checkpoint", "_usage"})
# Shown in the UI only: nothing a reader of the run needs.
_SILENT = frozenset(
    {
        "TurnEnd",
        "CompactionEnd",
        "HookTriggered",
        "HookRequest",
        "MCPLoadingBegin",
        "MCPLoadingEnd",
        "ToolCallRequest",
    }
)
# A subagent's events nest inside its parent's; deeper than this is not followed.
MAX_SUBAGENT_DEPTH = 8
_SYSTEM_TAG = re.compile(r"^\s*<system(?:-reminder)?>.*</system(?:-reminder)?>\s*$", re.DOTALL)


@dataclass
class _Session:
    """The files of one session folder (or one subagent's)."""

    folder: str
    wire: SourceFile | None = None
    contexts: list[SourceFile] = field(default_factory=list)

    @property
    def agent_id(self) -> str | None:
        parts = self.folder.split("/")
        if "subagents" in parts[:-1]:
            return parts[parts.index("subagents") + 1]
        return None


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    sessions = _sessions(files)
    mains = [s for s in sessions if s.agent_id is None] or sessions[:1]
    main_session = mains[0]
    for other in mains[1:]:
        transcript.notes.append(f"{other.folder or 'a file'}: another session, not shown.")
    ids = EventIds()
    main = Thread(id="main", kind="main")
    transcript.threads.append(main)
    transcript.session_id = _session_id(main_session)
    builder = _ThreadBuilder(main, ids, transcript, depth=0)
    _read_session(builder, main_session, transcript)
    told = builder.subagent_ids()
    own = f"{main_session.folder}/subagents/" if main_session.folder else "subagents/"
    for session in sessions:
        agent_id = session.agent_id
        if agent_id is None or agent_id in told or not f"{session.folder}/".startswith(own):
            continue
        thread = Thread(id=f"agent-{agent_id}", kind="subagent", title=agent_id)
        transcript.threads.append(thread)
        _read_session(_ThreadBuilder(thread, ids, transcript, depth=1), session, transcript)
        _link_by_result(transcript, main, thread, agent_id, ids)
    return finish_transcript(transcript)


def _sessions(files: list[SourceFile]) -> list[_Session]:
    by_folder: dict[str, _Session] = {}
    for source in sorted(files, key=lambda f: f.name):
        folder, _, name = source.name.rpartition("/")
        session = by_folder.setdefault(folder, _Session(folder))
        if session.wire is None and (name == "wire.jsonl" or _is_wire(source)):
            session.wire = source
        else:
            session.contexts.append(source)
    return sorted(by_folder.values(), key=lambda s: (s.folder.count("/"), s.folder))


def _is_wire(source: SourceFile) -> bool:
    for _, record in iter_jsonl(source, []):
        return record.get("type") == "metadata" or isinstance(record.get("message"), dict)
    return False


def _session_id(session: _Session) -> str | None:
    name = session.folder.rpartition("/")[2]
    if not name and session.contexts:
        name = session.contexts[0].name.rpartition("/")[2].removesuffix(".jsonl")
    return name if name and name not in ("context", "wire") else None


def _read_session(builder: _ThreadBuilder, session: _Session, transcript: Transcript) -> None:
    if session.wire is not None and builder.read_wire(session.wire):
        return  # the context file holds the same messages, without times or tokens
    contexts = session.contexts
    chosen = next((c for c in contexts if c.name.endswith("context.jsonl")), None) or (
        contexts[0] if contexts else None
    )
    if chosen is None:
        return
    for other in contexts:
        if other is not chosen:
            transcript.notes.append(
                f"{other.name}: not shown (an earlier context kept by a /clear or a rewind, "
                "or another session's)."
            )
    builder.read_context(chosen)


def _link_by_result(
    transcript: Transcript, parent: Thread, thread: Thread, agent_id: str, ids: EventIds
) -> None:
    """A subagent whose spawning is not in the parent's wire: under the result naming it."""
    for turn in parent.turns:
        for event in turn.events:
            if event.kind == EventKind.TOOL_RESULT and agent_id in event.text:
                spawn_after(thread, parent, turn, event, ids)
                return


class _ThreadBuilder:
    """Builds one thread from a wire file (or the wire events nested in a parent's) or from a
    context file."""

    def __init__(
        self, thread: Thread, ids: EventIds, transcript: Transcript, *, depth: int
    ) -> None:
        self.thread, self.ids, self.transcript, self.depth = thread, ids, transcript, depth
        self.turn: Turn | None = None
        self.step: Turn | None = None  # the model call still receiving parts
        self.calls: dict[str, tuple[Turn, Event]] = {}
        self.raw_arguments: dict[str, str] = {}
        self.last_call: Event | None = None
        self.usage_turns: dict[str, Turn] = {}  # StatusUpdate message id -> its model call
        self.subagents: dict[str, _ThreadBuilder] = {}
        self.source = ""

    def subagent_ids(self) -> set[str]:
        found = set(self.subagents)
        for child in self.subagents.values():
            found |= child.subagent_ids()
        return found

    # -- turns ---------------------------------------------------------------------------

    def new_turn(self, stamp: str | None) -> Turn:
        self.turn = Turn(index=len(self.thread.turns), timestamp=stamp)
        self.thread.turns.append(self.turn)
        return self.turn

    def current(self, stamp: str | None) -> Turn:
        return self.turn or self.new_turn(stamp)

    def model_call(self, stamp: str | None) -> Turn:
        if self.step is None:
            self.step = self.new_turn(stamp)
        return self.step

    def event(self, turn: Turn, kind: EventKind, line: int | None, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, **fields)
        turn.events.append(event)
        return event

    # -- wire ----------------------------------------------------------------------------

    def read_wire(self, source: SourceFile) -> bool:
        """Read a wire file; False when it holds no message at all (then the context is read)."""
        self.source = source.name
        seen = False
        for line, record in iter_jsonl(source, self.transcript.malformed):
            message = record.get("message")
            if record.get("type") == "metadata" and message is None:
                continue
            seen = True
            try:
                self.wire_message(message, iso_from_epoch(record.get("timestamp")), line)
            except RECORD_ERRORS as exc:
                record_not_understood(self.transcript.malformed, source.name, line, exc)
        return seen

    def wire_message(self, message: Any, stamp: str | None, line: int) -> None:
        message = as_dict(message)
        kind = as_str(message.get("type"))
        payload = as_dict(message.get("payload"))
        if kind in ("TurnBegin", "SteerInput"):
            self.step = None
            user_input = payload.get("user_input")
            self.event(
                self.new_turn(stamp),
                EventKind.USER_TEXT,
                line,
                text=_parts_text(user_input),
                images=images_of(user_input),
                timestamp=stamp,
            )
        elif kind in ("StepBegin", "TurnEnd"):
            self.step = None
        elif kind == "ContentPart":
            self.content_part(payload, stamp, line)
        elif kind == "ToolCall":
            self.tool_call(payload, stamp, line)
        elif kind == "ToolCallPart":
            self.tool_call_part(payload)
        elif kind == "ToolResult":
            self.tool_result(payload, stamp, line)
        elif kind == "StatusUpdate":
            self.status_update(payload, stamp)
        elif kind == "CompactionBegin":
            self.step = None
            self.event(
                self.new_turn(stamp),
                EventKind.COMPACTION,
                line,
                text="Context compacted",
                timestamp=stamp,
            )
        elif kind == "SubagentEvent":
            self.subagent_event(payload, stamp, line)
        elif kind not in _SILENT:
            self.notice_or_unknown(str(kind), payload, message, stamp, line)

    def content_part(self, part: dict[str, Any], stamp: str | None, line: int) -> None:
        turn = self.model_call(stamp)
        kind = part.get("type")
        if kind == "text":
            self.append(turn, EventKind.ASSISTANT_TEXT, as_str(part.get("text")) or "", stamp, line)
        elif kind == "think":
            text = as_str(part.get("think")) or ""
            if not text and part.get("encrypted"):
                text = "[encrypted reasoning]"
            self.append(turn, EventKind.REASONING, text, stamp, line)
        else:
            raw_type = f"wire:ContentPart:{kind}"
            self.event(turn, EventKind.UNKNOWN, line, raw_type=raw_type, raw=capped_raw(part))

    def append(self, turn: Turn, kind: EventKind, text: str, stamp: str | None, line: int) -> None:
        """Parts stream in pieces: a piece right after one of its kind continues it."""
        last = turn.events[-1] if turn.events else None
        if last is not None and last.kind == kind:
            last.text += text
        elif text:
            self.event(turn, kind, line, text=text, timestamp=stamp)

    def tool_call(self, payload: dict[str, Any], stamp: str | None, line: int) -> None:
        turn = self.model_call(stamp)
        function = as_dict(payload.get("function"))
        call_id = as_str(payload.get("id")) or ""
        raw = function.get("arguments")
        event = self.event(
            turn,
            EventKind.TOOL_CALL,
            line,
            tool_name=as_str(function.get("name")) or "?",
            call_id=call_id or None,
            arguments=_json_or_text(raw),
            timestamp=stamp,
        )
        self.raw_arguments[event.id] = raw if isinstance(raw, str) else ""
        self.last_call = event
        if call_id:
            self.calls[call_id] = (turn, event)

    def tool_call_part(self, payload: dict[str, Any]) -> None:
        piece = payload.get("arguments_part")
        if self.last_call is None or not isinstance(piece, str):
            return
        raw = self.raw_arguments.get(self.last_call.id, "") + piece
        self.raw_arguments[self.last_call.id] = raw
        self.last_call.arguments = _json_or_text(raw)

    def tool_result(self, payload: dict[str, Any], stamp: str | None, line: int) -> None:
        call_id = as_str(payload.get("tool_call_id")) or ""
        turn, call = self.calls.get(call_id, (None, None))
        value = as_dict(payload.get("return_value"))
        output, message = value.get("output"), as_str(value.get("message")) or ""
        is_error = value.get("is_error") is True
        text = _parts_text(output)
        if is_error or not text:
            text = "\n".join(t for t in (message, text) if t)
        target = turn or self.current(stamp)
        name = call.tool_name if call else None
        self.event(
            target,
            EventKind.TOOL_RESULT,
            line,
            text=text,
            tool_name=name,
            call_id=call_id or None,
            is_error=is_error,
            images=images_of(output),
            timestamp=stamp,
        )
        displays = value.get("display")
        for block in displays if isinstance(displays, list) and not is_error else []:
            if isinstance(block, dict) and block.get("type") == "diff":
                self.diff_block(target, block, name, call_id, stamp, line)

    def diff_block(
        self,
        turn: Turn,
        block: dict[str, Any],
        tool_name: str | None,
        call_id: str,
        stamp: str | None,
        line: int,
    ) -> None:
        path = as_str(block.get("path"))
        old, new = block.get("old_text"), block.get("new_text")
        if not path or not isinstance(old, str) or not isinstance(new, str):
            return
        diff = _shifted(text_diff(path, old, new), block.get("old_start"), block.get("new_start"))
        if not old:
            diff = diff.replace(diff_header(path, path), diff_header(None, path), 1)
        self.event(
            turn,
            EventKind.FILE_CHANGE,
            line,
            tool_name=tool_name,
            call_id=call_id or None,
            path=path,
            diff=diff,
            timestamp=stamp,
        )

    def status_update(self, payload: dict[str, Any], stamp: str | None) -> None:
        usage = _usage(payload.get("token_usage"))
        if usage is None:
            return
        message_id = as_str(payload.get("message_id"))
        turn = self.usage_turns.get(message_id) if message_id else None
        if turn is None:
            turn = self.step or self.model_call(stamp)
            if message_id:
                self.usage_turns[message_id] = turn
        # A step reports its usage as it grows, under one message id: the latest is the call's.
        turn.usage = usage

    def subagent_event(self, payload: dict[str, Any], stamp: str | None, line: int) -> None:
        parent_call = as_str(payload.get("parent_tool_call_id") or payload.get("task_tool_call_id"))
        key = as_str(payload.get("agent_id")) or parent_call or "subagent"
        child = self.subagents.get(key)
        if child is None:
            if self.depth >= MAX_SUBAGENT_DEPTH:
                self.event(
                    self.current(stamp),
                    EventKind.UNKNOWN,
                    line,
                    raw_type="wire:SubagentEvent (nested too deep)",
                    raw=capped_raw(payload),
                )
                return
            child = self.spawn(key, as_str(payload.get("subagent_type")), parent_call, stamp)
        event = as_dict(payload.get("event"))
        child.wire_message(event, stamp, line)

    def spawn(
        self, key: str, kind: str | None, parent_call: str | None, stamp: str | None
    ) -> _ThreadBuilder:
        thread = Thread(
            id=f"{self.thread.id}/agent-{key}" if self.depth else f"agent-{key}",
            kind="subagent",
            title=kind or key,
            parent_thread=self.thread.id,
        )
        self.transcript.threads.append(thread)
        child = _ThreadBuilder(thread, self.ids, self.transcript, depth=self.depth + 1)
        child.source = self.source
        self.subagents[key] = child
        turn, call = self.calls.get(parent_call or "", (None, None))
        turn = turn or self.current(stamp)
        spawn = Event(
            id=self.ids.next(),
            kind=EventKind.SUBAGENT_SPAWN,
            text=thread.title,
            tool_name=call.tool_name if call else None,
            call_id=parent_call,
            child_thread=thread.id,
            timestamp=stamp,
        )
        position = turn.events.index(call) + 1 if call in turn.events else len(turn.events)
        turn.events.insert(position, spawn)
        thread.parent_event = spawn.id
        return child

    def notice_or_unknown(
        self,
        kind: str,
        payload: dict[str, Any],
        message: dict[str, Any],
        stamp: str | None,
        line: int,
    ) -> None:
        text, is_error = _notice(kind, payload)
        turn = self.current(stamp)
        if text is None:
            self.event(
                turn,
                EventKind.UNKNOWN,
                line,
                raw_type=f"wire:{kind}",
                raw=capped_raw(message),
                timestamp=stamp,
            )
        elif text:
            self.event(
                turn, EventKind.SYSTEM_NOTICE, line, text=text, is_error=is_error, timestamp=stamp
            )

    # -- context -------------------------------------------------------------------------

    def read_context(self, source: SourceFile) -> None:
        self.source = source.name
        context_tokens: int | None = None
        for line, record in iter_jsonl(source, self.transcript.malformed):
            try:
                if record.get("role") == "_usage":
                    count = record.get("token_count")
                    context_tokens = count if isinstance(count, int) else context_tokens
                else:
                    self.context_message(record, line)
            except RECORD_ERRORS as exc:
                record_not_understood(self.transcript.malformed, source.name, line, exc)
        if context_tokens is not None and self.thread.kind == "main":
            self.transcript.notes.append(
                f"The context held {context_tokens:,} tokens at its last count; context.jsonl "
                "records no tokens per model call, so no usage is shown."
            )

    def context_message(self, record: dict[str, Any], line: int) -> None:
        role = record.get("role")
        content = record.get("content")
        if role == "_checkpoint":
            return
        if role in ("_system_prompt", "system"):
            self.event(self.current(None), EventKind.SYSTEM_NOTICE, line, text=_parts_text(content))
        elif role == "user":
            text = _parts_text(content)
            if _SYSTEM_TAG.match(text):
                self.event(self.current(None), EventKind.SYSTEM_NOTICE, line, text=text)
                return
            self.step = None
            turn = self.new_turn(None)
            self.event(turn, EventKind.USER_TEXT, line, text=text, images=images_of(content))
        elif role == "assistant":
            self.step = None
            self.context_assistant(record, line)
        elif role == "tool":
            self.context_tool(record, line)
        else:
            self.event(
                self.current(None),
                EventKind.UNKNOWN,
                line,
                raw_type=f"role:{role}",
                raw=capped_raw(record),
            )

    def context_assistant(self, record: dict[str, Any], line: int) -> None:
        content = record.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        self.model_call(None)
        for part in parts:
            if isinstance(part, dict):
                self.content_part(part, None, line)
        tool_calls = record.get("tool_calls")
        for call in tool_calls if isinstance(tool_calls, list) else []:
            if isinstance(call, dict):
                self.tool_call(call, None, line)

    def context_tool(self, record: dict[str, Any], line: int) -> None:
        call_id = as_str(record.get("tool_call_id")) or ""
        turn, call = self.calls.get(call_id, (None, None))
        content = record.get("content")
        text = _parts_text(content)
        self.event(
            turn or self.current(None),
            EventKind.TOOL_RESULT,
            line,
            text=text,
            tool_name=call.tool_name if call else None,
            call_id=call_id or None,
            is_error=text.lstrip().startswith("<system>ERROR:"),
            images=images_of(content),
        )


def _notice(kind: str, payload: dict[str, Any]) -> tuple[str | None, bool]:
    """The notice a wire message is shown as: (text, is_error); text None when unknown, ""
    when there is nothing to show."""
    if kind == "StepInterrupted":
        return "Step interrupted", False
    if kind == "StepRetry":
        reason = as_str(payload.get("error_type")) or "an error"
        return f"Model call retried after {reason} (attempt {payload.get('next_attempt')})", True
    if kind == "ApprovalRequest":
        action = as_str(payload.get("action")) or "an action"
        return f"Approval asked for {action}: {as_str(payload.get('description')) or ''}", False
    if kind in ("ApprovalResponse", "ApprovalRequestResolved"):
        feedback = as_str(payload.get("feedback"))
        text = f"Approval: {as_str(payload.get('response')) or '?'}"
        return text + (f" ({feedback})" if feedback else ""), False
    if kind == "HookResolved":
        if payload.get("action") != "block":
            return "", False
        reason = as_str(payload.get("reason")) or ""
        return f"Hook {payload.get('event')} blocked {payload.get('target')}: {reason}", True
    if kind == "PlanDisplay":
        return as_str(payload.get("content")) or "", False
    if kind == "Notification":
        body = "\n".join(
            s for s in (payload.get("title"), payload.get("body")) if isinstance(s, str)
        )
        return body, payload.get("severity") == "error"
    if kind == "QuestionRequest":
        questions = payload.get("questions")
        asked = [as_dict(q).get("question") for q in _list(questions)]
        return "Asked: " + "\n".join(q for q in asked if isinstance(q, str)), False
    if kind == "BtwBegin":
        return f"Side question: {as_str(payload.get('question')) or ''}", False
    if kind == "BtwEnd":
        error = as_str(payload.get("error"))
        return (error or as_str(payload.get("response")) or ""), error is not None
    return None, False


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _parts_text(content: Any) -> str:
    """The text of a string or of content parts (think parts are not part of a message's text)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return as_text(content)
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict) and part.get("type") in ("audio_url", "video_url"):
            texts.append(f"[{str(part['type']).removesuffix('_url')}]")  # images are kept whole
    return "".join(texts)


def _json_or_text(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except JSON_ERRORS:  # a string nested past the parser's depth is kept as the text it is
        return raw


def _usage(raw: Any) -> Usage | None:
    """A step's token_usage: input_other never includes the cached input, so none is taken off."""
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=_int(raw.get("input_other")),
        output_tokens=_int(raw.get("output")),
        cache_read_tokens=_int(raw.get("input_cache_read")),
        cache_write_tokens=_int(raw.get("input_cache_creation")),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


_HUNK = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@", re.MULTILINE)


def _shifted(diff: str, old_start: Any, new_start: Any) -> str:
    """A diff of a snippet, renumbered to where the snippet starts in its file."""
    old_shift, new_shift = _int(old_start) - 1, _int(new_start) - 1
    if old_shift <= 0 and new_shift <= 0:
        return diff

    def shift(match: re.Match[str]) -> str:
        old, new = int(match[1]) + max(old_shift, 0), int(match[3]) + max(new_shift, 0)
        return f"@@ -{old}{match[2]} +{new}{match[4]} @@"

    return _HUNK.sub(shift, diff)
