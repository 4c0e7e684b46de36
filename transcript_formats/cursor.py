"""Cursor agent stream-json (`cursor-agent --print --output-format stream-json`).

Events: system/init {model, cwd, session_id}; user and assistant {message: {content}}; thinking
delta/completed (deltas joined into one reasoning event); tool_call started/completed with
`tool_call: {<name>ToolCall: {args, result: {success | error | failure | rejected}}}`; result
{duration_ms, is_error, result}. Model calls are grouped by model_call_id. An edit's result
carries `diffString`, which becomes the file change's diff; a write without one is all-added.
The stream records no token usage.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .diffs import new_file_diff, text_diff, with_header
from .finish import finish_transcript
from .records import (
    EventIds,
    SourceFile,
    as_dict,
    as_str,
    as_text,
    capped_raw,
    each_jsonl_record,
)
from .schema import Event, EventKind, Thread, Transcript, Turn

FORMAT = "cursor-stream-json"


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    state = _State(thread, EventIds())
    each_jsonl_record(
        files, transcript.malformed, lambda record, line: _record(transcript, state, record, line)
    )
    return finish_transcript(transcript)


class _State:
    def __init__(self, thread: Thread, ids: EventIds) -> None:
        self.thread, self.ids = thread, ids
        self.turn: Turn | None = None
        self.call_key: str | None = None
        self.thinking: Event | None = None
        self.calls: dict[str, tuple[Turn, Event]] = {}
        self.model: str | None = None
        self.in_model_call = False

    def new_turn(
        self, stamp: str | None, key: str | None = None, *, model_call: bool = True
    ) -> Turn:
        model = self.model if model_call else None
        self.turn = Turn(index=len(self.thread.turns), timestamp=stamp, model=model)
        self.thread.turns.append(self.turn)
        self.call_key = key
        self.in_model_call = model_call
        self.thinking = None
        return self.turn

    def model_turn(self, key: str | None, stamp: str | None) -> Turn:
        """The turn of model call `key`; thinking streamed before the call's id is seen joins it."""
        turn = self.turn
        if turn is not None and self.in_model_call:
            if key is not None and key == self.call_key:
                return turn
            only_thinking = all(e.kind == EventKind.REASONING for e in turn.events)
            if self.call_key is None and (key is None or only_thinking):
                self.call_key = key
                return turn
        return self.new_turn(stamp, key)

    def event(self, turn: Turn, kind: EventKind, line: int, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, **fields)
        turn.events.append(event)
        return event


def _stamp(record: dict[str, Any]) -> str | None:
    ms = record.get("timestamp_ms")
    if isinstance(ms, (int, float)):
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
    return None


def _record(transcript: Transcript, state: _State, record: dict[str, Any], line: int) -> None:
    kind, subtype = record.get("type"), record.get("subtype")
    stamp = _stamp(record)
    key = record.get("model_call_id") if isinstance(record.get("model_call_id"), str) else None
    message = as_dict(record.get("message"))
    if kind == "system" and subtype == "init":
        transcript.session_id = as_str(record.get("session_id"))
        transcript.cwd = as_str(record.get("cwd"))
        state.model = transcript.model = (
            record.get("model") if isinstance(record.get("model"), str) else None
        )
    elif kind == "user":
        turn = state.new_turn(stamp, model_call=False)
        state.event(
            turn, EventKind.USER_TEXT, line, text=as_text(message.get("content")), timestamp=stamp
        )
    elif kind == "thinking":
        _thinking(state, record, key, stamp, line)
    elif kind == "assistant":
        turn = state.model_turn(key, stamp)
        state.thinking = None
        state.event(
            turn,
            EventKind.ASSISTANT_TEXT,
            line,
            text=as_text(message.get("content")),
            timestamp=stamp,
        )
    elif kind == "tool_call":
        _tool_call(state, record, key, stamp, line)
    elif kind == "result":
        duration = record.get("duration_ms")
        transcript.duration_s = duration / 1000 if isinstance(duration, (int, float)) else None
        transcript.is_error = bool(record.get("is_error")) or str(subtype or "").startswith("error")
        transcript.final_text = (
            record.get("result") if isinstance(record.get("result"), str) else None
        )
        if transcript.is_error:
            turn = state.turn or state.new_turn(stamp)
            state.event(
                turn,
                EventKind.SYSTEM_NOTICE,
                line,
                text=f"Run ended in error: {record.get('result')}",
                is_error=True,
            )
    else:
        turn = state.turn or state.new_turn(stamp)
        state.event(turn, EventKind.UNKNOWN, line, raw_type=str(kind), raw=capped_raw(record))


