"""Plain message lists: OpenAI chat messages and Anthropic Messages, as a JSON array, as
{"messages": [...]} (with an optional "system" and "model"), or one message per JSON line.

OpenAI: {role: system | developer | user | assistant | tool, content, tool_calls: [{id,
function: {name, arguments}}], tool_call_id}. Anthropic: {role: user | assistant, content:
string or blocks (text, thinking, tool_use, tool_result)}. Each assistant message is a turn;
a message's own `usage`, when present, is counted.
"""

from __future__ import annotations

from typing import Any

from .anthropic_messages import Shared, ThreadBuilder, usage_from
from .errors import TranscriptFormatError
from .finish import finish_transcript
from .json_document import LazyList, load_document
from .records import (
    RECORD_ERRORS,
    SourceFile,
    as_text,
    first_byte,
    iter_jsonl,
    json_arguments,
    load_json_document,
    record_not_understood,
)
from .schema import EventKind, MalformedLine, Thread, Transcript, Usage
from .sniffers import chat_flavour


def parse(files: list[SourceFile]) -> Transcript:
    source = files[0]
    transcript = Transcript(format="openai-chat-messages")
    messages, system, model = _messages(source, transcript)
    transcript.format = chat_flavour(messages) or transcript.format
    transcript.model = model
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    builder = ThreadBuilder(thread, Shared())
    if system:
        builder.event(builder.new_turn(), EventKind.SYSTEM_NOTICE, None, text=system)
    for number, message in enumerate(messages, start=1):
        try:
            _message(builder, message, number, model)
        except RECORD_ERRORS as exc:
            record_not_understood(transcript.malformed, source.name, number, exc)
    return finish_transcript(transcript)


def _messages(
    source: SourceFile, transcript: Transcript
) -> tuple[list[dict[str, Any]], str, str | None]:
    head = first_byte(source)
    document: Any = None
    if head in (b"[", b"{"):
        try:
            document = load_document(source)
        except ValueError:
            document = None
    if isinstance(document, list):
        return _dicts(document), "", None
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        model = document.get("model") if isinstance(document.get("model"), str) else None
        return (
            _dicts(document["messages"]),
            as_text(document.get("system")),
            model,
        )
    if document is None and head:
        return _records(source, transcript.malformed), "", None
    load_json_document(source)
    raise TranscriptFormatError(f"{source.name}: not a list of chat messages")


def _dicts(items: list[Any]) -> list[dict[str, Any]]:
    if isinstance(items, LazyList):  # a big document's: read an item at a time at each pass
        return items.where(lambda item: isinstance(item, dict))
    return [m for m in items if isinstance(m, dict)]


def _records(source: SourceFile, malformed: list[MalformedLine]) -> list[dict[str, Any]]:
    """The JSON lines' records; in a file on disk, read again at each pass, once the bad lines
    are reported (first, as when all are read at once)."""
    if source.on_disk_path is None:
        return [r for _, r in iter_jsonl(source, malformed)]
    for _ in iter_jsonl(source, malformed):
        pass
    return LazyList(lambda: (r for _, r in iter_jsonl(source, [])))


def _message(
    builder: ThreadBuilder, message: dict[str, Any], number: int, model: str | None
) -> None:
    role = message.get("role")
    content = message.get("content")
    if role in ("system", "developer"):
        builder.event(
            builder.current_turn(), EventKind.SYSTEM_NOTICE, number, text=as_text(content)
        )
    elif role == "user":
        builder.add_user({"content": content}, tool_use_result=None, timestamp=None, line=number)
    elif role == "assistant":
        _assistant(builder, message, number, model)
    elif role in ("tool", "function"):
        block = {
            "tool_use_id": message.get("tool_call_id") or message.get("name"),
            "content": content,
        }
        builder.add_tool_result(block, None, None, number)
    else:
        builder.event(
            builder.current_turn(), EventKind.UNKNOWN, number, raw_type=f"role:{role}", raw=message
        )


def _assistant(
    builder: ThreadBuilder, message: dict[str, Any], number: int, model: str | None
) -> None:
    content = message.get("content")
    blocks: list[dict[str, Any]] = []
    if isinstance(content, str) and content:
        blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        blocks.extend(_block(b) for b in content if isinstance(b, dict))
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        blocks.insert(0, {"type": "thinking", "thinking": reasoning})
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id"),
                    "name": function.get("name"),
                    "input": json_arguments(function.get("arguments")),
                }
            )
    raw_usage = message.get("usage")
    builder.add_assistant(
        {
            "id": f"message-{number}",
            "model": message.get("model") or model,
            "content": blocks,
            "usage": _usage(raw_usage),
        },
        request_id=None,
        timestamp=None,
        line=number,
    )


def _block(block: dict[str, Any]) -> dict[str, Any]:
    # OpenAI content parts are {"type": "text" | "output_text", "text"}; Anthropic's pass through.
    if block.get("type") == "output_text":
        return {"type": "text", "text": block.get("text")}
    return block


def _usage(raw: Any) -> dict[str, int] | None:
    """OpenAI usage (prompt/completion tokens, cached inside prompt) in Anthropic's shape."""
    if not isinstance(raw, dict):
        return None
    if "prompt_tokens" in raw:
        details = raw.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens", 0) if isinstance(details, dict) else 0
        return {
            "input_tokens": int(raw.get("prompt_tokens") or 0) - int(cached or 0),
            "output_tokens": int(raw.get("completion_tokens") or 0),
            "cache_read_input_tokens": int(cached or 0),
        }
    parsed: Usage | None = usage_from(raw)
    return raw if parsed is not None else None
