"""`codex exec --json`: the event stream of a non-interactive Codex run.

Events: thread.started {thread_id}; turn.started; item.started / item.updated / item.completed
{item: {id, type, ...}} with item types agent_message, reasoning, command_execution,
file_change, mcp_tool_call, web_search, todo_list and error; turn.completed {usage:
{input_tokens, cached_input_tokens, output_tokens}}; turn.failed {error}; error {message}.
A Codex turn here spans several model calls, so usage is per turn as the stream reports it.
File changes name the paths and kinds but carry no diff.
"""

from __future__ import annotations

from typing import Any

from .codex import codex_usage
from .finish import finish_transcript
from .records import (
    EventIds,
    SourceFile,
    as_dict,
    as_text,
    capped_raw,
    each_jsonl_record,
)
from .schema import Event, EventKind, Thread, Transcript, Turn

FORMAT = "codex-exec-json"


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    state = _State(thread, EventIds())
    each_jsonl_record(
        files, transcript.malformed, lambda record, line: _record(transcript, state, record, line)
    )
    for item, line in state.pending.values():  # started but never completed (an aborted run)
        _item(state, item, line)
    return finish_transcript(transcript)


class _State:
    def __init__(self, thread: Thread, ids: EventIds) -> None:
        self.thread, self.ids = thread, ids
        self.turn: Turn | None = None
        self.pending: dict[str, tuple[dict[str, Any], int]] = {}

    def current(self) -> Turn:
        if self.turn is None:
            self.turn = Turn(index=len(self.thread.turns))
            self.thread.turns.append(self.turn)
        return self.turn

    def event(self, kind: EventKind, line: int, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, **fields)
        self.current().events.append(event)
        return event


def _record(transcript: Transcript, state: _State, record: dict[str, Any], line: int) -> None:
    kind = record.get("type")
    if kind == "thread.started":
        transcript.session_id = str(record.get("thread_id") or "") or None
    elif kind == "turn.started":
        state.turn = None
        state.current()
    elif kind == "turn.completed":
        usage = record.get("usage")
        state.current().usage = codex_usage(usage) if isinstance(usage, dict) else None
        state.turn = None
    elif kind in ("turn.failed", "error"):
        error = as_dict(record.get("error")) or record
        state.event(
            EventKind.SYSTEM_NOTICE, line, text=str(error.get("message") or kind), is_error=True
        )
        transcript.is_error = transcript.is_error or kind == "turn.failed"
    elif kind in ("item.started", "item.updated", "item.completed"):
        item = record.get("item")
        if isinstance(item, dict):
            item_id = str(item.get("id") or "")
            if kind == "item.completed":
                state.pending.pop(item_id, None)
                _item(state, item, line)
            else:
                state.pending[item_id] = (item, line)
    else:
        state.event(EventKind.UNKNOWN, line, raw_type=str(kind), raw=capped_raw(record))


def _item(state: _State, item: dict[str, Any], line: int) -> None:
    kind = item.get("type") or item.get("item_type")
    item_id = str(item.get("id") or "") or None
    if kind in ("agent_message", "assistant_message"):
        state.event(EventKind.ASSISTANT_TEXT, line, text=str(item.get("text") or ""))
    elif kind == "reasoning":
        state.event(EventKind.REASONING, line, text=str(item.get("text") or ""))
    elif kind == "command_execution":
        state.event(
            EventKind.TOOL_CALL,
            line,
            tool_name="shell",
            call_id=item_id,
            arguments={"command": item.get("command")},
        )
        code = item.get("exit_code")
        state.event(
            EventKind.TOOL_RESULT,
            line,
            tool_name="shell",
            call_id=item_id,
            text=str(item.get("aggregated_output") or ""),
            is_error=(isinstance(code, int) and code != 0) or item.get("status") == "failed",
        )
    elif kind == "file_change":
        for change in item.get("changes") or []:
            if isinstance(change, dict):
                state.event(
                    EventKind.FILE_CHANGE,
                    line,
                    tool_name="apply_patch",
                    call_id=item_id,
                    path=str(change.get("path") or ""),
                    text=str(change.get("kind") or ""),
                    is_error=item.get("status") == "failed",
                )
    elif kind == "mcp_tool_call":
        name = f"{item.get('server')}.{item.get('tool')}"
        state.event(
            EventKind.TOOL_CALL,
            line,
            tool_name=name,
            call_id=item_id,
            arguments=item.get("arguments"),
        )
        error = item.get("error")
        result = item.get("result")
        text = as_text(result.get("content") if isinstance(result, dict) else result)
        if isinstance(error, dict):
            text = str(error.get("message") or text)
        state.event(
            EventKind.TOOL_RESULT,
            line,
            tool_name=name,
            call_id=item_id,
            text=text,
            is_error=bool(error) or item.get("status") == "failed",
        )
    elif kind == "web_search":
        state.event(
            EventKind.TOOL_CALL,
            line,
            tool_name="web_search",
            call_id=item_id,
            arguments={"query": item.get("query")},
        )
    elif kind == "todo_list":
        items = item.get("items") or []
        text = "\n".join(
            f"[{'x' if i.get('completed') else ' '}] {i.get('text')}"
            for i in items
            if isinstance(i, dict)
        )
        state.event(EventKind.SYSTEM_NOTICE, line, text=text, tool_name="todo_list")
    elif kind == "error":
        state.event(
            EventKind.SYSTEM_NOTICE, line, text=str(item.get("message") or ""), is_error=True
        )
    else:
        state.event(EventKind.UNKNOWN, line, raw_type=f"item:{kind}", raw=capped_raw(item))