def _thinking(
    state: _State, record: dict[str, Any], key: str | None, stamp: str | None, line: int
) -> None:
    if record.get("subtype") == "completed":
        state.thinking = None
        return
    text = record.get("text")
    if not isinstance(text, str):
        return
    if state.thinking is None:
        turn = state.model_turn(key, stamp)
        state.thinking = state.event(turn, EventKind.REASONING, line, text="", timestamp=stamp)
    state.thinking.text += text


def _tool_call(
    state: _State, record: dict[str, Any], key: str | None, stamp: str | None, line: int
) -> None:
    call_id = str(record.get("call_id") or "")
    name, body = _tool_body(record.get("tool_call"))
    args = body.get("args") if isinstance(body.get("args"), dict) else body.get("arguments")
    if record.get("subtype") == "started" or call_id not in state.calls:
        turn = state.model_turn(key, stamp)
        event = state.event(
            turn,
            EventKind.TOOL_CALL,
            line,
            tool_name=name,
            call_id=call_id or None,
            arguments=args,
            timestamp=stamp,
        )
        state.calls[call_id] = (turn, event)
    if record.get("subtype") != "completed":
        return
    turn, _ = state.calls[call_id]
    result = as_dict(body.get("result"))
    outcome = next((k for k in ("success", "error", "failure", "rejected") if k in result), None)
    detail = result.get(outcome) if outcome else result
    detail = detail if isinstance(detail, dict) else {"value": detail}
    is_error = outcome in ("error", "failure", "rejected")
    state.event(
        turn,
        EventKind.TOOL_RESULT,
        line,
        tool_name=name,
        call_id=call_id or None,
        text=_result_text(detail),
        is_error=is_error,
        timestamp=stamp,
    )
    if not is_error:
        _file_change(
            state, turn, name, args if isinstance(args, dict) else {}, detail, call_id, stamp, line
        )


def _tool_body(tool_call: Any) -> tuple[str, dict[str, Any]]:
    """The tool's name and {args, result}: `{editToolCall: {...}}` or `{function: {name, ...}}`."""
    if not isinstance(tool_call, dict):
        return "?", {}
    for key, value in tool_call.items():
        if key.endswith("ToolCall") and isinstance(value, dict):
            return key[: -len("ToolCall")], value
    function = tool_call.get("function")
    if isinstance(function, dict):
        return str(function.get("name") or "function"), function
    return "?", tool_call


def _result_text(detail: dict[str, Any]) -> str:
    for key in ("content", "stdout", "output", "message", "error", "errorMessage", "reason"):
        value = detail.get(key)
        if isinstance(value, str) and value:
            stderr = detail.get("stderr")
            return value + (f"\n{stderr}" if isinstance(stderr, str) and stderr else "")
    return as_text(detail)


def _file_change(
    state: _State,
    turn: Turn,
    name: str,
    args: dict[str, Any],
    detail: dict[str, Any],
    call_id: str,
    stamp: str | None,
    line: int,
) -> None:
    path = detail.get("path") or args.get("path") or args.get("filePath")
    if not isinstance(path, str) or not path:
        return
    diff_string = detail.get("diffString")
    before, after = detail.get("beforeFullFileContent"), detail.get("afterFullFileContent")
    if isinstance(diff_string, str) and diff_string.strip():
        diff = with_header(path, diff_string)
    elif isinstance(before, str) and isinstance(after, str):
        diff = text_diff(path, before, after)
    elif name in ("write", "edit") and isinstance(args.get("fileText") or after, str):
        diff = new_file_diff(path, str(args.get("fileText") or after))
    else:
        return
    state.event(
        turn,
        EventKind.FILE_CHANGE,
        line,
        tool_name=name,
        call_id=call_id or None,
        path=path,
        diff=diff,
        timestamp=stamp,
    )
