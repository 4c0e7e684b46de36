"""What marks the logs of the formats read before the registry: one predicate per format over a
file's first records (or over the file as one JSON document). registry.py pairs each with its
format and the rank at which it is tried; a format added since keeps its predicates in its own
module.
"""

from __future__ import annotations

from typing import Any

from .opencode import is_export, kind_of

Record = dict[str, Any]

_CODEX_ROLLOUT_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CODEX_EXEC_TYPES = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed"})
_CLAUDE_CODE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot"})
_RESPONSE_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning"})
_COPILOT_TYPES = frozenset(
    {"session.start", "session.resume", "user.message", "assistant.message", "assistant.turn_start"}
)
_KIMI_WIRE_TYPES = frozenset(
    {"TurnBegin", "StepBegin", "ContentPart", "ToolCall", "ToolResult", "StatusUpdate", "TurnEnd"}
)
_GROK_UPDATE_METHODS = frozenset({"session/update", "_x.ai/session/update"})
_GROK_CHAT_TYPES = frozenset({"system", "user", "reasoning", "assistant", "tool_result"})
_GROK_MARKS = ("model_fingerprint", "model_id", "synthetic_reason", "prompt_index", "tool_call_id")


def record_type(record: Record) -> str | None:
    value = record.get("type")
    return value if isinstance(value, str) else None


def _types(records: list[Record]) -> set[str]:
    return {t for t in map(record_type, records) if t is not None}


# -- one JSON document ---------------------------------------------------------------------------


def grok_summary(document: Any) -> bool:
    # A Grok session's summary.json.
    return (
        isinstance(document, dict)
        and isinstance(document.get("info"), dict)
        and "current_model_id" in document
    )


def claude_ai_export(document: Any) -> bool:
    # One conversation of a claude.ai export, or its conversations.json.
    if isinstance(document, dict):
        return isinstance(document.get("chat_messages"), list)
    return isinstance(document, list) and any(
        isinstance(c, dict) and isinstance(c.get("chat_messages"), list) for c in document
    )


def opencode_storage(document: Any) -> bool:
    return isinstance(document, dict) and kind_of(document) is not None


def opencode_export(document: Any) -> bool:
    return isinstance(document, dict) and is_export(document)


def droid_settings(document: Any) -> bool:
    # A Droid session's settings file (its token totals).
    return (
        isinstance(document, dict)
        and isinstance(document.get("tokenUsage"), dict)
        and "messages" not in document
    )


def gemini_session(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("messages"), list)
        and ("sessionId" in document or "projectHash" in document)
    )


def chat_flavour(messages: list[Any]) -> str | None:
    """ "anthropic-messages" or "openai-chat-messages" for a list of chat messages, else None."""
    if not messages or not all(isinstance(m, dict) and "role" in m for m in messages):
        return None
    for message in messages:
        if str(message.get("role")) in ("tool", "developer", "function") or "tool_calls" in message:
            return "openai-chat-messages"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result", "thinking")
            for b in content
        ):
            return "anthropic-messages"
    return "openai-chat-messages"


def _document_messages(document: Any) -> list[Any]:
    if isinstance(document, dict):
        messages = document.get("messages")
        return messages if isinstance(messages, list) else []
    return document if isinstance(document, list) else []


def openai_chat_document(document: Any) -> bool:
    return chat_flavour(_document_messages(document)) == "openai-chat-messages"


def anthropic_chat_document(document: Any) -> bool:
    return chat_flavour(_document_messages(document)) == "anthropic-messages"


# -- JSON lines ----------------------------------------------------------------------------------


def codex_rollout(records: list[Record]) -> bool:
    return any(record_type(r) in _CODEX_ROLLOUT_TYPES and "payload" in r for r in records)


def codex_exec(records: list[Record]) -> bool:
    types = _types(records)
    return bool(types & _CODEX_EXEC_TYPES) or any(t.startswith("item.") for t in types)


def droid_stream(records: list[Record]) -> bool:
    # Before Cursor and Claude stream-json: Droid's stream has tool_call records and an init
    # record listing tools too, and its session store shares Pi's message records.
    return any(_is_droid_stream(r) for r in records)


def _is_droid_stream(record: Record) -> bool:
    kind = record_type(record)
    if kind == "completion":
        return "finalText" in record
    if kind in ("tool_call", "tool_result"):
        return "toolId" in record or "toolName" in record
    return (
        kind == "message"
        and isinstance(record.get("text"), str)
        and ("session_id" in record or "sessionId" in record)
    )


