"""Long texts of a parse held on disk, not in memory.

A log's tool outputs, diffs and reasoning are most of its bytes; a transcript that held them all
would cost more memory than the log itself. While `texts_on_disk(folder)` is in force, every
Event's text, diff or raw record and every Image's data of LONG_TEXT_MIN_CHARS or more is
written to an unnamed file in `folder` as the event is made, and the event holds a DiskText in
its place: it reads like the str it stands for (len, in, ==, +, str's methods) and a copy of it
(`dataclasses.asdict`, so `Transcript.to_dict()` and the JSON written) is that str. The file has
no name from the start, so a process killed mid-parse leaves nothing behind.
"""

from __future__ import annotations

import contextvars
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

# A text at least this long may be held on disk: a DiskText (about 80 bytes) costs less than
# the str it stands for from here on.
LONG_TEXT_MIN_CHARS = 128


class DiskText:
    """A str kept elsewhere and read again (`__str__`) each time it is used."""

    __slots__ = ("_length",)

    def __init__(self, length: int) -> None:
        self._length = length

    def __str__(self) -> str:
        raise NotImplementedError

    def __len__(self) -> int:
        return self._length

    def __contains__(self, item: str) -> bool:
        return item in str(self)

    def __eq__(self, other: object) -> bool:
        return str(self) == (str(other) if isinstance(other, DiskText) else other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __add__(self, other: str) -> str:
        return str(self) + str(other)

    def __radd__(self, other: str) -> str:
        return str(other) + str(self)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(str(self), name)

    def __copy__(self) -> str:
        return str(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> str:
        return str(self)


class TextSpill:
    """An append-only unnamed file of texts, each read back by its place."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        # Open for as long as a text read from it is held; closed when the last one goes.
        self._file = tempfile.TemporaryFile(dir=folder, buffering=0)  # noqa: SIM115
        self._end = 0

    def keep(self, text: str) -> str:
        """`text` written to the file; what stands for it, typed str, which it reads like."""
        data = text.encode("utf-8", "surrogatepass")
        offset = self._end
        self._end += os.pwrite(self._file.fileno(), data, offset)
        return cast(str, SpilledText(self, offset, len(data), len(text)))

    def read(self, offset: int, size: int) -> str:
        return os.pread(self._file.fileno(), size, offset).decode("utf-8", "surrogatepass")


class SpilledText(DiskText):
    """Its place in the spill file as one int (offset and size; an upload holds hundreds of
    thousands of these, and every int above 256 is an object of its own), its length in
    characters only where it differs from its size in bytes (not ASCII)."""

    __slots__ = ("_place", "_spill")

    _SIZE_BITS = 40

    def __init__(self, spill: TextSpill, offset: int, size: int, length: int) -> None:
        super().__init__(length)
        if length == size:
            self._length = None  # type: ignore[assignment]
        self._spill, self._place = spill, offset << self._SIZE_BITS | size

    def __len__(self) -> int:
        return self._length if self._length is not None else self._size()

    def _size(self) -> int:
        return self._place & ((1 << self._SIZE_BITS) - 1)

    def __str__(self) -> str:
        return self._spill.read(self._place >> self._SIZE_BITS, self._size())

    def __repr__(self) -> str:
        return f"SpilledText({self._place >> self._SIZE_BITS}, {self._size()})"


_SPILL: contextvars.ContextVar[TextSpill | None] = contextvars.ContextVar(
    "transcripts_text_spill", default=None
)


@contextmanager
def texts_on_disk(folder: str | os.PathLike[str]) -> Iterator[TextSpill]:
    """Events and images made inside hold their long texts in a file in `folder`; the texts
    stay readable after, for as long as anything holds them."""
    spill = TextSpill(folder)
    token = _SPILL.set(spill)
    try:
        yield spill
    finally:
        _SPILL.reset(token)


def held(value: Any) -> Any:
    """`value`, or, for a long str while texts_on_disk is in force, what stands for it."""
    if type(value) is not str or len(value) < LONG_TEXT_MIN_CHARS:
        return value
    spill = _SPILL.get()
    return value if spill is None else spill.keep(value)


def held_inside(value: Any) -> Any:
    """`value` (parsed JSON) with each long str inside it held as `held` holds one; the same
    object where nothing in it is held."""
    spill = _SPILL.get()
    return value if spill is None else _hold(value, spill)


def _hold(value: Any, spill: TextSpill) -> Any:
    if type(value) is str:
        return spill.keep(value) if len(value) >= LONG_TEXT_MIN_CHARS else value
    if type(value) is dict:
        kept = {key: _hold(item, spill) for key, item in value.items()}
        changed = any(a is not b for a, b in zip(kept.values(), value.values(), strict=True))
        return kept if changed else value
    if type(value) is list:
        items = [_hold(item, spill) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def read_back(value: Any) -> Any:
    """What held_inside (or held) made of a value, as it was: the same object where nothing in
    it waits on disk."""
    if isinstance(value, DiskText):
        return str(value)
    if type(value) is dict:
        read = {key: read_back(item) for key, item in value.items()}
        changed = any(a is not b for a, b in zip(read.values(), value.values(), strict=True))
        return read if changed else value
    if type(value) is list:
        items = [read_back(item) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def plain_str(value: Any) -> Any:
    """`value`, a DiskText read back into the str it stands for (for what needs a real str:
    a regex, a str's own type check)."""
    return str(value) if isinstance(value, DiskText) else value
