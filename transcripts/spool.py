"""Where an import's bytes wait on disk, and what a killed import leaves there.

Nothing of an upload is ever whole in memory, and nothing of it goes to the system's temporary
folder: Django writes an upload it receives to FILE_UPLOAD_TEMP_DIR (`$ARENA_DATA_DIR/tmp/
uploads`), and each import works in a folder of its own under `$ARENA_DATA_DIR/tmp/
trajectories`, where both stored files are gzipped as they are written. They reach media by a
rename (`place`), so a file in media is always whole. A process killed on the way leaves its
work behind in those two folders only, or, between the rename and the commit, files in media
that no row names; `orphans_sweep` removes all of it once it is older than
ARENA_ORPHAN_MAX_AGE_S.
"""

from __future__ import annotations

import errno
import gzip
import os
import secrets
import shutil
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from django.conf import settings
from django.core.files.storage import default_storage
from django.db.models.fields.files import FieldFile

from transcript_formats.archives import CHUNK_BYTES, Unpacked
from transcript_formats.redact import redact_text
from transcript_formats.schema import Transcript, transcript_json_pieces

# gzip level 1 compresses logs about 6x at several times the speed of the default level 9.
GZIP_LEVEL = 1
# The normalized transcript is redacted and compressed in batches of about this many characters.
NORMALIZED_BATCH_CHARS = 1 << 20
# A file copied into media from another file system is written under this suffix first.
PARTIAL_SUFFIX = ".partial"
# Media files of trajectories live under this folder (the models' upload_to).
MEDIA_FOLDER = "trajectories"
# A work folder in use is touched this often; ARENA_ORPHAN_MAX_AGE_S is at least 300.
FRESH_EVERY_S = 60


def temp_root() -> Path:
    return Path(settings.DATA_DIR) / "tmp"


def work_root() -> Path:
    return temp_root() / "trajectories"


def work_folder() -> Path:
    """A new folder for one import's files (private to this process)."""
    root = work_root()
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="import-", dir=root))


def keep_fresh(folder: Path, *, every_s: float = FRESH_EVERY_S) -> Callable[[], None]:
    """Touch `folder` every `every_s` until the returned function is called: the sweep judges
    a work folder by its last change, and a long parse changes nothing in it."""
    stop = threading.Event()

    def touch() -> None:
        while not stop.wait(every_s):
            try:
                os.utime(folder)
            except FileNotFoundError:
                return

    threading.Thread(target=touch, name="import-fresh", daemon=True).start()
    return stop.set


# -- writing -----------------------------------------------------------------------------------


def write_raw_gz(unpacked: Unpacked, path: Path) -> Path:
    """The redacted log gzipped into `path`: the file itself, or a folder's files as an
    uncompressed zip (deflating inside the gzip would only cost time)."""
    with (
        path.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL) as packed,
    ):
        if not unpacked.folder:
            _copy(unpacked.files[0].open(), packed)
            return path
        with zipfile.ZipFile(_AppendOnly(packed), "w", compression=zipfile.ZIP_STORED) as archive:
            for file in unpacked.files:
                big = file.size() > zipfile.ZIP64_LIMIT
                with archive.open(file.name, "w", force_zip64=big) as entry:
                    _copy(file.open(), entry)
    return path


def _copy(source: IO[bytes], out: IO[bytes]) -> None:
    with source:
        while chunk := source.read(CHUNK_BYTES):
            out.write(chunk)


class _AppendOnly:
    """A gzip stream as zipfile sees it: no seeking back, so each entry's sizes follow it in a
    data descriptor instead of being patched into its header."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._written = 0

    def write(self, data: bytes) -> int:
        self._written += len(data)
        return self._stream.write(data)

    def tell(self) -> int:
        return self._written

    def flush(self) -> None:
        self._stream.flush()


def write_normalized_gz(transcript: Transcript, path: Path) -> Path:
    """The transcript as JSON gzipped into `path`, encoded an event at a time and redacted a
    batch at a time (a piece boundary never falls inside a string, so no secret is split)."""
    with gzip.open(path, "wb", compresslevel=GZIP_LEVEL) as out:
        for batch in _batches(transcript_json_pieces(transcript)):
            out.write(redact_text(batch).encode("utf-8"))
    return path


def _batches(pieces: Iterable[str]) -> Iterable[str]:
    held: list[str] = []
    size = 0
    for piece in pieces:
        held.append(piece)
        size += len(piece)
        if size >= NORMALIZED_BATCH_CHARS:
            yield "".join(held)
            held, size = [], 0
    if held:
        yield "".join(held)


# -- into media --------------------------------------------------------------------------------


def media_name(field_file: FieldFile, filename: str) -> str:
    """A new name in media for a file of `field_file`'s field, unique by a random prefix."""
    field = field_file.field
    name = field.generate_filename(field_file.instance, f"{secrets.token_hex(4)}-{filename}")
    return default_storage.get_available_name(name, max_length=field.max_length)


