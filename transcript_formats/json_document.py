"""A log that is one JSON document, read without holding it whole.

`json.loads` of a 200 MB document holds the bytes and every decoded value at once, about 3.4
times the file. A document on disk of STREAM_MIN_BYTES or more is read here instead, a block at
a time: the members of its top-level object are decoded one by one, and an array (the top
level, or a member's value of KEEP_ARRAY_BYTES or more) becomes a StreamedArray, whose items
are decoded one at a time each time it is iterated. What a parser keeps of each item is its own
affair (long texts wait on disk: disk_texts).

Each value is decoded by `json` itself (`raw_decode`), so a document read here gives what
`json.loads` gives, and one that json refuses raises a ValueError here too (its message names
the byte where the value began).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # records reads documents through this module
    from .records import SourceFile

# A document (and, inside it, an array) at least this big is streamed.
STREAM_MIN_BYTES = 8 << 20
# In a streamed document, an array under this size is decoded whole (a list, as json gives).
KEEP_ARRAY_BYTES = 1 << 20
# Read this much at a time (twice what is held, while one value is longer).
READ_BYTES = 1 << 20
# An error this close to the end of what is held may only mean that the value goes on.
_CUT_SLACK_CHARS = 32

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class LazyList(list):  # type: ignore[type-arg]
    """Items made again, one at a time, each time it is iterated; nothing is held.

    It is a list to the parsers' `isinstance` checks: read it by iterating (`for`,
    `enumerate`, `any`, a comprehension), `len` and truth, never by index.
    """

    def __init__(self, items: Callable[[], Iterator[Any]]) -> None:
        super().__init__()
        self._items = items
        self._length: int | None = None

    def __iter__(self) -> Iterator[Any]:
        return self._items()

    def __len__(self) -> int:
        if self._length is None:
            self._length = sum(1 for _ in self)
        return self._length

    def __bool__(self) -> bool:
        return next(iter(self), _END) is not _END

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def where(self, keep: Callable[[Any], bool]) -> LazyList:
        """The items for which `keep` is true, made as lazily."""
        return LazyList(lambda: (item for item in self if keep(item)))


class StreamedArray(LazyList):
    """A JSON array in a file, its items decoded one at a time each time it is iterated."""

    def __init__(self, source: SourceFile, offset: int) -> None:
        super().__init__(lambda: _Reader(source, offset).items())
        self._source, self._offset = source, offset

    def __repr__(self) -> str:
        return f"StreamedArray({self._source.name!r}, at byte {self._offset})"


_END = object()


def load_document(source: SourceFile, *, stream_min_bytes: int | None = None) -> Any:
    """The file's one JSON document, as json.loads gives it, except that in a big file on
    disk the big arrays (the top level, or a value of the top-level object) are
    StreamedArrays. ValueError where the file is not one JSON document."""
    least = STREAM_MIN_BYTES if stream_min_bytes is None else stream_min_bytes
    if source.on_disk_path is None or source.size() < least or source.head(3) == codecs.BOM_UTF8:
        return json.loads(source.data)
    reader = _Reader(source, 0)
    head = reader.peek()
    if head == "[":
        document: Any = StreamedArray(source, reader.offset())
        for _ in reader.items():  # refused here, not later by whoever iterates it
            pass
    elif head == "{":
        document = _object(reader, source, least)
    else:
        document = reader.value()
    reader.at_end()
    return document


def _object(reader: _Reader, source: SourceFile, least: int) -> dict[str, Any]:
    """The members of the top-level object, its big arrays left in the file."""
    document: dict[str, Any] = {}
    reader.expect("{")
    if reader.peek() == "}":
        reader.expect("}")
        return document
    while True:
        where = reader.offset()
        key = reader.value()
        if not isinstance(key, str):
            raise ValueError(f"{source.name}: a key that is not a string at byte {where}")
        reader.expect(":")
        if reader.peek() == "[":
            start = reader.offset()
            kept = reader.array(keep_below=min(least, KEEP_ARRAY_BYTES))
            document[key] = kept if kept is not None else StreamedArray(source, start)
        else:
            document[key] = reader.value()
        if reader.peek() == "}":
            reader.expect("}")
            return document
        reader.expect(",")


class _Reader:
    """The file from a byte offset on, as text decoded a block at a time."""

    def __init__(self, source: SourceFile, offset: int) -> None:
        self._source = source
        self._stream = source.open()
        self._stream.seek(offset)
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
        self._text, self._at = "", 0
        self._dropped_bytes = offset  # bytes of the file before `_text`
        self._ended = False

    def offset(self) -> int:
        """The byte offset of the next character."""
        return self._dropped_bytes + len(self._text[: self._at].encode("utf-8", "surrogatepass"))

    def _more(self, at_least: int = READ_BYTES) -> bool:
        if self._at:
            self._dropped_bytes = self.offset()
            self._text, self._at = self._text[self._at :], 0
        data = self._stream.read(max(at_least, READ_BYTES))
        if not data:
            self._ended = True
            self._text += self._decoder.decode(b"", final=True)
            self._stream.close()
            return False
        self._text += self._decoder.decode(data)
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end), not taken."""
        while True:
            end = _SPACE.match(self._text, self._at)
            self._at = end.end() if end else self._at
            if self._at < len(self._text):
                return self._text[self._at]
            if self._ended or not self._more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise ValueError(
                f"{self._source.name}: expected {char!r} at byte {self.offset()}, "
                f"found {self.peek()[:1]!r}"
            )
        self._at += 1

    def value(self) -> Any:
        """The next JSON value, decoded whole."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self._text, self._at)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(self._text) - _CUT_SLACK_CHARS or exc.msg.startswith(
                    "Unterminated string"
                )
                if cut and not self._ended and self._more(len(self._text)):
                    continue
                raise ValueError(
                    f"{self._source.name}: {exc.msg} in the value at byte {self.offset()}"
                ) from None
            # A value that ends where the text held ends (a number, say) may go on.
            if end >= len(self._text) and not self._ended and self._more(len(self._text)):
                continue
            self._at = end
            return value

    def items(self) -> Iterator[Any]:
        """The items of the array that starts here, one at a time."""
        self.expect("[")
        if self.peek() == "]":
            self._at += 1
            return
        while True:
            yield self.value()
            if self.peek() == "]":
                self._at += 1
                return
            self.expect(",")

    def array(self, *, keep_below: int) -> list[Any] | None:
        """Read the array that starts here: its items where it is under `keep_below` bytes,
        else None."""
        start = self.offset()
        kept: list[Any] | None = []
        for item in self.items():
            if kept is not None:
                kept.append(item)
                if self._dropped_bytes - start >= keep_below:
                    kept = None
        if kept is not None and self.offset() - start >= keep_below:
            kept = None
        return kept

    def at_end(self) -> None:
        if self.peek() != "":
            raise ValueError(f"{self._source.name}: extra data at byte {self.offset()}")
