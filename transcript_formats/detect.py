"""Which format a log is in, from its content (names only break ties), and the entry points."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .archives import DEFAULT_LIMITS, ArchiveError, ArchiveLimits, read_capped, unpack
from .call_changes import place_call_changes
from .errors import TranscriptFormatError
from .json_document import load_document
from .json_prefix import decode_prefix
from .key_fields import check_key_fields
from .records import JSON_ERRORS, SourceFile
from .registry import DOCUMENT_SNIFFERS, FORMATS, RECORDS_SNIFFERS, format_named
from .schema import Transcript
from .tolerant import read_tolerantly

SNIFF_RECORDS = 50
# A line longer than this is judged from its start (json_prefix): detection reads complete lines
# of any length, yet never decodes more than this much of one.
SNIFF_LINE_CHARS = 65_536
LOG_SUFFIXES = (".jsonl", ".json", ".ndjson", ".log", ".txt")


def sniff(source: SourceFile) -> str | None:
    """The format of one file, or None when it is no agent log we know."""
    lines = _head_lines(source)
    document = _whole_document(source) if _may_be_document(lines) else None
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


def _whole_document(source: SourceFile) -> Any:
    # A big document's big arrays are read an item at a time (json_document.StreamedArray).
    try:
        return load_document(source)
    except JSON_ERRORS:
        return None


def _sniff_document(document: Any) -> str | None:
    for matches, fmt in DOCUMENT_SNIFFERS:
        if matches(document):
            return fmt
    return None


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


def _sniff_records(records: list[dict[str, Any]]) -> str | None:
    if not records:
        return None
    for matches, fmt in RECORDS_SNIFFERS:
        if matches(records):
            return fmt
    return None


# -- entry points ------------------------------------------------------------------------------


def _parsers() -> dict[str, Callable[[list[SourceFile]], Transcript]]:
    return {spec.id: spec.parse for spec in FORMATS}


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
            f"{_writers()} (docs/transcripts.md), or a chat message list"
        )
    claiming = [fmt for fmt in found if _claims_folder(fmt)]
    fmt = claiming[0] if claiming else max(found, key=lambda k: len(found[k]))
    chosen = found[fmt]
    return fmt, chosen + (metas if _claims_folder(fmt) else [])


def _claims_folder(fmt: str) -> bool:
    spec = format_named(fmt)
    return spec is not None and spec.claims_folder


def _writers() -> str:
    names = dict.fromkeys(spec.name.split(" (")[0] for spec in FORMATS if spec.harness)
    return ", ".join(names)


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
    read_tolerantly(transcript)
    place_call_changes(transcript)
    spec = format_named(fmt)
    check_key_fields(
        transcript, fmt=fmt, label=label, checks=spec.key_fields if spec is not None else ()
    )
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
