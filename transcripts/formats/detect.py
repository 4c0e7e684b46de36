"""Which format a log is in, from its content (names only break ties), and the entry points."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .archives import DEFAULT_LIMITS, ArchiveError, ArchiveLimits, read_capped, unpack
from .errors import TranscriptFormatError
from .records import SourceFile
from .schema import Transcript

SNIFF_BYTES = 262_144
SNIFF_RECORDS = 50
LOG_SUFFIXES = (".jsonl", ".json", ".ndjson", ".log", ".txt")

_CODEX_ROLLOUT_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CODEX_EXEC_TYPES = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed"})
_CLAUDE_CODE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot"})
_RESPONSE_ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning"})


def sniff(source: SourceFile) -> str | None:
    """The format of one file, or None when it is no agent log we know."""
    head = source.data[:SNIFF_BYTES]
    document = _whole_document(source.data) if head.lstrip()[:1] in (b"[", b"{") else None
    if document is not None:
        found = _sniff_document(document)
        if found is not None:
            return found
    return _sniff_records(_head_records(head))


def _whole_document(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _sniff_document(document: Any) -> str | None:
    if isinstance(document, dict):
        messages = document.get("messages")
        if isinstance(messages, list) and ("sessionId" in document or "projectHash" in document):
            return "gemini-cli-session"
        if isinstance(messages, list):
            return _chat_flavour(messages)
        return None
    if isinstance(document, list) and document:
        return _chat_flavour(document)
    return None


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


def _head_records(head: bytes) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for line in head.split(b"\n")[: SNIFF_RECORDS * 2]:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
        if len(records) >= SNIFF_RECORDS:
            break
    return records


def _type(record: dict[str, Any]) -> str | None:
    value = record.get("type")
    return value if isinstance(value, str) else None


def _sniff_records(records: list[dict[str, Any]]) -> str | None:
    types = {_type(r) for r in records} - {None}
    if any(_type(r) in _CODEX_ROLLOUT_TYPES and "payload" in r for r in records):
        return "codex-rollout"
    if types & _CODEX_EXEC_TYPES or any(str(t).startswith("item.") for t in types):
        return "codex-exec-json"
    if "tool_call" in types or "thinking" in types or any("model_call_id" in r for r in records):
        return "cursor-stream-json"
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
    if records and "type" not in records[0] and "id" in records[0] and "timestamp" in records[0]:
        return "codex-rollout-legacy"
    if records and all(_type(r) in _RESPONSE_ITEM_TYPES or "record_type" in r for r in records):
        return "codex-rollout-legacy"
    if records and all("role" in r for r in records):
        return _chat_flavour(records)
    return None


# -- entry points ------------------------------------------------------------------------------


def _parsers() -> dict[str, Callable[[list[SourceFile]], Transcript]]:
    from . import chat_messages, claude_code, claude_stream_json, codex, codex_exec, cursor, gemini

    return {
        "claude-code-jsonl": claude_code.parse,
        "claude-code-stream-json": claude_stream_json.parse,
        "codex-rollout": codex.parse,
        "codex-rollout-legacy": codex.parse,
        "codex-exec-json": codex_exec.parse,
        "cursor-stream-json": cursor.parse,
        "gemini-cli-session": gemini.parse,
        "openai-chat-messages": chat_messages.parse,
        "anthropic-messages": chat_messages.parse,
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
            f"{label}: not a log in any known format (looked at {names}); expected Claude Code, "
            "Codex, Cursor, Gemini CLI or a chat message list"
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
    transcript = _parsers()[fmt](chosen)
    transcript.format = fmt
    if not transcript.events():
        # A log that only looks like a format (a header, a summary line) is not a session.
        raise TranscriptFormatError(
            f"{label}: read as {fmt}, but it holds no messages, tool calls or results"
        )
    return transcript


def read_path(path: str | Path, *, limits: ArchiveLimits = DEFAULT_LIMITS) -> list[SourceFile]:
    """The files of a log: a file (with its Claude Code subagent files), a .zip or .gz, or a
    whole folder; `limits.max_total_bytes` in all (ArchiveError past it)."""
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
    companions = _claude_code_companions(root, main)
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


def _claude_code_companions(root: Path, main: SourceFile) -> list[tuple[str, Path]]:
    """Subagent files of a Claude Code session named by its main file alone."""
    if (
        root.suffix != ".jsonl"
        or root.name.startswith("agent-")
        or sniff(main) != "claude-code-jsonl"
    ):
        return []
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
