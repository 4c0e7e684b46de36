"""What every parse passes through before the key-field check: a log of a known format that a
newer version of its CLI wrote is read with what is known, not refused.

Records a reader did not know are `unknown` events holding the record. Where such a record is
plainly a tool call or a tool result (a CLI that moved its calls to records of their own:
`tool_use` / `tool_result`, `function_call` / `function_result`, ...), it is read as one; the
page names every other unknown record type once, with how many records had it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .records import as_text, json_arguments
from .schema import Event, EventKind, Transcript

CALL_TYPES = frozenset({"tool_use", "function_call", "tool_call", "toolCall", "tool.call"})
RESULT_TYPES = frozenset(
    {
        "tool_result",
        "function_result",
        "function_call_output",
        "function_response",
        "tool_call_result",
        "toolResult",
        "tool.result",
    }
)
_WRAPPERS = ("payload", "data", "item", "event")
_NAME_KEYS = ("name", "tool_name", "toolName")
_CALL_ID_KEYS = ("id", "call_id", "tool_use_id", "callId", "toolCallId", "tool_call_id")
_RESULT_ID_KEYS = ("tool_use_id", "call_id", "callId", "toolCallId", "tool_call_id", "id")
_ARGUMENT_KEYS = ("input", "arguments", "args", "parameters")
_OUTPUT_KEYS = ("content", "output", "result", "response")


def read_tolerantly(transcript: Transcript) -> None:
    """Unknown records shaped as tool calls and results become them (the others stay, and the
    page names each of their types once, with its count: unknown_type_counts)."""
    names: dict[str, str] = {}
    for thread in transcript.all_threads():
        for turn in thread.turns:
            for index, event in enumerate(turn.events):
                if event.kind == EventKind.TOOL_CALL and event.call_id and event.tool_name:
                    names[event.call_id] = event.tool_name
                elif event.kind == EventKind.UNKNOWN:
                    recovered = _recovered(event, names)
                    if recovered is not None:
                        turn.events[index] = recovered


def _recovered(event: Event, names: dict[str, str]) -> Event | None:
    record = _tool_record(event.raw)
    if record is None:
        return None
    kind = record.get("type")
    if kind in CALL_TYPES:
        name = _first_str(record, _NAME_KEYS) or _first_str(
            _dict(record.get("function")), ("name",)
        )
        if not name:
            return None
        call_id = _first_str(record, _CALL_ID_KEYS)
        if call_id:
            names[call_id] = name
        return _replacing(
            event,
            kind=EventKind.TOOL_CALL,
            tool_name=name,
            call_id=call_id,
            arguments=_arguments(record),
        )
    call_id = _first_str(record, _RESULT_ID_KEYS)
    output = next((record[k] for k in _OUTPUT_KEYS if k in record), "")
    return _replacing(
        event,
        kind=EventKind.TOOL_RESULT,
        call_id=call_id,
        tool_name=names.get(call_id or "") or _first_str(record, _NAME_KEYS),
        text=as_text(output),
        is_error=bool(record.get("is_error") or record.get("isError")),
    )


def _tool_record(raw: Any) -> dict[str, Any] | None:
    """The record, or the one it wraps, when its type is a tool call's or a tool result's."""
    if not isinstance(raw, dict):
        return None
    for candidate in (raw, *(raw.get(key) for key in _WRAPPERS)):
        kind = candidate.get("type") if isinstance(candidate, dict) else None
        if isinstance(kind, str) and (kind in CALL_TYPES or kind in RESULT_TYPES):
            return candidate
    return None


def _replacing(event: Event, **fields: Any) -> Event:
    return Event(id=event.id, timestamp=event.timestamp, line=event.line, **fields)


def _arguments(record: dict[str, Any]) -> Any:
    raw = next((record[k] for k in _ARGUMENT_KEYS if k in record), None)
    if raw is None:
        raw = _dict(record.get("function")).get("arguments")
    return json_arguments(raw)


def _first_str(record: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def unknown_type_counts(transcript: Transcript) -> list[tuple[str, int]]:
    """Each record type the reader did not know, with how many records had it, most first: the
    page names each once."""
    counts = Counter(
        (event.raw_type or "?")[:80]
        for event in transcript.events()
        if event.kind == EventKind.UNKNOWN
    )
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
