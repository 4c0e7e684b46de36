"""Reading an upload within caps: the one place where a .zip or a .gz is expanded.

Every way in (the upload API and form, `manage.py upload_trajectory`, `python -m transcripts`,
`parse_path` and `parse_bytes`) comes through `unpack`. An archive is expanded as a stream, in
chunks, and every cap is checked as the bytes are produced. It is expanded twice: the first pass
keeps nothing and only measures, so a refused archive costs a chunk of memory, never the size
of a limit; the second pass reads into memory only an archive that the first one let through.
The sizes written in an archive's headers are the uploader's claims: they may refuse an entry
early, they never admit one.

`unpack_to` is the server's way in: it writes each file to a folder on disk in one pass, through
an optional transform of its chunks (the server redacts there), so an upload of hundreds of MB
is never whole in memory; a refused one costs at most the limit in disk, deleted by the caller.
"""

from __future__ import annotations

import gzip
import io
import posixpath
import stat
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from .errors import TranscriptFormatError
from .records import SourceFile

CHUNK_BYTES = 1 << 20
# A small entry may expand many times over (a file of blank lines) and harms no one.
RATIO_FLOOR_BYTES = 1 << 20
# zipfile turns the whole central directory into ZipInfo objects (about 500 bytes each) before
# anything can be counted: a forged directory of 46-byte entries would cost gigabytes. The
# directory it may read is bounded by this average per allowed entry (real entries: ~150 bytes).
DIRECTORY_BYTES_PER_MEMBER = 512
# zipfile decompresses bzip2 and lzma entries without a bound on the output of one call.
ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
SHOWN_NAME_CHARS = 120
_READ_ERRORS = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, zlib.error)


@dataclass(frozen=True)
class ArchiveLimits:
    """What one upload may hold. The server builds these from its ARENA_* settings."""

    max_total_bytes: int = 200 * 1024 * 1024  # all files as expanded; a plain file's size
    max_member_bytes: int = 200 * 1024 * 1024  # one entry as expanded
    max_ratio: int = 100  # expanded / compressed size of an entry; logs deflate about 10x
    max_members: int = 10_000
    max_name_chars: int = 1_024


DEFAULT_LIMITS = ArchiveLimits()


class ArchiveError(TranscriptFormatError):
    """An upload refused before parsing: over a cap, a bomb, unreadable or unsafe.

    The message names the archive (or file), the entry and the limit; `too_large` is true when
    a size cap refused it (a 413 rather than a 400 on the API).
    """

    def __init__(
        self, archive: str, message: str, *, member: str | None = None, too_large: bool = False
    ) -> None:
        where = f"{archive}:" if member is None else f"{archive}: entry {_shown(member)!r}"
        super().__init__(f"{where} {message}")
        self.archive = archive
        self.member = member
        self.too_large = too_large


def _shown(name: str) -> str:
    return name if len(name) <= SHOWN_NAME_CHARS else name[: SHOWN_NAME_CHARS - 3] + "..."


@dataclass
class Unpacked:
    """The files of an upload, and what it was: "zip" (a folder), "gzip" or None (plain)."""

    files: list[SourceFile]
    kind: str | None

    @property
    def folder(self) -> bool:
        return self.kind == "zip"


def archive_kind(head: bytes, name: str) -> str | None:
    """ "zip", "gzip" or None, from the file name's suffix or the first bytes."""
    lowered = name.lower()
    if lowered.endswith(".zip") or head.startswith(b"PK\x03\x04"):
        return "zip"
    if lowered.endswith(".gz") or head.startswith(b"\x1f\x8b"):
        return "gzip"
    return None


def unpack(source: BinaryIO, *, name: str, limits: ArchiveLimits = DEFAULT_LIMITS) -> Unpacked:
    """The files of an upload: a .zip's entries, a .gz's one file, or the file itself.

    `source` is a seekable binary file at its start; `name` is the upload's file name, used to
    spot the kind and in every message. Raises ArchiveError.
    """
    start = source.tell()
    head = source.read(4)
    source.seek(start)
    kind = archive_kind(head, name)
    if kind == "zip":
        return Unpacked(expand_zip(source, name=name, limits=limits), kind)
    if kind == "gzip":
        return Unpacked([expand_gzip(source, name=name, limits=limits)], kind)
    return Unpacked(
        [SourceFile(name, read_capped(source, name=name, max_bytes=limits.max_total_bytes))], kind
    )


# A transform of a file's chunks on their way to disk; it may join and split them as it likes.
ChunkTransform = Callable[[Iterable[bytes]], Iterable[bytes]]


def unpack_to(
    source: BinaryIO,
    folder: Path,
    *,
    name: str,
    limits: ArchiveLimits = DEFAULT_LIMITS,
    transform: ChunkTransform | None = None,
) -> Unpacked:
    """`unpack`, with each file written to `folder` (as `0`, `1`, ...: an entry's name never
    names a path) after `transform`, and read from there by the parsers (SourceFile.on_disk).

    The caps are checked on the bytes as expanded, before the transform. One pass: a refused
    upload leaves at most the limit's worth of files in `folder`, which the caller removes.
    """
    start = source.tell()
    head = source.read(4)
    source.seek(start)
    kind = archive_kind(head, name)
    sink = _FolderSink(folder, transform)
    if kind == "zip":
        expand_zip(source, name=name, limits=limits, sink=sink)
    elif kind == "gzip":
        expand_gzip(source, name=name, limits=limits, sink=sink)
    else:
        if source.seekable() and _remaining_bytes(source) > limits.max_total_bytes:
            raise _larger_than(name, limits.max_total_bytes)
        sink.write(name, _plain_chunks(source, name=name, max_bytes=limits.max_total_bytes))
    return Unpacked(sink.files, kind)


class _FolderSink:
    """Writes each expanded file to a file of its own in `folder`."""

    def __init__(self, folder: Path, transform: ChunkTransform | None) -> None:
        self.folder = folder
        self.transform = transform
        self.files: list[SourceFile] = []

    def write(self, member: str, chunks: Iterator[bytes]) -> int:
        """Write one file; returns the bytes produced (as expanded, before the transform)."""
        produced = 0

        def counted() -> Iterator[bytes]:
            nonlocal produced
            for chunk in chunks:
                produced += len(chunk)
                yield chunk

        path = self.folder / str(len(self.files))
        with path.open("wb") as out:
            for piece in (self.transform or _same)(counted()):
                out.write(piece)
        self.files.append(SourceFile.on_disk(member, path))
        return produced


def _same(chunks: Iterable[bytes]) -> Iterable[bytes]:
    return chunks


def _plain_chunks(source: BinaryIO, *, name: str, max_bytes: int) -> Iterator[bytes]:
    read = 0
    while chunk := source.read(CHUNK_BYTES):
        read += len(chunk)
        if read > max_bytes:
            raise _larger_than(name, max_bytes)
        yield chunk


def read_capped(source: BinaryIO, *, name: str, max_bytes: int) -> bytes:
    """A plain file's bytes, at most `max_bytes`: refused before reading where its size is
    known, and as it is read in any case (a file may grow, a stream may not say)."""
    if source.seekable() and _remaining_bytes(source) > max_bytes:
        raise _larger_than(name, max_bytes)
    out = io.BytesIO()
    while chunk := source.read(CHUNK_BYTES):
        if out.tell() + len(chunk) > max_bytes:
            raise _larger_than(name, max_bytes)
        out.write(chunk)
    return out.getvalue()


def _larger_than(name: str, max_bytes: int) -> ArchiveError:
    return ArchiveError(name, f"larger than the {max_bytes:,}-byte limit", too_large=True)


def _remaining_bytes(source: BinaryIO) -> int:
    start = source.tell()
    end = source.seek(0, io.SEEK_END)
    source.seek(start)
    return end - start


# -- the caps, checked on claims and on bytes produced -----------------------------------------


@dataclass(frozen=True)
class _Caps:
    """The caps on one entry; `room_bytes` is what is left of the archive's total."""

    archive: str
    member: str
    compressed_bytes: int
    room_bytes: int
    limits: ArchiveLimits

    def check(self, produced: int, *, verb: str = "expands") -> None:
        """Refuse once `produced` bytes (so far, or as declared) pass a cap."""
        limits = self.limits
        if produced > limits.max_member_bytes:
            self._refuse(f"{verb} past the {limits.max_member_bytes:,}-byte limit on one file")
        if produced > self.room_bytes:
            self._refuse(
                f"{verb} past the {limits.max_total_bytes:,}-byte limit on the whole archive"
            )
        if produced > max(limits.max_ratio * self.compressed_bytes, RATIO_FLOOR_BYTES):
            self._refuse(
                f"{verb} to more than {limits.max_ratio} times its compressed size of "
                f"{self.compressed_bytes:,} bytes (the limit on the expansion ratio)"
            )

    def _refuse(self, message: str) -> None:
        raise ArchiveError(self.archive, message, member=self.member, too_large=True)


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _capped(stream: _Readable, caps: _Caps) -> Iterator[bytes]:
    produced = 0
    while chunk := stream.read(CHUNK_BYTES):
        produced += len(chunk)
        caps.check(produced)
        yield chunk


def _drain(chunks: Iterator[bytes], *, keep: bool) -> tuple[int, bytes]:
    """(bytes produced, and the bytes themselves when `keep`, else b"")."""
    produced, out = 0, io.BytesIO()
    for chunk in chunks:
        produced += len(chunk)
        if keep:
            out.write(chunk)
    return produced, out.getvalue()


# -- .gz ---------------------------------------------------------------------------------------


def expand_gzip(
    source: BinaryIO, *, name: str, limits: ArchiveLimits, sink: _FolderSink | None = None
) -> SourceFile:
    """The one file of a .gz; its trailer's size is never read, only what the stream yields.
    With a `sink`, it is written there in one pass and the sink's file is returned."""
    start = source.tell()
    member = (name[:-3] if name.lower().endswith(".gz") else name) or "log.jsonl"
    caps = _Caps(name, member, _remaining_bytes(source), limits.max_total_bytes, limits)
    if sink is not None:
        sink.write(member, _gzip_chunks(source, caps))
        return sink.files[-1]
    data = b""
    for keep in (False, True):  # the first pass refuses, the second keeps (see the top)
        source.seek(start)
        data = _drain(_gzip_chunks(source, caps), keep=keep)[1]
    return SourceFile(member, data)


def _gzip_chunks(source: BinaryIO, caps: _Caps) -> Iterator[bytes]:
    try:
        with gzip.GzipFile(fileobj=source, mode="rb") as stream:
            yield from _capped(stream, caps)
    except ArchiveError:
        raise
    except (*_READ_ERRORS, ValueError) as exc:
        raise ArchiveError(caps.archive, f"not a readable gzip file ({exc})") from None


# -- .zip --------------------------------------------------------------------------------------


def expand_zip(
    source: BinaryIO, *, name: str, limits: ArchiveLimits, sink: _FolderSink | None = None
) -> list[SourceFile]:
    """A zipped folder's files, by their relative names (folders and `__MACOSX/` left out).
    With a `sink`, they are written there in one pass."""
    archive_bytes = _remaining_bytes(source)
    _check_directory(source, name=name, limits=limits)
    with _open_zip(source, name) as archive:
        entries = _entries(archive, name=name, limits=limits)
        _check_declared(entries, name=name, limits=limits, archive_bytes=archive_bytes)
        if sink is not None:
            _zip_write(
                archive, entries, name=name, limits=limits, archive_bytes=archive_bytes, sink=sink
            )
            return sink.files
        files: list[SourceFile] = []
        for keep in (False, True):  # the first pass refuses, the second keeps (see the top)
            files = _zip_pass(
                archive, entries, name=name, limits=limits, archive_bytes=archive_bytes, keep=keep
            )
    return files


def _check_directory(source: BinaryIO, *, name: str, limits: ArchiveLimits) -> None:
    """Refuse, from the end record alone, a directory too big to load (see
    DIRECTORY_BYTES_PER_MEMBER)."""
    # zipfile's own end-record reader is private, but has kept its name and shape since Python
    # 2; using it checks the very record zipfile goes on to trust, not our reading of it.
    start = source.tell()
    try:
        record = zipfile._EndRecData(source)  # type: ignore[attr-defined]
    except (OSError, struct.error) as exc:
        raise ArchiveError(name, f"not a readable zip file ({exc})") from None
    source.seek(start)
    if record is None:
        raise ArchiveError(name, "not a readable zip file (no end of central directory)")
    entries = record[zipfile._ECD_ENTRIES_TOTAL]  # type: ignore[attr-defined]
    directory_bytes = record[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    if entries > limits.max_members:
        raise _too_many(name, entries, limits)
    most_bytes = limits.max_members * DIRECTORY_BYTES_PER_MEMBER
    if directory_bytes > most_bytes:
        raise ArchiveError(
            name,
            f"has a {directory_bytes:,}-byte directory, more than the {most_bytes:,} bytes "
            f"allowed for the limit of {limits.max_members:,} entries",
        )


def _too_many(name: str, count: int, limits: ArchiveLimits) -> ArchiveError:
    return ArchiveError(
        name, f"has {count:,} entries, more than the limit of {limits.max_members:,}"
    )


def _open_zip(source: BinaryIO, name: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(source)
    except (*_READ_ERRORS, ValueError) as exc:
        raise ArchiveError(name, f"not a readable zip file ({exc})") from None


def _entries(
    archive: zipfile.ZipFile, *, name: str, limits: ArchiveLimits
) -> list[tuple[zipfile.ZipInfo, str]]:
    """The entries to read, each with its safe relative name; an error for any unsafe one."""
    infos = archive.infolist()
    if len(infos) > limits.max_members:
        raise _too_many(name, len(infos), limits)
    entries = []
    for info in infos:
        member = _member_name(info, name=name, limits=limits)
        if member is not None:
            entries.append((info, member))
    if not entries:
        raise ArchiveError(name, "the zip file holds no files")
    return entries


def _member_name(info: zipfile.ZipInfo, *, name: str, limits: ArchiveLimits) -> str | None:
    """The entry's safe relative name; None for folders; an error for anything dangerous."""
    raw = info.filename
    if info.is_dir() or raw.startswith("__MACOSX/"):
        return None

    def refuse(message: str) -> ArchiveError:
        return ArchiveError(name, message, member=raw)

    if len(raw) > limits.max_name_chars:
        raise refuse(f"has a name longer than the limit of {limits.max_name_chars:,} characters")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise refuse("is a symbolic link")
    if info.flag_bits & 0x1:
        raise refuse("is encrypted")
    if info.compress_type not in ZIP_METHODS:
        raise refuse(
            f"is compressed with method {info.compress_type}; only stored and deflated "
            "entries are read"
        )
    parts = raw.replace("\\", "/").split("/")
    if raw.startswith(("/", "\\")) or ":" in parts[0] or ".." in parts or "\x00" in raw:
        raise refuse("points outside the folder")
    return posixpath.normpath("/".join(p for p in parts if p not in ("", ".")))


def _entry_caps(
    info: zipfile.ZipInfo,
    member: str,
    *,
    name: str,
    limits: ArchiveLimits,
    room: int,
    archive_bytes: int,
) -> _Caps:
    # zipfile feeds an entry at most its compress_size bytes, and none past the archive's end:
    # an entry cannot expand from more input than that, whatever its headers claim.
    compressed = min(info.compress_size, archive_bytes)
    return _Caps(name, member, compressed, room, limits)


def _check_declared(
    entries: list[tuple[zipfile.ZipInfo, str]],
    *,
    name: str,
    limits: ArchiveLimits,
    archive_bytes: int,
) -> None:
    """Refuse on the headers' own claims, before expanding anything."""
    room = limits.max_total_bytes
    for info, member in entries:
        caps = _entry_caps(
            info, member, name=name, limits=limits, room=room, archive_bytes=archive_bytes
        )
        caps.check(info.file_size, verb="says it expands")
        room -= info.file_size


def _zip_pass(
    archive: zipfile.ZipFile,
    entries: list[tuple[zipfile.ZipInfo, str]],
    *,
    name: str,
    limits: ArchiveLimits,
    archive_bytes: int,
    keep: bool,
) -> list[SourceFile]:
    files = []
    room = limits.max_total_bytes
    for info, member in entries:
        caps = _entry_caps(
            info, member, name=name, limits=limits, room=room, archive_bytes=archive_bytes
        )
        produced, data = _drain(_zip_chunks(archive, info, caps), keep=keep)
        room -= produced
        files.append(SourceFile(member, data))
    return files


def _zip_write(
    archive: zipfile.ZipFile,
    entries: list[tuple[zipfile.ZipInfo, str]],
    *,
    name: str,
    limits: ArchiveLimits,
    archive_bytes: int,
    sink: _FolderSink,
) -> None:
    room = limits.max_total_bytes
    for info, member in entries:
        caps = _entry_caps(
            info, member, name=name, limits=limits, room=room, archive_bytes=archive_bytes
        )
        room -= sink.write(member, _zip_chunks(archive, info, caps))


def _zip_chunks(archive: zipfile.ZipFile, info: zipfile.ZipInfo, caps: _Caps) -> Iterator[bytes]:
    try:
        with archive.open(info) as stream:
            yield from _capped(stream, caps)
    except ArchiveError:
        raise
    except (*_READ_ERRORS, ValueError) as exc:
        raise ArchiveError(caps.archive, f"cannot be read ({exc})", member=caps.member) from None
