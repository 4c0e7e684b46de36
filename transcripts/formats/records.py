"""Reading log files: JSON lines with their line numbers, malformed lines counted not fatal."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .errors import TranscriptFormatError
from .schema import Event, EventKind, MalformedLine

# An unknown record is kept for the reader but capped: one pasted blob must not bloat the page.
RAW_CAP_CHARS = 4_000


@dataclass(frozen=True)
class SourceFile:
    """One file of a log: its name relative to what the user gave us, and its bytes."""

    name: str
    data: bytes


def iter_jsonl(
    source: SourceFile, malformed: list[MalformedLine], *, only_if: tuple[bytes, ...] = ()
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, record) for every line that is a JSON object.

    With `only_if`, lines that contain none of those byte strings are skipped unread.
    """
    loads = json.loads
    for number, line in iter_lines(source.data):
        if not line.strip() or (only_if and not any(word in line for word in only_if)):
            continue
        try:
            record = loads(line)
        except ValueError as exc:
            malformed.append(MalformedLine(source.name, number, f"invalid JSON: {exc}"))
            continue
        if not isinstance(record, dict):
            malformed.append(MalformedLine(source.name, number, "not a JSON object"))
            continue
        yield number, record


def iter_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(1-based number, line) one at a time: splitting a big log at once would copy all of it."""
    start, number, size = 0, 1, len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end == -1:
            end = size
        yield number, data[start:end]
        start, number = end + 1, number + 1


def load_json_document(source: SourceFile) -> Any:
    """Parse a whole-file JSON document; the error names the file and the line."""
    try:
        return json.loads(source.data)
    except ValueError as exc:
        raise TranscriptFormatError(f"{source.name}: invalid JSON: {exc}") from exc


def capped_raw(record: Any) -> Any:
    """The record itself when small, else its JSON text cut at RAW_CAP_CHARS."""
    text = json.dumps(record, ensure_ascii=False, default=str)
    if len(text) <= RAW_CAP_CHARS:
        return record
    return text[:RAW_CAP_CHARS] + f"... [{len(text) - RAW_CAP_CHARS} more characters]"


class EventIds:
    """Event ids unique within one transcript; they are the page's anchors."""

    def __init__(self) -> None:
        self._count = 0

    def next(self) -> str:
        self._count += 1
        return f"e{self._count}"


def unknown_event(ids: EventIds, record: dict[str, Any], raw_type: str, line: int | None) -> Event:
    return Event(
        id=ids.next(),
        kind=EventKind.UNKNOWN,
        raw_type=raw_type,
        raw=capped_raw(record),
        line=line,
        timestamp=_str_or_none(record.get("timestamp")),
    )


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_text(content: Any) -> str:
    """Text of a message or tool output that may be a string, a list of parts, or JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part_text(part) for part in content)
    if isinstance(content, dict):
        return _part_text(content)
    return str(content)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        for key in ("text", "output", "content"):
            value = part.get(key)
            if isinstance(value, str):
                return value
        if part.get("type") == "image" or part.get("type") == "input_image":
            return "[image]"
        return json.dumps(part, ensure_ascii=False, default=str)
    return str(part)


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# What a record of an unexpected shape raises inside a parser. Such a record is reported like a
# malformed line and the parse goes on: one odd record must not cost the reader the whole log.
RECORD_ERRORS = (TypeError, AttributeError, KeyError, ValueError, IndexError)


def each_jsonl_record(
    files: list[SourceFile],
    malformed: list[MalformedLine],
    handle: Callable[[dict[str, Any], int], None],
) -> None:
    """Hand every JSON object line of `files` to `handle(record, line)`. A record the handler
    cannot understand is counted as malformed, with its file and line, and reading goes on."""
    for source in files:
        for line, record in iter_jsonl(source, malformed):
            try:
                handle(record, line)
            except RECORD_ERRORS as exc:
                record_not_understood(malformed, source.name, line, exc)


def record_not_understood(
    malformed: list[MalformedLine], source: str, line: int | None, exc: Exception
) -> None:
    reason = f"record not understood ({type(exc).__name__}: {exc})"
    malformed.append(MalformedLine(source, line or 0, reason[:300]))


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
