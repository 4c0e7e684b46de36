"""Reading log files: JSON lines with their line numbers, malformed lines counted not fatal."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, cast

from .disk_texts import DiskText
from .errors import TranscriptFormatError
from .json_document import load_document
from .schema import Event, EventKind, Image, MalformedLine

# An unknown record is kept for the reader but capped: one pasted blob must not bloat the page.
RAW_CAP_CHARS = 4_000
# An image's base64 past this (about 6 MB decoded) is not kept: the page would not embed it.
IMAGE_DATA_CAP_CHARS = 8_000_000


# What decoding untrusted JSON raises: a value nested past the interpreter's recursion limit
# (`[[[[…`) is as unreadable as a cut one.
JSON_ERRORS = (ValueError, RecursionError)


# Lines are read from a file on disk in blocks of this size.
READ_BLOCK_BYTES = 1 << 20


class SourceFile:
    """One file of a log: its name relative to what the user gave us, and its bytes, held in
    memory or read from a file on disk as they are needed (`SourceFile.on_disk`).

    Parsers read lines (`lines()`, through iter_jsonl), so a log on disk is never whole in
    memory; only a log that is one JSON document reads `data`, the whole file, to decode it.
    """

    __slots__ = ("_data", "_path", "name")

    def __init__(
        self, name: str, data: bytes = b"", *, path: str | os.PathLike[str] | None = None
    ) -> None:
        self.name = name
        self._data = data
        self._path = os.fspath(path) if path is not None else None

    @classmethod
    def on_disk(cls, name: str, path: str | os.PathLike[str]) -> SourceFile:
        return cls(name, path=path)

    def __repr__(self) -> str:
        where = f"path={self._path!r}" if self._path is not None else f"{len(self._data)} bytes"
        return f"SourceFile({self.name!r}, {where})"

    @property
    def data(self) -> bytes:
        """The whole file (read from disk on each use, for a file there)."""
        if self._path is None:
            return self._data
        with open(self._path, "rb") as stream:
            return stream.read()

    def open(self) -> BinaryIO:
        """The file as a binary stream at its start (the caller closes it)."""
        if self._path is None:
            return io.BytesIO(self._data)
        return open(self._path, "rb")

    @property
    def on_disk_path(self) -> str | None:
        return self._path

    def size(self) -> int:
        return len(self._data) if self._path is None else os.path.getsize(self._path)

    def head(self, size: int) -> bytes:
        """The first `size` bytes, or the whole file when it is shorter."""
        if self._path is None:
            return self._data[:size]
        with open(self._path, "rb") as stream:
            return stream.read(size)

    def read_at(self, offset: int, length: int) -> bytes:
        """`length` bytes from `offset`."""
        if self._path is None:
            return self._data[offset : offset + length]
        descriptor = os.open(self._path, os.O_RDONLY)
        try:
            return os.pread(descriptor, length, offset)
        finally:
            os.close(descriptor)

    def lines(self, *, max_bytes: int | None = None) -> Iterator[tuple[int, bytes]]:
        """(1-based number, line without its newline), one at a time. With `max_bytes`, each
        line is cut there, and the rest of a longer line is skipped unread into memory."""
        if self._path is None:
            yield from _memory_lines(self._data, max_bytes)
            return
        with open(self._path, "rb", buffering=READ_BLOCK_BYTES) as stream:
            yield from _stream_lines(stream, max_bytes)

    def contains(self, needle: bytes) -> bool:
        """Whether `needle` occurs in the file, read in blocks (overlapping by its length)."""
        if self._path is None:
            return needle in self._data
        tail = b""
        with open(self._path, "rb") as stream:
            while block := stream.read(READ_BLOCK_BYTES):
                if needle in tail + block[: len(needle)] or needle in block:
                    return True
                tail = block[-len(needle) :]
        return False


def iter_jsonl(
    source: SourceFile, malformed: list[MalformedLine], *, only_if: tuple[bytes, ...] = ()
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, record) for every line that is a JSON object.

    With `only_if`, lines that contain none of those byte strings are skipped unread.
    """
    for number, _, record in iter_jsonl_spans(source, malformed, only_if=only_if):
        yield number, record


def iter_jsonl_spans(
    source: SourceFile, malformed: list[MalformedLine], *, only_if: tuple[bytes, ...] = ()
) -> Iterator[tuple[int, tuple[int, int], dict[str, Any]]]:
    """iter_jsonl, each record with its line's (offset, length) in the file: the record can be
    read again later (`load_jsonl_span`) instead of being kept."""
    loads = json.loads
    offset = 0
    for number, line in source.lines():
        span = (offset, len(line))
        offset += len(line) + 1
        if not line.strip() or (only_if and not any(word in line for word in only_if)):
            continue
        try:
            record = loads(line)
        except JSON_ERRORS as exc:
            malformed.append(MalformedLine(source.name, number, f"invalid JSON: {exc}"))
            continue
        if not isinstance(record, dict):
            malformed.append(MalformedLine(source.name, number, "not a JSON object"))
            continue
        yield number, span, record


def load_jsonl_span(source: SourceFile, span: tuple[int, int]) -> dict[str, Any]:
    """A record iter_jsonl_spans yielded, decoded again from its line."""
    record: dict[str, Any] = json.loads(source.read_at(*span))
    return record