def place(temporary: Path, name: str) -> Path:
    """Move a finished file into media under `name`: a rename on one file system; across two,
    a copy under `<name>.partial` renamed when whole. Returns the file's path in media."""
    final = Path(default_storage.path(name))
    final.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(temporary, settings.FILE_UPLOAD_PERMISSIONS or 0o644)
    try:
        os.replace(temporary, final)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        partial = final.with_name(final.name + PARTIAL_SUFFIX)
        try:
            shutil.copyfile(temporary, partial)
            os.replace(partial, final)
        finally:
            partial.unlink(missing_ok=True)
    return final


# -- orphans -----------------------------------------------------------------------------------


@dataclass
class OrphanReport:
    temporary: int = 0  # uploads being received and import work folders
    partial: int = 0  # half-copied files in media
    unreferenced: int = 0  # media files no row names
    pages: int = 0  # half-written rendered pages
    bytes_freed: int = 0


def orphans_sweep(
    *, max_age_s: float, referenced: Callable[[list[str]], set[str]], page_folder: Path
) -> OrphanReport:
    """Remove the leftovers older than `max_age_s` (by their last change). `referenced` says
    which of some media names a row refers to; what it names is never removed."""
    cutoff = time.time() - max_age_s
    report = OrphanReport()
    for folder in (Path(settings.FILE_UPLOAD_TEMP_DIR), work_root()):
        for entry in _entries(folder):
            if _older(entry, cutoff):
                report.temporary += 1
                report.bytes_freed += _remove(entry)
    root = Path(default_storage.path(""))
    for directory, files in _media_folders(root / MEDIA_FOLDER):
        names = {
            (directory / name).relative_to(root).as_posix(): directory / name for name in files
        }
        _sweep_media(names, cutoff=cutoff, referenced=referenced, report=report)
    for entry in _entries(page_folder):
        if entry.name.endswith(".tmp") and _older(entry, cutoff):
            report.pages += 1
            report.bytes_freed += _remove(entry)
    return report


def _sweep_media(
    files: dict[str, Path],
    *,
    cutoff: float,
    referenced: Callable[[list[str]], set[str]],
    report: OrphanReport,
) -> None:
    """One media folder's files, by their names in media."""
    old = {name: path for name, path in files.items() if _older(path, cutoff)}
    whole: dict[str, Path] = {}
    for name, path in old.items():
        if name.endswith(PARTIAL_SUFFIX):
            report.partial += 1
            report.bytes_freed += _remove(path)
        else:
            whole[name] = path
    if not whole:
        return
    names = list(whole)
    kept: set[str] = set()
    for start in range(0, len(names), 500):  # a bounded IN (...) per query
        kept |= referenced(names[start : start + 500])
    for name, path in whole.items():
        if name not in kept:
            report.unreferenced += 1
            report.bytes_freed += _remove(path)


def _media_folders(media: Path) -> Iterable[tuple[Path, list[str]]]:
    if not media.is_dir():
        return
    for directory, _, files in os.walk(media):
        if files:
            yield Path(directory), sorted(files)


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except FileNotFoundError:
        return []


def _older(path: Path, cutoff: float) -> bool:
    try:
        return path.lstat().st_mtime < cutoff
    except FileNotFoundError:
        return False


def _remove(path: Path) -> int:
    """Remove a file or a folder; returns the bytes it held (0 if it was already gone)."""
    try:
        if path.is_dir() and not path.is_symlink():
            size = sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir())
            shutil.rmtree(path, ignore_errors=True)
            return size
        size = path.lstat().st_size
        path.unlink()
        return size
    except FileNotFoundError:
        return 0
