"""Which format a log is in, from its content (names only break ties), and the entry points."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .archives import DEFAULT_LIMITS, ArchiveError, ArchiveLimits, read_capped, unpack
from .errors import TranscriptFormatError
from .json_prefix import decode_prefix
from .key_fields import check_key_fields
from .records import JSON_ERRORS, SourceFile
from .schema import Transcript

SNIFF_RECORDS = 50
# A line longer than this is judged from its start (json_prefix): detection reads complete lines
# of any length, yet never decodes more than this much of one.
SNIFF_LINE_CHARS = 65_536
LOG_SUFFIXES = (".jsonl", ".json", ".ndjson", ".log", ".txt")

_CODEX_ROLLOUT_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CODEX_EXEC_TYPES = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed"})
_CLAUDE_CODE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot"})
_RESPONSE_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning"})


def sniff(source: SourceFile) -> str | None:
    """The format of one file, or None when it is no agent log we know."""
    lines = _head_lines(source)
    document = _whole_document(source.data) if _may_be_document(lines) else None
    if document is not None:
        found = _sniff_document(document)
        if found is not None:
            return found
    return _sniff_records(_head_records(lines))


def _head_lines(source: SourceFile) -> list[bytes]:
    """The first lines, each cut past SNIFF_LINE_CHARS bytes (a cut line is read from its
    start), without reading the rest of a long one."""
    lines: list[bytes] = []
    for _, line in source.lines(max_bytes=SNIFF_LINE_CHARS + 1):
        lines.append(line)
        if len(lines) >= SNIFF_RECORDS * 2:
            break
    return lines


def _may_be_document(lines: list[bytes]) -> bool:
    """True where the file may be one JSON document (pretty-printed, or all on one line) rather
    than JSON lines: its first line does not hold a whole value, or it is the only line."""
    filled = [line for line in lines if line.strip()]
    if not filled or filled[0].lstrip()[:1] not in (b"[", b"{"):
        return False
    return len(filled) == 1 or _line_value(filled[0]) is _NOT_JSON


def _whole_document(data: bytes) -> Any:
    try:
        return json.loads(data)
    except JSON_ERRORS:
        return None


def _sniff_document(document: Any) -> str | None:
    if isinstance(document, dict):
        if isinstance(document.get("info"), dict) and "current_model_id" in document:
            return "grok-cli"  # a Grok session's summary.json
        if isinstance(document.get("chat_messages"), list):
            return "claude-ai-export"  # one conversation of a claude.ai export
        found = _storage_document(document)
        if found is not None:
            return found
        messages = document.get("messages")
        if isinstance(messages, list) and ("sessionId" in document or "projectHash" in document):
            return "gemini-cli-session"
        if isinstance(messages, list):
            return _chat_flavour(messages)
        return None
    if isinstance(document, list) and document:
        if any(isinstance(c, dict) and isinstance(c.get("chat_messages"), list) for c in document):
            return "claude-ai-export"  # conversations.json of a claude.ai export
        return _chat_flavour(document)
    return None


_COPILOT_TYPES = frozenset(
    {"session.start", "session.resume", "user.message", "assistant.message", "assistant.turn_start"}
)


def _storage_document(document: dict[str, Any]) -> str | None:
    """One object of OpenCode's storage folder, an `opencode export`, or a Droid session's
    settings file (its token totals)."""
    from .opencode import is_export, kind_of

    if kind_of(document) is not None:
        return "opencode-storage"
    if is_export(document):
        return "opencode-export"
    if isinstance(document.get("tokenUsage"), dict) and "messages" not in document:
        return "droid-session"
    return None


def _is_droid_stream(record: dict[str, Any]) -> bool:
    kind = _type(record)
    if kind == "completion":
        return "finalText" in record
    if kind in ("tool_call", "tool_result"):
        return "toolId" in record or "toolName" in record
    return (
        kind == "message"
        and isinstance(record.get("text"), str)
        and ("session_id" in record or "sessionId" in record)
    )


def _chat_flavour(messages: list[Any]) -> str | None:
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


def _head_records(lines: list[bytes]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for line in lines:
        value = _line_value(line)
        if isinstance(value, dict):
            records.append(value)
        if len(records) >= SNIFF_RECORDS:
            break
    return records


_NOT_JSON = object()


def _line_value(line: bytes) -> Any:
    """A line's JSON value; a line longer than SNIFF_LINE_CHARS (a pasted image in the first
    record) is read from its start, cut members marked json_prefix.CUT."""
    if len(line) <= SNIFF_LINE_CHARS:
        try:
            return json.loads(line)
        except JSON_ERRORS:
            return _NOT_JSON
    try:
        return decode_prefix(line[:SNIFF_LINE_CHARS].decode("utf-8", "ignore"))
    except JSON_ERRORS:
        return _NOT_JSON


def _type(record: dict[str, Any]) -> str | None:
    value = record.get("type")
    return value if isinstance(value, str) else None


def _sniff_records(records: list[dict[str, Any]]) -> str | None:
    types = {_type(r) for r in records} - {None}
    if any(_type(r) in _CODEX_ROLLOUT_TYPES and "payload" in r for r in records):
        return "codex-rollout"
    if types & _CODEX_EXEC_TYPES or any(str(t).startswith("item.") for t in types):
        return "codex-exec-json"
    # Before Cursor and Claude stream-json: Droid's stream has tool_call records and an init
    # record listing tools too, and its session store shares Pi's message records.
    if any(_is_droid_stream(r) for r in records):
        return "droid-stream-json"
    if any(_type(r) == "session_start" and "id" in r for r in records):
        return "droid-session"
    if any(_type(r) in _COPILOT_TYPES and isinstance(r.get("data"), dict) for r in records):
        return "copilot-cli-events"
    if "tool_call" in types or "thinking" in types or any("model_call_id" in r for r in records):
        return "cursor-stream-json"
    if any(_is_gemini_jsonl(r) for r in records):
        return "gemini-cli-jsonl"
    # Before Claude Code: Qwen records carry uuid, parentUuid and sessionId too, but their
    # messages are Gemini contents ({role, parts}) and tool results are records of their own.
    if any(_is_qwen(r) for r in records):
        return "qwen-code-jsonl"
    if any(_is_cursor_transcript(r) for r in records):
        return "cursor-agent-transcript"
    # Before session files: newer stream-json lines carry a uuid too, but never a parentUuid.
    if any("parent_tool_use_id" in r for r in records) or any(
        _type(r) == "system" and r.get("subtype") == "init" and "tools" in r for r in records
    ):
        return "claude-code-stream-json"
    if any(
        _type(r) in _CLAUDE_CODE_TYPES and ("uuid" in r or "leafUuid" in r or "sessionId" in r)
        for r in records
    ):
        return "claude-code-jsonl"
    if any(_type(r) == "system" and r.get("subtype") == "init" for r in records):
        return "cursor-stream-json"
    if any(_is_kimi(r) for r in records):
        return "kimi-cli"
    if any(str(r.get("method")) in _GROK_UPDATE_METHODS for r in records) or _is_grok_chat(records):
        return "grok-cli"
    if records and "type" not in records[0] and "id" in records[0] and "timestamp" in records[0]:
        return "codex-rollout-legacy"
    if records and all(_type(r) in _RESPONSE_ITEM_TYPES or "record_type" in r for r in records):
        return "codex-rollout-legacy"
    if records and all("role" in r for r in records):
        return _chat_flavour(records)
    return None


def _is_gemini_jsonl(record: dict[str, Any]) -> bool:
    # The session header, a metadata update or a rewind; a model message has no other owner.
    return (
        ("sessionId" in record and "projectHash" in record)
        or "$rewindTo" in record
        or isinstance(record.get("$set"), dict)
        or (_type(record) == "gemini" and "id" in record)
    )


def _is_qwen(record: dict[str, Any]) -> bool:
    if "uuid" not in record or _type(record) not in ("user", "assistant", "tool_result", "system"):
        return False
    message = record.get("message")
    return _type(record) == "tool_result" or (
        isinstance(message, dict) and isinstance(message.get("parts"), list)
    )


def _is_cursor_transcript(record: dict[str, Any]) -> bool:
    # {role, message: {content}} lines, and the {type: turn_ended} line closing each turn.
    if _type(record) == "turn_ended":
        return True
    return "type" not in record and "role" in record and isinstance(record.get("message"), dict)


_KIMI_WIRE_TYPES = frozenset(
    {"TurnBegin", "StepBegin", "ContentPart", "ToolCall", "ToolResult", "StatusUpdate", "TurnEnd"}
)


def _is_kimi(record: dict[str, Any]) -> bool:
    # A wire.jsonl {timestamp, message: {type, payload}} line, or a context.jsonl bookkeeping one.
    message = record.get("message")
    if isinstance(message, dict) and "role" not in record:
        return _type(message) in _KIMI_WIRE_TYPES and isinstance(message.get("payload"), dict)
    return record.get("role") in ("_checkpoint", "_usage", "_system_prompt")


_GROK_UPDATE_METHODS = frozenset({"session/update", "_x.ai/session/update"})
_GROK_CHAT_TYPES = frozenset({"system", "user", "reasoning", "assistant", "tool_result"})
_GROK_MARKS = ("model_fingerprint", "model_id", "synthetic_reason", "prompt_index", "tool_call_id")


def _is_grok_chat(records: list[dict[str, Any]]) -> bool:
    # chat_history.jsonl: bare {type, content} lines, one at least with a field only Grok writes.
    if any("uuid" in r or "message" in r or "payload" in r or "role" in r for r in records):
        return False
    return any(
        _type(r) in _GROK_CHAT_TYPES
        and (any(mark in r for mark in _GROK_MARKS) or "<user_query>" in str(r.get("content")))
        for r in records
    )


# -- entry points ------------------------------------------------------------------------------


def _parsers() -> dict[str, Callable[[list[SourceFile]], Transcript]]:
    from . import (
        chat_messages,
        claude_ai_export,
        claude_code,
        claude_stream_json,
        codex,
        codex_exec,
        copilot_cli,
        cursor,
        cursor_transcripts,
        droid,
        gemini,
        gemini_jsonl,
        grok,
        kimi,
        opencode,
        qwen,
    )

    return {
        "cursor-agent-transcript": cursor_transcripts.parse,
        "gemini-cli-jsonl": gemini_jsonl.parse,
        "qwen-code-jsonl": qwen.parse,
        "claude-code-jsonl": claude_code.parse,
        "claude-code-stream-json": claude_stream_json.parse,
        "codex-rollout": codex.parse,
        "codex-rollout-legacy": codex.parse,
        "codex-exec-json": codex_exec.parse,
        "cursor-stream-json": cursor.parse,
        "gemini-cli-session": gemini.parse,
        "openai-chat-messages": chat_messages.parse,
        "anthropic-messages": chat_messages.parse,
        "kimi-cli": kimi.parse,
        "grok-cli": grok.parse,
        "claude-ai-export": claude_ai_export.parse,
        "copilot-cli-events": copilot_cli.parse,
        "opencode-storage": opencode.parse,
        "opencode-export": opencode.parse,
        "droid-session": droid.parse_session,
        "droid-stream-json": droid.parse_stream,
    }


def detect_files(files: list[SourceFile], label: str) -> tuple[str, list[SourceFile]]:
    """The format of a set of files and the files that belong to the log."""
    found: dict[str, list[SourceFile]] = {}
    metas: list[SourceFile] = []
    for source in sorted(files, key=lambda f: f.name):
        if source.name.endswith(".meta.json"):
            metas.append(source)
            continue
        if not source.name.lower().endswith(LOG_SUFFIXES):
            continue
        fmt = sniff(source)
        if fmt is not None:
            found.setdefault(fmt, []).append(source)
    if not found:
        names = ", ".join(f.name for f in files[:5]) or "no files"
        raise TranscriptFormatError(
            f"{label}: not a log in any known format (looked at {names}); expected a log of "
            "Claude Code, Codex, Cursor, Gemini CLI, Qwen Code or another agent that "
            "docs/transcripts.md lists, or a chat message list"
        )
    # Claude Code subagent files sit beside other formats' files only by accident.
    fmt = (
        "claude-code-jsonl"
        if "claude-code-jsonl" in found
        else max(found, key=lambda k: len(found[k]))
    )
    chosen = found[fmt]
    return fmt, chosen + (metas if fmt == "claude-code-jsonl" else [])


def parse_files(files: list[SourceFile], label: str) -> Transcript:
    fmt, chosen = detect_files(files, label)
    try:
        transcript = _parsers()[fmt](chosen)
    except RecursionError:
        # A value nested thousands deep inside a record (an argument string `[[[[…`).
        raise TranscriptFormatError(
            f"{label}: read as {fmt}, but a record nests too deep to be read"
        ) from None
    transcript.format = fmt
    check_key_fields(transcript, fmt=fmt, label=label)
    return transcript


def read_path(path: str | Path, *, limits: ArchiveLimits = DEFAULT_LIMITS) -> list[SourceFile]:
    """The files of a log: a file (with its subagent files, for Claude Code, Cursor agent
    transcripts and Gemini CLI JSONL), a .zip or .gz, or a whole folder;
    `limits.max_total_bytes` in all (ArchiveError past it)."""
    root = Path(path)
    if root.is_dir():
        found = [p for p in sorted(root.rglob("*")) if p.is_file()]
        named = [(p.relative_to(root).as_posix(), p) for p in found]
        return _read_files(named, label=str(root), max_bytes=limits.max_total_bytes)
    if not root.is_file():
        raise TranscriptFormatError(f"{root}: no such file or folder")
    with root.open("rb") as stream:
        unpacked = unpack(stream, name=root.name, limits=limits)
    if unpacked.kind is not None:
        return unpacked.files
    main = unpacked.files[0]
    companions = _companions(root, main)
    room = limits.max_total_bytes - len(main.data)
    return [main, *_read_files(companions, label=str(root), max_bytes=room)]


def _read_files(named: list[tuple[str, Path]], *, label: str, max_bytes: int) -> list[SourceFile]:
    """Local files, refused from their sizes before any is read when they hold too much."""
    total = sum(path.stat().st_size for _, path in named)
    if total > max_bytes:
        raise ArchiveError(
            label, f"holds {total:,} bytes, more than the {max_bytes:,}-byte limit", too_large=True
        )
    files = []
    for name, path in named:
        with path.open("rb") as stream:
            data = read_capped(stream, name=f"{label}: {name}", max_bytes=max_bytes)
        max_bytes -= len(data)
        files.append(SourceFile(name, data))
    return files


def _companions(root: Path, main: SourceFile) -> list[tuple[str, Path]]:
    """The subagent files of a session named by its main file alone."""
    if root.suffix != ".jsonl":
        return []
    fmt = sniff(main)
    if fmt == "claude-code-jsonl" and not root.name.startswith("agent-"):
        return _claude_code_companions(root)
    if fmt == "cursor-agent-transcript" and root.parent.name == root.stem:
        # agent-transcripts/<id>/<id>.jsonl beside <id>/subagents/<agent id>.jsonl
        return _files_in(root.parent / "subagents", "subagents")
    if fmt == "gemini-cli-jsonl":
        # chats/session-<time>-<id head>.jsonl beside chats/<session id>/<agent id>.jsonl
        session_id = _gemini_main_session_id(main)
        return _files_in(root.parent / session_id, session_id) if session_id else []
    return []


def _files_in(folder: Path, prefix: str) -> list[tuple[str, Path]]:
    if not folder.is_dir():
        return []
    return [(f"{prefix}/{p.name}", p) for p in sorted(folder.glob("*.jsonl")) if p.is_file()]


_SAFE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")


def _gemini_main_session_id(main: SourceFile) -> str | None:
    """The session id on a main session's header, when it can name a folder."""
    for record in _head_records(_head_lines(main)):
        session_id = record.get("sessionId")
        if "projectHash" not in record or not isinstance(session_id, str):
            continue
        if record.get("kind") == "subagent" or not _SAFE_NAME.fullmatch(session_id):
            return None
        return session_id
    return None


def _claude_code_companions(root: Path) -> list[tuple[str, Path]]:
    """Subagent files of a Claude Code session named by its main file alone."""
    found: list[tuple[str, Path]] = []
    nested = root.with_suffix("") / "subagents"  # 2.1.x
    if nested.is_dir():
        for p in sorted(nested.rglob("agent-*")):  # workflows nest agents a level deeper
            if p.is_file():
                found.append((f"{root.stem}/subagents/{p.relative_to(nested).as_posix()}", p))
    session_id = root.stem.encode()
    for p in sorted(root.parent.glob("agent-*.jsonl")):  # 2.0.x, filtered to this session
        with p.open("rb") as stream:
            if session_id in stream.read(4096):
                found.append((p.name, p))
    return found