def droid_session(records: list[Record]) -> bool:
    return any(record_type(r) == "session_start" and "id" in r for r in records)


def copilot_events(records: list[Record]) -> bool:
    return any(
        record_type(r) in _COPILOT_TYPES and isinstance(r.get("data"), dict) for r in records
    )


def cursor_stream(records: list[Record]) -> bool:
    types = _types(records)
    return "tool_call" in types or "thinking" in types or any("model_call_id" in r for r in records)


def cursor_stream_init(records: list[Record]) -> bool:
    # Tried after Claude Code's session files, whose system records may say init too.
    return any(record_type(r) == "system" and r.get("subtype") == "init" for r in records)


def gemini_jsonl(records: list[Record]) -> bool:
    # The session header, a metadata update or a rewind; a model message has no other owner.
    return any(
        ("sessionId" in r and "projectHash" in r)
        or "$rewindTo" in r
        or isinstance(r.get("$set"), dict)
        or (record_type(r) == "gemini" and "id" in r)
        for r in records
    )


def qwen_jsonl(records: list[Record]) -> bool:
    # Before Claude Code: Qwen records carry uuid, parentUuid and sessionId too, but their
    # messages are Gemini contents ({role, parts}) and tool results are records of their own.
    return any(_is_qwen(r) for r in records)


def _is_qwen(record: Record) -> bool:
    kind = record_type(record)
    if "uuid" not in record or kind not in ("user", "assistant", "tool_result", "system"):
        return False
    message = record.get("message")
    # A bare tool_result record with a uuid is no mark: a newer Claude Code may write one.
    return (kind == "tool_result" and "toolCallResult" in record) or (
        isinstance(message, dict) and isinstance(message.get("parts"), list)
    )


def cursor_transcript(records: list[Record]) -> bool:
    # {role, message: {content}} lines, and the {type: turn_ended} line closing each turn.
    return any(
        record_type(r) == "turn_ended"
        or ("type" not in r and "role" in r and isinstance(r.get("message"), dict))
        for r in records
    )


def claude_stream_json(records: list[Record]) -> bool:
    # Before session files: newer stream-json lines carry a uuid too, but never a parentUuid.
    return any("parent_tool_use_id" in r for r in records) or any(
        record_type(r) == "system" and r.get("subtype") == "init" and "tools" in r for r in records
    )


def claude_code_session(records: list[Record]) -> bool:
    return any(
        record_type(r) in _CLAUDE_CODE_TYPES
        and ("uuid" in r or "leafUuid" in r or "sessionId" in r)
        for r in records
    )


def kimi_cli(records: list[Record]) -> bool:
    return any(_is_kimi(r) for r in records)


def _is_kimi(record: Record) -> bool:
    # A wire.jsonl {timestamp, message: {type, payload}} line, or a context.jsonl bookkeeping one.
    message = record.get("message")
    if isinstance(message, dict) and "role" not in record:
        return record_type(message) in _KIMI_WIRE_TYPES and isinstance(message.get("payload"), dict)
    return record.get("role") in ("_checkpoint", "_usage", "_system_prompt")


def grok_cli(records: list[Record]) -> bool:
    return any(str(r.get("method")) in _GROK_UPDATE_METHODS for r in records) or _is_grok_chat(
        records
    )


def _is_grok_chat(records: list[Record]) -> bool:
    # chat_history.jsonl: bare {type, content} lines, one at least with a field only Grok writes.
    if any("uuid" in r or "message" in r or "payload" in r or "role" in r for r in records):
        return False
    return any(
        record_type(r) in _GROK_CHAT_TYPES
        and (any(mark in r for mark in _GROK_MARKS) or "<user_query>" in str(r.get("content")))
        for r in records
    )


def codex_rollout_legacy(records: list[Record]) -> bool:
    if not records:
        return False
    first = records[0]
    if "type" not in first and "id" in first and "timestamp" in first:
        return True
    # Bare response items; a newer writer's record types among them (function_result, ...) do
    # not hide the rest, while most are items and one at least a message.
    items = sum(1 for r in records if record_type(r) in _RESPONSE_ITEM_TYPES or "record_type" in r)
    if items == len(records):
        return True
    return items * 2 > len(records) and any(record_type(r) == "message" for r in records)


def openai_chat_lines(records: list[Record]) -> bool:
    return bool(records) and chat_flavour(records) == "openai-chat-messages"


def anthropic_chat_lines(records: list[Record]) -> bool:
    return bool(records) and chat_flavour(records) == "anthropic-messages"
