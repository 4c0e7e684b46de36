"""Factory Droid: its session store and `droid exec --output-format stream-json`.

The session store (~/.factory/sessions/<project>/<id>.jsonl) opens with a session_start record
{id, title, owner, version, cwd}; then `message` records {id, parentId, timestamp, message:
{role, content}} whose content blocks are Anthropic's (text, thinking, tool_use, tool_result);
todo_state records are skipped. Beside it, <id>.settings.json holds the model and the session's
`tokenUsage` {inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens, thinkingTokens}.
A Task subagent runs as a session of its own whose first message is "# Task Tool Invocation ...";
given with its parent, it hangs under the parent's Task call whose prompt it carries.

stream-json prints system/init {session_id, model, cwd, tools}, `message` {role, id, text},
`reasoning` {id, text} (sometimes twice), `tool_call` {id, messageId, toolName, parameters},
`tool_result` {id, isError, value}, `error`, and a final `completion` {finalText, numTurns,
durationMs, usage}.

Tokens: Droid's counts follow Anthropic's (input without the cached part; thinking tokens are
part of the output and not added again). A message that carries `usage` is charged on its own
turn; otherwise the session's total (settings.json, or completion.usage) is put on the last
model call, with a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .apply_patch import envelope_to_diffs, find_envelope
from .diffs import TrackedFiles, new_file_diff, text_diff
from .errors import TranscriptFormatError
from .finish import finish_transcript
from .records import (
    RECORD_ERRORS,
    EventIds,
    SourceFile,
    as_dict,
    as_str,
    as_text,
    capped_raw,
    each_jsonl_record,
    images_of,
    iter_jsonl,
    load_json_document,
    record_not_understood,
)
from .schema import Event, EventKind, Image, MalformedLine, Thread, Transcript, Turn, Usage
from .spawns import spawn_after

SESSION_FORMAT = "droid-session"
STREAM_FORMAT = "droid-stream-json"
TASK_PROMPT_HEAD = "# Task Tool Invocation"
_SKIPPED_SESSION = frozenset({"todo_state"})


# -- what both share -------------------------------------------------------------------------


class _Builder:
    """Turns of one thread: model calls keyed by message id, tool calls joined by id."""

    def __init__(self, thread: Thread, ids: EventIds, files: TrackedFiles) -> None:
        self.thread, self.ids, self.files = thread, ids, files
        self.turn: Turn | None = None  # the current model call
        self.key: str | None = None
        self.by_key: dict[str, Turn] = {}
        self.calls: dict[str, tuple[Turn, Event]] = {}

    def new_turn(self, stamp: str | None, *, model_call: bool, key: str | None = None) -> Turn:
        turn = Turn(index=len(self.thread.turns), timestamp=stamp)
        self.thread.turns.append(turn)
        self.turn, self.key = (turn, key) if model_call else (None, None)
        if key and model_call:
            self.by_key[key] = turn
        return turn

    def model_turn(self, key: str | None, stamp: str | None) -> Turn:
        """The call `key` belongs to; one that so far only thought adopts the key."""
        if key and key in self.by_key:
            return self.by_key[key]
        turn = self.turn
        thinking_only = turn is not None and all(e.kind == EventKind.REASONING for e in turn.events)
        if turn is not None and self.key is None and (thinking_only or key is None):
            self.key = key
            if key:
                self.by_key[key] = turn
            return turn
        return self.new_turn(stamp, model_call=True, key=key)

    def event(self, turn: Turn, kind: EventKind, line: int | None, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, **fields)
        turn.events.append(event)
        return event

    def any_turn(self, stamp: str | None) -> Turn:
        if self.turn is not None:
            return self.turn
        return (
            self.thread.turns[-1] if self.thread.turns else self.new_turn(stamp, model_call=False)
        )

    def call(
        self, turn: Turn, call_id: Any, name: Any, args: Any, stamp: str | None, line: int
    ) -> Event:
        call_id = call_id if isinstance(call_id, str) and call_id else None
        event = self.event(
            turn,
            EventKind.TOOL_CALL,
            line,
            tool_name=str(name) if name else "?",
            call_id=call_id,
            arguments=args,
            timestamp=stamp,
        )
        if call_id:
            self.calls[call_id] = (turn, event)
        return event

    def result(
        self,
        call_id: Any,
        text: str,
        is_error: bool,
        stamp: str | None,
        line: int,
        images: tuple[Image, ...] = (),
    ) -> None:
        call_id = call_id if isinstance(call_id, str) and call_id else None
        found = self.calls.get(call_id or "\0")
        turn, call = found if found else (self.any_turn(stamp), None)
        self.event(
            turn,
            EventKind.TOOL_RESULT,
            line,
            tool_name=call.tool_name if call else None,
            call_id=call_id,
            text=text,
            is_error=is_error,
            timestamp=stamp,
            images=images,
        )
        if call is not None and not is_error:
            for path, diff in _file_diffs(call, self.files):
                self.event(
                    turn,
                    EventKind.FILE_CHANGE,
                    line,
                    tool_name=call.tool_name,
                    call_id=call.call_id,
                    path=path,
                    diff=diff,
                    timestamp=stamp,
                )


def _file_diffs(call: Event, files: TrackedFiles) -> list[tuple[str, str]]:
    """Edit {file_path, old_str, new_str}, Create {file_path, content}, ApplyPatch envelopes."""
    name = (call.tool_name or "").lower()
    args = call.arguments if isinstance(call.arguments, dict) else {}
    if "patch" in name:
        envelope = find_envelope(_strings(call.arguments))
        return [
            (found.move_to or found.path, found.diff)
            for found in (envelope_to_diffs(envelope, files) if envelope else [])
        ]
    path = as_str(args.get("file_path")) or as_str(args.get("path"))
    if not path:
        return []
    if name in ("create", "write"):
        content = args.get("content", args.get("file_text"))
        return [(path, new_file_diff(path, content))] if isinstance(content, str) else []
    old = args.get("old_str", args.get("old_string"))
    if name in ("edit", "multiedit") and isinstance(old, str):
        new = args.get("new_str", args.get("new_string"))
        return [(path, text_diff(path, old, new if isinstance(new, str) else ""))]
    return []


def _strings(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    return ""


def anthropic_usage(raw: Any, *, camel: bool = False) -> Usage | None:
    """Droid's token counts: Anthropic's names in a message or completion, camelCase in
    settings.json; thinking tokens are part of the output."""
    usage = as_dict(raw)
    if not usage:
        return None
    names = (
        ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens")
        if camel
        else (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    )
    counts = [_int(usage.get(name)) for name in names]
    if not any(counts) and not any(name in usage for name in names):
        return None
    return Usage(*counts)


def _put_on_last_call(transcript: Transcript, thread: Thread, usage: Usage, source: str) -> None:
    turns = [t for t in thread.turns if any(_is_model(e) for e in t.events)]
    if not turns:
        return
    turns[-1].usage = usage
    note = (
        f"Droid recorded the session's tokens only as a total ({source}); "
        "they are shown on the last model call."
    )
    if note not in transcript.notes:
        transcript.notes.append(note)


def _is_model(event: Event) -> bool:
    return event.kind in (EventKind.ASSISTANT_TEXT, EventKind.REASONING, EventKind.TOOL_CALL)


def _stamp(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e14:
        return datetime.fromtimestamp(value / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
    return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


# -- stream-json -----------------------------------------------------------------------------


def parse_stream(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=STREAM_FORMAT)
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    stream = _Stream(transcript, _Builder(thread, EventIds(), TrackedFiles()))
    each_jsonl_record(files, transcript.malformed, stream.record)
    if stream.usage is not None and not any(t.usage for t in thread.turns):
        _put_on_last_call(transcript, thread, stream.usage, "completion.usage")
    return finish_transcript(transcript)


@dataclass
class _Stream:
    transcript: Transcript
    b: _Builder
    reasoning_ids: set[str] = field(default_factory=set)
    usage: Usage | None = None

    def record(self, record: dict[str, Any], line: int) -> None:
        kind = record.get("type")
        stamp = _stamp(record.get("timestamp"))
        b, t = self.b, self.transcript
        t.session_id = t.session_id or as_str(record.get("session_id") or record.get("sessionId"))
        if kind == "system":
            t.cwd = t.cwd or as_str(record.get("cwd"))
            t.model = t.model or as_str(record.get("model"))
        elif kind == "message":
            self._message(record, stamp, line)
        elif kind == "reasoning":
            rid, text = as_str(record.get("id")), as_text(record.get("text"))
            if text and not (rid and rid in self.reasoning_ids):
                self.reasoning_ids.add(rid or "")
                turn = b.model_turn(None, stamp)
                turn.model = turn.model or t.model
                b.event(turn, EventKind.REASONING, line, text=text, timestamp=stamp)
        elif kind == "tool_call":
            key = as_str(record.get("messageId"))
            turn = b.model_turn(key, stamp)
            turn.model = turn.model or t.model
            name = record.get("toolName") or record.get("toolId")
            args = record.get("parameters", record.get("input"))
            b.call(turn, record.get("id"), name, args, stamp, line)
        elif kind == "tool_result":
            is_error = record.get("isError") is True or record.get("is_error") is True
            b.result(record.get("id"), as_text(record.get("value")), is_error, stamp, line)
        elif kind == "completion":
            self._completion(record)
        elif kind == "error":
            t.is_error = True
            text = as_text(record.get("message"))
            b.event(b.any_turn(stamp), EventKind.SYSTEM_NOTICE, line, text=text, is_error=True)
        else:
            b.event(
                b.any_turn(stamp),
                EventKind.UNKNOWN,
                line,
                raw_type=str(kind),
                raw=capped_raw(record),
                timestamp=stamp,
            )

    def _message(self, record: dict[str, Any], stamp: str | None, line: int) -> None:
        b = self.b
        text = as_text(record.get("text", record.get("content")))
        if record.get("role") == "user":
            turn = b.new_turn(stamp, model_call=False)
            b.event(turn, EventKind.USER_TEXT, line, text=text, timestamp=stamp)
            return
        key = as_str(record.get("id"))
        turn = b.model_turn(key, stamp)
        if any(e.kind in (EventKind.ASSISTANT_TEXT, EventKind.TOOL_RESULT) for e in turn.events):
            turn = b.new_turn(stamp, model_call=True, key=key)
        turn.model = turn.model or self.transcript.model
        b.event(turn, EventKind.ASSISTANT_TEXT, line, text=text, timestamp=stamp)

    def _completion(self, record: dict[str, Any]) -> None:
        t = self.transcript
        t.final_text = as_str(record.get("finalText")) or t.final_text
        duration = record.get("durationMs")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration >= 0:
            t.duration_s = duration / 1000
        self.usage = anthropic_usage(record.get("usage")) or self.usage


# -- the session store -----------------------------------------------------------------------


def parse_session(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=SESSION_FORMAT)
    settings = {_stem(f.name): f for f in files if f.name.endswith(".settings.json")}
    logs = [f for f in files if not f.name.endswith(".settings.json")]
    if not logs:
        raise TranscriptFormatError(
            f"{files[0].name if files else 'no file'}: a Droid settings file without its session"
        )
    ids, threads = EventIds(), []
    taken = {"main"}
    for number, source in enumerate(logs):
        # The file's name is its session id; two of one name (in two folders) stay apart.
        stem = _stem(source.name) or "session"
        thread = Thread(id=stem if stem not in taken else f"{stem}-{number}", kind="subagent")
        taken.add(thread.id)
        session = _Session(transcript, _Builder(thread, ids, TrackedFiles()), source.name)
        for line, record in iter_jsonl(source, transcript.malformed):
            try:
                session.record(record, line)
            except RECORD_ERRORS as exc:
                record_not_understood(transcript.malformed, source.name, line, exc)
        threads.append((session, thread))
    main_session, main = _main_of(threads)
    main.kind, main.id = "main", "main"
    transcript.threads = [main] + [t for _, t in threads if t is not main]
    transcript.session_id = main_session.session_id
    transcript.cwd = main_session.cwd
    _link_tasks(main, [(s, t) for s, t in threads if t is not main], ids)
    for session, thread in threads:
        _apply_settings(transcript, thread, settings.get(_stem(session.source)), session)
    return finish_transcript(transcript)


@dataclass
class _Session:
    transcript: Transcript
    b: _Builder
    source: str
    session_id: str | None = None
    cwd: str | None = None
    title: str = ""
    first_prompt: str = ""
    usage_seen: bool = False

    def record(self, record: dict[str, Any], line: int) -> None:
        kind = record.get("type")
        stamp = _stamp(record.get("timestamp"))
        if kind == "session_start":
            self.session_id = self.session_id or as_str(record.get("id"))
            self.cwd = self.cwd or as_str(record.get("cwd"))
            self.b.files.cwd = self.b.files.cwd or self.cwd
            self.title = as_str(record.get("sessionTitle")) or as_str(record.get("title")) or ""
        elif kind == "message":
            message = as_dict(record.get("message"))
            if message.get("role") == "assistant":
                self._assistant(message, as_str(record.get("id")), stamp, line)
            else:
                self._user(message, stamp, line)
        elif kind not in _SKIPPED_SESSION:
            self.b.event(
                self.b.any_turn(stamp),
                EventKind.UNKNOWN,
                line,
                raw_type=str(kind),
                raw=capped_raw(record),
                timestamp=stamp,
            )

    def _user(self, message: dict[str, Any], stamp: str | None, line: int) -> None:
        b = self.b
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        turn: Turn | None = None
        for block in blocks:
            block = as_dict(block)
            if block.get("type") == "tool_result":
                is_error = block.get("is_error") is True
                content = block.get("content")
                text, images = as_text(content), images_of(content)
                b.result(block.get("tool_use_id"), text, is_error, stamp, line, images)
                continue
            if block.get("type") == "image":
                turn = turn or b.new_turn(stamp, model_call=False)
                b.event(turn, EventKind.USER_TEXT, line, images=images_of([block]), timestamp=stamp)
                continue
            text = as_text(block.get("text")) if block.get("type") == "text" else ""
            if not text:
                continue
            turn = turn or b.new_turn(stamp, model_call=False)
            reminder, text = _split_reminder(text)
            if reminder:
                b.event(turn, EventKind.SYSTEM_NOTICE, line, text=reminder, timestamp=stamp)
            if text:
                b.event(turn, EventKind.USER_TEXT, line, text=text, timestamp=stamp)
                self.first_prompt = self.first_prompt or text

    def _assistant(
        self, message: dict[str, Any], key: str | None, stamp: str | None, line: int
    ) -> None:
        b = self.b
        turn = b.new_turn(stamp, model_call=True, key=key)
        turn.model = as_str(message.get("model"))
        usage = anthropic_usage(message.get("usage"))
        if usage is not None:
            turn.usage, self.usage_seen = usage, True
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            block = as_dict(block)
            kind = block.get("type")
            if kind == "text" and as_text(block.get("text")):
                b.event(
                    turn,
                    EventKind.ASSISTANT_TEXT,
                    line,
                    text=as_text(block.get("text")),
                    timestamp=stamp,
                )
            elif kind in ("thinking", "redacted_thinking"):
                text = as_text(block.get("thinking")) or "[redacted thinking]"
                b.event(turn, EventKind.REASONING, line, text=text, timestamp=stamp)
            elif kind == "tool_use":
                b.call(turn, block.get("id"), block.get("name"), block.get("input"), stamp, line)
            elif kind is not None:
                b.event(turn, EventKind.UNKNOWN, line, raw_type=str(kind), raw=capped_raw(block))


def _split_reminder(text: str) -> tuple[str, str]:
    """Droid puts its own context (environment, reminders) in <system-reminder> blocks at the
    head of a user's text: (that context, the user's own words)."""
    if not text.lstrip().startswith("<system-reminder>"):
        return "", text
    close = "</system-reminder>"
    if close not in text:
        return text, ""
    end = text.rindex(close) + len(close)
    return text[:end].strip(), text[end:].strip()


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    for suffix in (".settings.json", ".jsonl", ".json"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def _is_task(session: _Session) -> bool:
    return (session.title or session.first_prompt).lstrip().startswith(TASK_PROMPT_HEAD)


def _main_of(threads: list[tuple[_Session, Thread]]) -> tuple[_Session, Thread]:
    for session, thread in threads:
        if not _is_task(session):
            return session, thread
    return threads[0]


def _link_tasks(main: Thread, subagents: list[tuple[_Session, Thread]], ids: EventIds) -> None:
    """Hang each Task session under the main thread's Task call whose prompt it carries."""
    calls = [
        (turn, e)
        for turn in main.turns
        for e in turn.events
        if e.kind == EventKind.TOOL_CALL and (e.tool_name or "").lower() == "task"
    ]
    for session, thread in subagents:
        title = session.title if not _is_task(session) else ""
        thread.title = title or session.first_prompt.strip().split("\n")[-1][:80] or thread.id
        for turn, call in calls:
            prompt = as_str(as_dict(call.arguments).get("prompt"))
            if prompt and prompt.strip() and prompt.strip() in session.first_prompt:
                thread.title = as_str(as_dict(call.arguments).get("description")) or thread.title
                spawn_after(thread, main, turn, call, ids)
                calls.remove((turn, call))
                break


def _apply_settings(
    transcript: Transcript, thread: Thread, settings: SourceFile | None, session: _Session
) -> None:
    """The model and the token total of one session, from its settings.json."""
    if settings is None:
        return
    try:
        document = as_dict(load_json_document(settings))
    except TranscriptFormatError as exc:
        transcript.malformed.append(MalformedLine(settings.name, 1, str(exc)[:300]))
        return
    model = as_str(document.get("model"))
    if thread.kind == "main":
        transcript.model = transcript.model or model
    for turn in thread.turns:
        if turn.model is None and any(_is_model(e) for e in turn.events):
            turn.model = model
    usage = anthropic_usage(document.get("tokenUsage"), camel=True)
    if usage is not None and not session.usage_seen:
        _put_on_last_call(transcript, thread, usage, "settings.json tokenUsage")