# A text at least this long, of a record in a file on disk, may be held as where its line is
# (LineText); a shorter one, once in an event, waits on disk all the same (disk_texts).
LINE_TEXT_MIN_CHARS = 1024


class LineText(DiskText):
    """A long text of one record, held as its line's place in a file on disk and decoded again
    (`extract(record)`) each time it is read: an upload's tool outputs are most of its bytes,
    and holding them all would cost more memory than the log itself.
    """

    __slots__ = ("_extract", "_source", "_span")

    def __init__(
        self,
        source: SourceFile,
        span: tuple[int, int],
        extract: Callable[[dict[str, Any]], str],
        length: int,
    ) -> None:
        super().__init__(length)
        self._source, self._span, self._extract = source, span, extract

    def __str__(self) -> str:
        return self._extract(load_jsonl_span(self._source, self._span))

    def __repr__(self) -> str:
        return f"LineText({self._source.name!r}, {self._span!r})"


def line_text(
    source: SourceFile,
    span: tuple[int, int],
    text: str,
    extract: Callable[[dict[str, Any]], str],
) -> str:
    """`text` (what `extract` makes of the record on `span`), or, when long and on disk, a
    LineText that reads it again there; typed str, which it reads like."""
    if source.on_disk_path is None or len(text) < LINE_TEXT_MIN_CHARS:
        return text
    return cast(str, LineText(source, span, extract, len(text)))


def iter_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(1-based number, line) one at a time: splitting a big log at once would copy all of it."""
    return _memory_lines(data, None)


def _memory_lines(data: bytes, max_bytes: int | None) -> Iterator[tuple[int, bytes]]:
    start, number, size = 0, 1, len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end == -1:
            end = size
        stop = end if max_bytes is None else min(end, start + max_bytes)
        yield number, data[start:stop]
        start, number = end + 1, number + 1


def _stream_lines(stream: Any, max_bytes: int | None) -> Iterator[tuple[int, bytes]]:
    if max_bytes is None:
        for number, line in enumerate(stream, start=1):
            yield number, line[:-1] if line.endswith(b"\n") else line
        return
    number = 0
    while line := stream.readline(max_bytes + 1):
        number += 1
        if line.endswith(b"\n"):
            yield number, line[:-1]
            continue
        yield number, line[:max_bytes]
        if len(line) > max_bytes:  # cut: the rest is read in blocks and dropped
            while line and not line.endswith(b"\n"):
                line = stream.readline(READ_BLOCK_BYTES)


def first_byte(source: SourceFile) -> bytes:
    """The file's first byte that is not whitespace (b"" for a blank file)."""
    for _, line in source.lines(max_bytes=READ_BLOCK_BYTES):
        if stripped := line.lstrip():
            return stripped[:1]
    return b""


def load_json_document(source: SourceFile) -> Any:
    """Parse a whole-file JSON document; the error names the file and the line. In a big
    file on disk, its big arrays are read an item at a time as they are iterated
    (json_document.StreamedArray)."""
    try:
        return load_document(source)
    except JSON_ERRORS as exc:
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


def images_of(content: Any) -> tuple[Image, ...]:
    """The images among a message's or a tool result's content parts, in order.

    Anthropic `{"type": "image", "source": {"type": "base64", "media_type", "data"}}`, OpenAI
    `{"type": "image_url", "image_url": {"url": "data:..."}}`, Codex `{"type": "input_image",
    "image_url": "data:..."}` and Gemini `{"inlineData": {"mimeType", "data"}}`. A part that
    names an image by URL or file id gives an Image without data: nothing is ever fetched.
    """
    if not isinstance(content, list):
        return ()
    found = [_image(part) for part in content if isinstance(part, dict)]
    return tuple(image for image in found if image is not None)


def _image(part: dict[str, Any]) -> Image | None:
    kind = part.get("type")
    if kind == "image":
        source = as_dict(part.get("source"))
        if source.get("type") == "base64":
            return _base64_image(source.get("media_type"), source.get("data"))
        return Image(media_type=str(source.get("media_type") or "image"))
    if kind in ("image_url", "input_image"):
        url = part.get("image_url")
        url = as_dict(url).get("url") if isinstance(url, dict) else url
        return _data_url_image(url)
    inline = part.get("inlineData") or part.get("inline_data")
    if isinstance(inline, dict):
        return _base64_image(inline.get("mimeType") or inline.get("mime_type"), inline.get("data"))
    return None


def _data_url_image(url: Any) -> Image:
    # data:<type>;base64,<data>; any other URL is only named, never fetched.
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url[:200]:
        head, data = url.split(",", 1)
        return _base64_image(head[5:].split(";", 1)[0], data)
    return Image(media_type="image")


def _base64_image(media_type: Any, data: Any) -> Image:
    media = media_type if isinstance(media_type, str) and media_type else "image"
    if not isinstance(data, str):
        return Image(media_type=media[:100])
    size = len(data) * 3 // 4 - data[-2:].count("=")
    kept = data if len(data) <= IMAGE_DATA_CAP_CHARS else ""
    return Image(media_type=media[:100], data=kept, size_bytes=size)


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


def json_arguments(raw: Any) -> Any:
    """A tool call's arguments as a log gives them: a JSON string is decoded; one that is not
    JSON, and any other value, is kept as it is."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw
