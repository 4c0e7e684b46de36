"""Gemini CLI session files (~/.gemini/tmp/<project-hash>/chats/session-*.json).

One JSON document: {sessionId, projectHash, startTime, lastUpdated, messages: [...]}. A message
is {id, timestamp, type: user | gemini | info | error | warning, content, thoughts, toolCalls,
tokens, model}. Gemini's `input` token count includes the cached part (`cached`), which we
subtract; thinking tokens (`thoughts`) are billed as output and added to it. An edit tool's
`resultDisplay` carries {fileDiff, fileName}, which becomes the file change.
"""

from __future__ import annotations

from typing import Any

from .diffs import with_header
from .errors import TranscriptFormatError
from .finish import finish_transcript
from .records import (
    RECORD_ERRORS,
    EventIds,
    SourceFile,
    as_text,
    capped_raw,
    images_of,
    load_json_document,
    record_not_understood,
)
from .schema import Event, EventKind, Thread, Transcript, Turn, Usage

FORMAT = "gemini-cli-session"


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    ids = EventIds()
    for source in files:
        document = load_json_document(source)
        if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
            raise TranscriptFormatError(
                f"{source.name}: no 'messages' list in a Gemini CLI session"
            )
        transcript.session_id = transcript.session_id or _str(document.get("sessionId"))
        transcript.started_at = transcript.started_at or _str(document.get("startTime"))
        transcript.ended_at = _str(document.get("lastUpdated")) or transcript.ended_at
        for number, message in enumerate(document["messages"], start=1):
            if not isinstance(message, dict):
                continue
            try:
                _message(thread, ids, message, number)
            except RECORD_ERRORS as exc:
                record_not_understood(transcript.malformed, source.name, number, exc)
    return finish_transcript(transcript)


def _event(turn: Turn, ids: EventIds, kind: EventKind, **fields: Any) -> Event:
    event = Event(id=ids.next(), kind=kind, **fields)
    turn.events.append(event)
    return event


def _message(thread: Thread, ids: EventIds, message: dict[str, Any], number: int) -> None:
    kind = message.get("type")
    stamp = message.get("timestamp") if isinstance(message.get("timestamp"), str) else None
    model = message.get("model") if isinstance(message.get("model"), str) else None
    turn = Turn(index=len(thread.turns), timestamp=stamp, model=model)
    thread.turns.append(turn)
    text = as_text(message.get("content"))
    # `line` holds the message's position in the messages list: a JSON document has no lines.
    where = {"timestamp": stamp, "line": number}
    if kind == "user":
        content = message.get("content")
        images = images_of(content)  # pasted images: parts with inlineData, shown as images
        if images and isinstance(content, list):
            text = as_text([part for part in content if not _inline(part)])
        _event(turn, ids, EventKind.USER_TEXT, text=text, images=images, **where)
    elif kind == "gemini":
        for thought in message.get("thoughts") or []:
            if isinstance(thought, dict):
                heading = thought.get("subject")
                body = str(thought.get("description") or "")
                _event(
                    turn,
                    ids,
                    EventKind.REASONING,
                    text=f"{heading}\n{body}" if heading else body,
                    **where,
                )
        if text:
            _event(turn, ids, EventKind.ASSISTANT_TEXT, text=text, **where)
        for call in message.get("toolCalls") or []:
            if isinstance(call, dict):
                _tool_call(turn, ids, call, where)
        turn.usage = _usage(message.get("tokens"))
    elif kind in ("info", "error", "warning"):
        _event(turn, ids, EventKind.SYSTEM_NOTICE, text=text, is_error=kind == "error", **where)
    else:
        _event(turn, ids, EventKind.UNKNOWN, raw_type=str(kind), raw=capped_raw(message), **where)


def _inline(part: Any) -> bool:
    return isinstance(part, dict) and bool(part.get("inlineData") or part.get("inline_data"))


def _tool_call(turn: Turn, ids: EventIds, call: dict[str, Any], where: dict[str, Any]) -> None:
    call_id = str(call.get("id") or "") or None
    name = str(call.get("name") or "?")
    _event(
        turn,
        ids,
        EventKind.TOOL_CALL,
        tool_name=name,
        call_id=call_id,
        arguments=call.get("args"),
        **where,
    )
    is_error = call.get("status") in ("error", "cancelled")
    display = call.get("resultDisplay")
    _event(
        turn,
        ids,
        EventKind.TOOL_RESULT,
        tool_name=name,
        call_id=call_id,
        text=_result_text(call.get("result"), display),
        is_error=is_error,
        **where,
    )
    if isinstance(display, dict) and isinstance(display.get("fileDiff"), str) and not is_error:
        path = str(display.get("filePath") or display.get("fileName") or "")
        diff = _strip_index(display["fileDiff"])
        _event(
            turn,
            ids,
            EventKind.FILE_CHANGE,
            tool_name=name,
            call_id=call_id,
            path=path,
            diff=with_header(path, diff) if not diff.startswith("--- ") else diff,
            **where,
        )


def _strip_index(diff: str) -> str:
    # Gemini writes "Index: name\n====...\n" before the --- / +++ lines.
    lines = diff.split("\n")
    while lines and (lines[0].startswith("Index:") or lines[0].startswith("====")):
        lines.pop(0)
    return "\n".join(lines)


def _result_text(result: Any, display: Any) -> str:
    if isinstance(display, str) and display:
        return display
    parts = result if isinstance(result, list) else [result]
    texts = []
    for part in parts:
        response = (
            part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        )
        if isinstance(response, dict):
            texts.append(as_text(response.get("output", response.get("error", response))))
        elif part is not None:
            texts.append(as_text(part))
    return "\n".join(texts)


def _usage(tokens: Any) -> Usage | None:
    if not isinstance(tokens, dict):
        return None
    cached = _int(tokens.get("cached"))
    return Usage(
        input_tokens=max(0, _int(tokens.get("input")) - cached),
        cache_read_tokens=cached,
        output_tokens=_int(tokens.get("output")) + _int(tokens.get("thoughts")),
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0
