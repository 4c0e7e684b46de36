"""Grok CLI sessions (xAI's `grok`, `~/.grok/sessions/<url-encoded cwd>/<session id>/`).

A session folder holds `updates.jsonl`, every Agent Client Protocol update the terminal was
sent, timed (`{timestamp, method: "session/update" | "_x.ai/session/update", params:
{sessionId, update: {sessionUpdate, ...}}}`); `chat_history.jsonl`, the model's history
without times or tokens; and `summary.json` (`info: {id, cwd}`, `current_model_id`,
`head_branch`, `created_at`). When a folder has updates they are read; chat_history.jsonl is
read only when it is all there is.

Updates: `user_message_chunk`, `agent_thought_chunk` and `agent_message_chunk` (text streamed
in pieces, joined), `tool_call` (`toolCallId`, `rawInput`, the tool's name in
`_meta["x.ai/tool"].name`), `tool_call_update` (status, `content` text or `diff` blocks,
`rawOutput`; later updates of one call replace its output), `plan`, and `turn_completed` with
the prompt's `usage` over all its model calls.

chat_history.jsonl: `{type: system | user | reasoning | assistant | tool_result}`; a user
prompt is wrapped in `<user_query>`, `synthetic_reason` marks text the CLI injected, an
assistant line carries `tool_calls: [{id, name, arguments}]` and `model_id`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .diffs import new_file_diff, text_diff
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

FORMAT = "grok-cli"
UPDATE_METHODS = frozenset({"session/update", "_x.ai/session/update"})
CHAT_TYPES = frozenset({"system", "user", "reasoning", "assistant", "tool_result"})
# What the terminal shows beside the conversation: commands, modes, recaps, hooks, tasks.
_SILENT_UPDATES = frozenset(
    {
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "session_recap",
        "hook_execution",
        "task_backgrounded",
        "task_completed",
    }
)
_QUERY_OPEN, _QUERY_CLOSE = "<user_query>", "</user_query>"


@dataclass
class _Folder:
    name: str
    updates: SourceFile | None = None
    chats: list[SourceFile] = field(default_factory=list)
    summary: SourceFile | None = None


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    folders = _folders(files)
    folder = next((f for f in folders if f.updates or f.chats), folders[0])
    for other in folders:
        if other is not folder and (other.updates or other.chats):
            transcript.notes.append(f"{other.name or 'a file'}: another session, not shown.")
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    if folder.summary is not None:
        _describe(transcript, folder.summary)
    builder = _Builder(thread, EventIds(), transcript)
    if folder.updates is not None and builder.read_updates(folder.updates):
        return finish_transcript(transcript)
    for chat in folder.chats[:1]:
        builder.read_chat(chat)
        if transcript.events():
            transcript.notes.append(
                "Read from chat_history.jsonl, which records no times and no tokens."
            )
    return finish_transcript(transcript)


def _folders(files: list[SourceFile]) -> list[_Folder]:
    found: dict[str, _Folder] = {}
    for source in sorted(files, key=lambda f: f.name):
        name = source.name.rpartition("/")[0]
        folder = found.setdefault(name, _Folder(name))
        kind = _file_kind(source)
        if kind == "summary" and folder.summary is None:
            folder.summary = source
        elif kind == "updates" and folder.updates is None:
            folder.updates = source
        elif kind == "chat":
            folder.chats.append(source)
    return list(found.values())


def _file_kind(source: SourceFile) -> str | None:
    if source.name.endswith(".json") and isinstance(_summary(source).get("info"), dict):
        return "summary"
    for _, record in iter_jsonl(source, []):
        return "updates" if as_str(record.get("method")) in UPDATE_METHODS else "chat"
    return None


def _summary(source: SourceFile) -> dict[str, Any]:
    try:
        return as_dict(json.loads(source.data))
    except JSON_ERRORS:
        return {}


def _describe(transcript: Transcript, source: SourceFile) -> None:
    summary = _summary(source)
    info = as_dict(summary.get("info"))
    transcript.session_id = as_str(info.get("id"))
    transcript.cwd = as_str(info.get("cwd"))
    transcript.git_branch = as_str(summary.get("head_branch"))
    transcript.model = as_str(summary.get("current_model_id"))
    transcript.started_at = as_str(summary.get("created_at"))
    title = as_str(summary.get("generated_title")) or as_str(summary.get("custom_title"))
    if title:
        transcript.notes.append(f"Session title: {title[:200]}")


class _Builder:
    def __init__(self, thread: Thread, ids: EventIds, transcript: Transcript) -> None:
        self.thread, self.ids, self.transcript = thread, ids, transcript
        self.turn: Turn | None = None
        self.agent: Turn | None = None  # the agent's answer to the current prompt
        self.last: Event | None = None  # the event the previous chunk wrote to
        self.calls: dict[str, tuple[Turn, Event]] = {}
        self.results: dict[str, Event] = {}
        self.changes: dict[tuple[str, str], Event] = {}

    def new_turn(self, stamp: str | None, model: str | None = None) -> Turn:
        self.turn = Turn(index=len(self.thread.turns), timestamp=stamp, model=model)
        self.thread.turns.append(self.turn)
        return self.turn

    def agent_turn(self, stamp: str | None) -> Turn:
        if self.agent is None:
            self.agent = self.new_turn(stamp, self.transcript.model)
        return self.agent

    def event(self, turn: Turn, kind: EventKind, line: int | None, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, **fields)
        turn.events.append(event)
        self.last = None
        return event

    # -- updates.jsonl -------------------------------------------------------------------

    def read_updates(self, source: SourceFile) -> bool:
        seen = False
        for line, record in iter_jsonl(source, self.transcript.malformed):
            params = as_dict(record.get("params"))
            if as_str(record.get("method")) not in UPDATE_METHODS:
                continue
            seen = True
            self.transcript.session_id = self.transcript.session_id or as_str(
                params.get("sessionId")
            )
            try:
                self.update(
                    as_dict(params.get("update")), iso_from_epoch(record.get("timestamp")), line
                )
            except RECORD_ERRORS as exc:
                record_not_understood(self.transcript.malformed, source.name, line, exc)
        return seen

    def update(self, update: dict[str, Any], stamp: str | None, line: int) -> None:
        kind = as_str(update.get("sessionUpdate"))
        content = update.get("content")
        if kind == "user_message_chunk":
            self.user_chunk(content, stamp, line)
        elif kind == "agent_thought_chunk":
            self.chunk(EventKind.REASONING, _chunk_text(content), stamp, line)
        elif kind == "agent_message_chunk":
            self.chunk(EventKind.ASSISTANT_TEXT, _chunk_text(content), stamp, line)
        elif kind == "tool_call":
            self.tool_call(update, stamp, line)
        elif kind == "tool_call_update":
            self.tool_call_update(update, stamp, line)
        elif kind == "turn_completed":
            self.turn_completed(update, stamp, line)
        elif kind == "plan":
            entries = update.get("entries")
            steps = [as_dict(e) for e in entries] if isinstance(entries, list) else []
            text = "\n".join(f"[{s.get('status')}] {as_text(s.get('content'))}" for s in steps)
            self.event(self.agent_turn(stamp), EventKind.SYSTEM_NOTICE, line, text="Plan:\n" + text)
        elif kind not in _SILENT_UPDATES:
            turn = self.turn or self.new_turn(stamp)
            raw_type = f"update:{kind}"
            self.event(turn, EventKind.UNKNOWN, line, raw_type=raw_type, raw=capped_raw(update))

    def user_chunk(self, content: Any, stamp: str | None, line: int) -> None:
        text = _chunk_text(content)
        images = images_of([_acp_image(content)])
        if self.last is not None and self.last.kind == EventKind.USER_TEXT:
            self.last.text += text
            self.last.images += images
            return
        self.agent = None
        event = self.event(
            self.new_turn(stamp),
            EventKind.USER_TEXT,
            line,
            text=text,
            images=images,
            timestamp=stamp,
        )
        self.last = event

    def chunk(self, kind: EventKind, text: str, stamp: str | None, line: int) -> None:
        if self.last is not None and self.last.kind == kind:
            self.last.text += text
        elif text:
            event = self.event(self.agent_turn(stamp), kind, line, text=text, timestamp=stamp)
            self.last = event

    def tool_call(self, update: dict[str, Any], stamp: str | None, line: int) -> None:
        call_id = as_str(update.get("toolCallId")) or ""
        known = self.calls.get(call_id)
        if known is not None:  # the call sent again with more detail
            if update.get("rawInput") is not None:
                known[1].arguments = update.get("rawInput")
            return
        turn = self.agent_turn(stamp)
        event = self.event(
            turn,
            EventKind.TOOL_CALL,
            line,
            tool_name=_tool_name(update),
            call_id=call_id or None,
            arguments=update.get("rawInput"),
            timestamp=stamp,
        )
        if call_id:
            self.calls[call_id] = (turn, event)
        if update.get("status") or update.get("content") or update.get("rawOutput"):
            self.tool_call_update(update, stamp, line)

    def tool_call_update(self, update: dict[str, Any], stamp: str | None, line: int) -> None:
        call_id = as_str(update.get("toolCallId")) or ""
        turn, call = self.calls.get(call_id, (None, None))
        if call is not None and call.arguments is None and update.get("rawInput") is not None:
            call.arguments = update.get("rawInput")
        status = update.get("status")
        text = _result_text(update)
        result = self.results.get(call_id)
        if result is None:
            if not text and status not in ("completed", "failed", "error"):
                return  # a status change with no output yet
            result = self.event(
                turn or self.agent_turn(stamp),
                EventKind.TOOL_RESULT,
                line,
                tool_name=call.tool_name if call else None,
                call_id=call_id or None,
                timestamp=stamp,
            )
            if call_id:
                self.results[call_id] = result
        # Long commands send growing snapshots of their output: the last one is the output.
        result.text = text or result.text
        result.is_error = status in ("failed", "error") or result.is_error
        for block in _list(update.get("content")):
            self.diff_block(
                turn or self.agent_turn(stamp), as_dict(block), call, call_id, stamp, line
            )

    def diff_block(
        self,
        turn: Turn,
        block: dict[str, Any],
        call: Event | None,
        call_id: str,
        stamp: str | None,
        line: int,
    ) -> None:
        path = as_str(block.get("path"))
        new = block.get("newText")
        if block.get("type") != "diff" or not path or not isinstance(new, str):
            return
        old = block.get("oldText")
        diff = text_diff(path, old, new) if isinstance(old, str) else new_file_diff(path, new)
        change = self.changes.get((call_id, path))
        if change is not None:
            change.diff = diff
            return
        self.changes[(call_id, path)] = self.event(
            turn,
            EventKind.FILE_CHANGE,
            line,
            tool_name=call.tool_name if call else None,
            call_id=call_id or None,
            path=path,
            diff=diff,
            timestamp=stamp,
        )

    def turn_completed(self, update: dict[str, Any], stamp: str | None, line: int) -> None:
        raw = as_dict(update.get("usage"))
        turn = self.agent_turn(stamp)
        models = as_dict(raw.get("modelUsage"))
        if len(models) == 1:
            turn.model = next(iter(models))
        elif models:
            self.transcript.notes.append(
                "A prompt used several models ("
                + ", ".join(sorted(map(str, models)))[:300]
                + "); its tokens are shown on the first."
            )
            turn.model = str(next(iter(models)))
        if raw:
            usage = _usage(raw)
            if turn.usage is None:
                turn.usage = usage
            else:
                turn.usage.add(usage)
        reason = as_str(update.get("stop_reason"))
        if reason and reason not in ("end_turn", "stop"):
            self.event(turn, EventKind.SYSTEM_NOTICE, line, text=f"Turn ended: {reason}")
        self.agent = None

    # -- chat_history.jsonl --------------------------------------------------------------

    def read_chat(self, source: SourceFile) -> None:
        for line, record in iter_jsonl(source, self.transcript.malformed):
            try:
                self.chat_record(record, line)
            except RECORD_ERRORS as exc:
                record_not_understood(self.transcript.malformed, source.name, line, exc)

    def chat_record(self, record: dict[str, Any], line: int) -> None:
        kind = record.get("type")
        content = record.get("content")
        if kind == "system":
            self.event(
                self.turn or self.new_turn(None),
                EventKind.SYSTEM_NOTICE,
                line,
                text=as_text(content),
            )
        elif kind == "user":
            self.chat_user(record, line)
        elif kind == "reasoning":
            text = as_text(record.get("summary")) or as_text(content)
            if not text and record.get("encrypted_content"):
                text = "[encrypted reasoning]"
            self.event(self.model_call(record), EventKind.REASONING, line, text=text)
        elif kind == "assistant":
            self.chat_assistant(record, line)
        elif kind == "tool_result":
            call_id = as_str(record.get("tool_call_id")) or ""
            turn, call = self.calls.get(call_id, (None, None))
            self.event(
                turn or self.turn or self.new_turn(None),
                EventKind.TOOL_RESULT,
                line,
                text=as_text(content),
                tool_name=call.tool_name if call else None,
                call_id=call_id or None,
                images=images_of(content),
            )
            self.agent = None  # the model reads the result in its next call
        else:
            turn = self.turn or self.new_turn(None)
            self.event(turn, EventKind.UNKNOWN, line, raw_type=str(kind), raw=capped_raw(record))

    def model_call(self, record: dict[str, Any]) -> Turn:
        if self.agent is None:
            self.agent = self.new_turn(
                None, as_str(record.get("model_id")) or self.transcript.model
            )
        return self.agent

    def chat_user(self, record: dict[str, Any], line: int) -> None:
        content = record.get("content")
        text = as_text(content)
        query = _user_query(text)
        injected = record.get("synthetic_reason") == "system_reminder"
        if injected or (query is None and text.lstrip().startswith("<")):
            self.event(self.turn or self.new_turn(None), EventKind.SYSTEM_NOTICE, line, text=text)
            return
        self.agent = None
        turn = self.new_turn(None)
        prompt, context = query or (text, "")
        if context:  # what the CLI sent along with the prompt (<user_info>, rules)
            self.event(turn, EventKind.SYSTEM_NOTICE, line, text=context)
        self.event(turn, EventKind.USER_TEXT, line, text=prompt, images=images_of(content))

    def chat_assistant(self, record: dict[str, Any], line: int) -> None:
        turn = self.model_call(record)
        turn.model = as_str(record.get("model_id")) or turn.model
        reasoning = as_dict(record.get("reasoning"))
        if as_str(reasoning.get("text")):
            self.event(turn, EventKind.REASONING, line, text=reasoning["text"])
        text = as_text(record.get("content"))
        if text:
            self.event(turn, EventKind.ASSISTANT_TEXT, line, text=text)
        for call in _list(record.get("tool_calls")):
            call = as_dict(call)
            function = as_dict(call.get("function"))
            call_id = as_str(call.get("id")) or ""
            event = self.event(
                turn,
                EventKind.TOOL_CALL,
                line,
                tool_name=as_str(call.get("name") or function.get("name")) or "?",
                call_id=call_id or None,
                arguments=_json_or_text(call.get("arguments", function.get("arguments"))),
            )
            if call_id:
                self.calls[call_id] = (turn, event)


def _user_query(text: str) -> tuple[str, str] | None:
    """(the prompt inside <user_query>, the rest of the text), or None without one. Found with
    str.find, not a regex: a line of many opening tags costs one pass, not one per tag."""
    start = text.find(_QUERY_OPEN)
    end = text.find(_QUERY_CLOSE, start + len(_QUERY_OPEN)) if start != -1 else -1
    if end == -1:
        return None
    rest = text[:start] + text[end + len(_QUERY_CLOSE) :]
    return text[start + len(_QUERY_OPEN) : end].strip(), rest.strip()


def _tool_name(update: dict[str, Any]) -> str:
    tool = as_dict(as_dict(update.get("_meta")).get("x.ai/tool"))
    return (
        as_str(tool.get("name")) or as_str(update.get("title")) or as_str(update.get("kind")) or "?"
    )


def _acp_image(block: Any) -> Any:
    """An ACP image block {type: image, data, mimeType} in the shape images_of reads."""
    block = as_dict(block)
    if block.get("type") != "image" or "source" in block:
        return block
    source = {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")}
    return {"type": "image", "source": source}


def _chunk_text(content: Any) -> str:
    if isinstance(content, dict):
        return as_str(content.get("text")) or ""
    return content if isinstance(content, str) else ""


def _result_text(update: dict[str, Any]) -> str:
    """A tool update's output: its text content blocks, else the tool's raw output."""
    texts = []
    for block in _list(update.get("content")):
        inner = as_dict(as_dict(block).get("content"))
        if isinstance(inner.get("text"), str):
            texts.append(inner["text"])
    if texts:
        return "\n".join(texts)
    raw = update.get("rawOutput")
    if isinstance(raw, str):
        return raw
    output = as_dict(raw)
    for_prompt = as_str(output.get("output_for_prompt"))
    if for_prompt is not None:
        return for_prompt
    value = output.get("output")
    if (
        isinstance(value, list)
        and value
        and all(isinstance(b, int) and 0 <= b < 256 for b in value)
    ):
        return bytes(value).decode("utf-8", "replace")  # a shell's output as its bytes
    return as_text(value) if value is not None else ""


def _usage(raw: dict[str, Any]) -> Usage:
    """A prompt's usage. inputTokens include the cached part, which is taken off; reasoning
    tokens are billed as output and added to it, unless totalTokens shows they already are."""
    prompt, output = _int(raw.get("inputTokens")), _int(raw.get("outputTokens"))
    cached, reasoning = _int(raw.get("cachedReadTokens")), _int(raw.get("reasoningTokens"))
    if raw.get("totalTokens") == prompt + output:
        reasoning = 0
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=output + reasoning,
        cache_read_tokens=cached,
    )


def _json_or_text(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except JSON_ERRORS:  # a string nested past the parser's depth is kept as the text it is
        return raw


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
