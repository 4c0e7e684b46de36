"""Writes of the transcripts app: importing an agent's log as a Trajectory.

An import is all or nothing: the upload is checked, unpacked, redacted and parsed first, its
bytes moving in chunks through a work folder of its own (spool.py); only then is the row saved
and are the two files moved into media, in one transaction, and the files are deleted again if
anything fails. What a killed process leaves behind is swept (trajectory_orphans_sweep).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.db import transaction

from transcript_formats import Transcript, TranscriptFormatError
from transcript_formats.archives import (
    CHUNK_BYTES,
    ArchiveError,
    ArchiveLimits,
    Unpacked,
    unpack_to,
)
from transcript_formats.counts import transcript_counts
from transcript_formats.detect import parse_files
from transcript_formats.disk_texts import texts_on_disk
from transcript_formats.records import SourceFile, first_byte
from transcript_formats.redact import redact_chunks, redact_text
from transcript_render import RunContext, export_to, renderer_version, write_transcript
from transcripts.models import Trajectory
from transcripts.selectors import trajectory_transcript
from transcripts.spool import (
    GZIP_LEVEL,
    OrphanReport,
    keep_fresh,
    media_name,
    orphans_sweep,
    place,
    work_folder,
    work_root,
    write_normalized_gz,
    write_raw_gz,
)

MALFORMED_KEPT = 50


class TrajectoryRejected(ValueError):
    """Bad input, with the field it concerns (`file`, `run`, `agent`, `task`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class TrajectoryTooLarge(TrajectoryRejected):
    def __init__(self, message: str) -> None:
        super().__init__("file", message)


class TrajectoryForbidden(TrajectoryRejected):
    """The account may not attach a log to this run, or upload under this agent."""


def trajectory_max_bytes() -> int:
    return int(settings.ARENA_TRAJECTORY_MAX_BYTES)


def trajectory_limits(*, max_bytes: int | None = None) -> ArchiveLimits:
    """What an upload may hold: ARENA_TRAJECTORY_MAX_BYTES as uploaded and as expanded (in all,
    and per file), and the ARENA_ARCHIVE_* caps on an archive's entries."""
    total = max_bytes if max_bytes is not None else trajectory_max_bytes()
    return ArchiveLimits(
        max_total_bytes=total,
        max_member_bytes=total,
        max_ratio=int(settings.ARENA_ARCHIVE_MAX_RATIO),
        max_members=int(settings.ARENA_ARCHIVE_MAX_MEMBERS),
    )


@dataclass
class Prepared:
    """A checked, redacted and parsed upload, ready to be written: its row, and its two files
    waiting gzipped in a work folder of its own (spool.py), removed by `discard()`.
    `examined` is what the caller's `examine` made of the parsed transcript."""

    row: Trajectory
    raw_gz: Path
    raw_name: str
    normalized_gz: Path
    folder: Path
    examined: Any = None

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def trajectory_import(
    *,
    data: bytes | None = None,
    path: Path | None = None,
    file: BinaryIO | None = None,
    filename: str = "",
    max_bytes: int | None = None,
    then: Callable[[Trajectory], object] | None = None,
) -> Trajectory:
    """Import one log (bytes, a path or a file; a single file, a .gz, or a folder as .zip).

    Secrets are redacted before anything is stored or parsed. `then` is called with the saved
    trajectory inside the same transaction (the caller attaches it to its own rows there).
    """
    prepared = trajectory_prepare(
        data=data, path=path, file=file, filename=filename, max_bytes=max_bytes
    )
    return trajectory_store(prepared, then=then)


def trajectory_store(
    prepared: Prepared, *, then: Callable[[Trajectory], object] | None = None
) -> Trajectory:
    """Write a prepared log: its row, then `then(trajectory)`, then its two files moved into
    media, in one transaction; the files are deleted again if anything fails, the commit
    included. The work folder goes in any case.

    The files are moved last, just before the commit, rather than after it (on_commit): a
    process killed in between then leaves files that no row names, which the orphan sweep
    removes, never a row whose files are missing. A move within one file system is a rename,
    so a file in media is always whole (spool.place).
    """
    placed: list[Path] = []
    try:
        with transaction.atomic():
            trajectory = prepared.row
            trajectory.raw_log.name = media_name(trajectory.raw_log, prepared.raw_name)
            trajectory.normalized.name = media_name(trajectory.normalized, "transcript.json.gz")
            trajectory.save()
            if then is not None:
                then(trajectory)
            placed.append(place(prepared.raw_gz, trajectory.raw_log.name))
            placed.append(place(prepared.normalized_gz, trajectory.normalized.name))
            return trajectory
    except BaseException:
        for file in placed:
            file.unlink(missing_ok=True)
        raise
    finally:
        prepared.discard()


def trajectory_prepare(
    *,
    data: bytes | None = None,
    path: Path | None = None,
    file: BinaryIO | None = None,
    filename: str = "",
    max_bytes: int | None = None,
    examine: Callable[[Transcript], Any] | None = None,
) -> Prepared:
    """Everything but the writing: size check, unpacking, redaction, parsing (no transaction).

    Give one of `data`, `path` (a file or a folder) and `file` (a seekable binary file, such as
    Django's uploaded file). The bytes move in chunks through a work folder under the app's
    temporary folder, never whole in memory: the upload is read in chunks and refused past a
    cap as it streams; archives are expanded by transcript_formats.archives to files there,
    redacted on the way; the parsers read those files line by line; both stored files are
    gzipped there as they are written. What stays in memory is the parsed transcript, which
    `examine` (the caller's: the kernel an agent wrote, say) reads before it is let go; what it
    raises refuses the upload.
    """
    limits = trajectory_limits(max_bytes=max_bytes)
    if path is not None and path.is_dir():
        filename = f"{path.name}.zip"
    filename = _safe_name(filename or (path.name if path else "") or "log.jsonl")
    folder = work_folder()
    stop_touching = keep_fresh(folder)
    try:
        opened = _upload_stream(
            data=data, path=path, file=file, filename=filename, limits=limits, folder=folder
        )
        with opened as upload:
            sha256, size_bytes = _fingerprint(
                upload, filename=filename, limit=limits.max_total_bytes
            )
            unpacked = _unpack(upload, filename=filename, limits=limits, folder=folder / "files")
        parse_name = _parse_name(unpacked, filename)
        raw_gz = write_raw_gz(unpacked, folder / "raw.gz")
        transcript = _parse(unpacked.files, parse_name, folder=folder)
        row = _trajectory_row(transcript, filename=filename, sha256=sha256, size_bytes=size_bytes)
        examined = examine(transcript) if examine is not None else None
        # Secrets written with JSON escapes in the raw log only show once parsed: redact again.
        normalized_gz = write_normalized_gz(transcript, folder / "normalized.json.gz")
        del transcript
        shutil.rmtree(folder / "files")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        stop_touching()
    return Prepared(
        row=row,
        raw_gz=raw_gz,
        raw_name=f"{parse_name}.gz",
        normalized_gz=normalized_gz,
        folder=folder,
        examined=examined,
    )


# -- an upload held for its uploader's confirmation --------------------------------------------

_HELD = "held.json"
_HANDLE = re.compile(r"import-[A-Za-z0-9_]{1,40}")
_ROW_FIELDS_LEFT = ("id", "raw_log", "normalized", "created_at")


def trajectory_hold(prepared: Prepared, *, note: dict[str, Any]) -> str:
    """Keep a prepared upload in its work folder, to be stored later (once its uploader has
    confirmed what was found in it): its row and the caller's JSON `note` are written beside
    its two files. The handle names the folder; held_max_age_s() after this, the upload is
    refused, and the orphan sweep removes the folder once ARENA_ORPHAN_MAX_AGE_S old."""
    row = {
        field.attname: getattr(prepared.row, field.attname)
        for field in Trajectory._meta.concrete_fields
        if field.attname not in _ROW_FIELDS_LEFT
    }
    document = {"row": row, "raw_name": prepared.raw_name, "note": note}
    (prepared.folder / _HELD).write_text(json.dumps(document), encoding="utf-8")
    return prepared.folder.name


def held_max_age_s() -> float:
    # Half the sweep's age: a held upload is taken back well before the sweep may remove it.
    return settings.ARENA_ORPHAN_MAX_AGE_S / 2


def trajectory_held_note(handle: str) -> tuple[Trajectory, dict[str, Any]] | None:
    """A held upload's row (unsaved) and note, read and left where it is; None where it is
    gone or expired."""
    folder = work_root() / handle
    if not _HANDLE.fullmatch(handle) or not (folder / _HELD).is_file():
        return None
    try:
        if time.time() - (folder / _HELD).stat().st_mtime > held_max_age_s():
            return None
        document = json.loads((folder / _HELD).read_text(encoding="utf-8"))
        return Trajectory(**document["row"]), document["note"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def trajectory_held(handle: str) -> tuple[Prepared, dict[str, Any]]:
    """Take back an upload held by trajectory_hold, with its note: once only (its folder is
    renamed away first, so a second take finds nothing). TrajectoryRejected where it is gone,
    never was, or is older than held_max_age_s(). The caller stores it or discards it."""
    gone = TrajectoryRejected("file", "this upload is no longer held: upload the log again")
    if not _HANDLE.fullmatch(handle):
        raise gone
    taken = work_root() / f"{handle}-taken"
    try:
        os.rename(work_root() / handle, taken)
    except OSError:
        raise gone from None
    prepared = Prepared(
        row=Trajectory(),
        raw_gz=taken / "raw.gz",
        raw_name="",
        normalized_gz=taken / "normalized.json.gz",
        folder=taken,
    )
    try:
        if time.time() - (taken / _HELD).stat().st_mtime > held_max_age_s():
            raise gone
        document = json.loads((taken / _HELD).read_text(encoding="utf-8"))
        os.utime(taken)  # young again: the sweep leaves it alone while it is stored
        prepared.row = Trajectory(**document["row"])
        prepared.raw_name = document["raw_name"]
        return prepared, document["note"]
    except (OSError, ValueError, KeyError, TypeError):
        prepared.discard()
        raise gone from None
    except BaseException:
        prepared.discard()
        raise


@contextmanager
def _upload_stream(
    *,
    data: bytes | None,
    path: Path | None,
    file: BinaryIO | None,
    filename: str,
    limits: ArchiveLimits,
    folder: Path,
) -> Iterator[BinaryIO]:
    """The upload as a seekable binary file at its start (a folder as an uncompressed zip)."""
    if sum(given is not None for given in (data, path, file)) != 1:
        raise ValueError("give exactly one of data, path and file")
    if file is not None:
        file.seek(0)
        yield file
    elif data is not None:
        yield io.BytesIO(data)
    elif path is not None and path.is_dir():
        zipped = folder / "folder.zip"
        _zip_folder(path, zipped, limit=limits.max_total_bytes, filename=filename)
        with zipped.open("rb") as stream:
            yield stream
    elif path is not None and path.is_file():
        with path.open("rb") as stream:
            yield stream
    else:
        raise TrajectoryRejected("file", f"{path}: no such file or folder")


def _fingerprint(upload: BinaryIO, *, filename: str, limit: int) -> tuple[str, int]:
    """The upload's sha256 and size, read in chunks and refused past `limit` as it streams."""
    digest, size = hashlib.sha256(), 0
    while chunk := upload.read(CHUNK_BYTES):
        size += len(chunk)
        if size > limit:
            raise TrajectoryTooLarge(f"{filename}: larger than the {limit:,}-byte limit")
        digest.update(chunk)
    if size == 0:
        raise TrajectoryRejected("file", f"{filename}: the file is empty")
    upload.seek(0)
    return digest.hexdigest(), size


def _zip_folder(path: Path, zipped: Path, *, limit: int, filename: str) -> None:
    """A folder (a session with its subagent files) as an uncompressed zip, like an upload."""
    # Links are left out: a folder's log must not pull in files from elsewhere on the host.
    files = sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    if sum(p.stat().st_size for p in files) > limit:
        raise TrajectoryTooLarge(f"{filename}: larger than the {limit:,}-byte limit")
    with zipfile.ZipFile(zipped, "w", compression=zipfile.ZIP_STORED) as archive:
        for member in files:
            archive.write(member, member.relative_to(path).as_posix())


def _unpack(upload: BinaryIO, *, filename: str, limits: ArchiveLimits, folder: Path) -> Unpacked:
    """The files of an upload, redacted, in `folder`, within `limits` (a size cap's refusal is
    a TrajectoryTooLarge)."""
    folder.mkdir()
    try:
        unpacked = unpack_to(upload, folder, name=filename, limits=limits, transform=redact_chunks)
    except ArchiveError as exc:
        if exc.too_large:
            raise TrajectoryTooLarge(str(exc)) from None
        raise TrajectoryRejected("file", str(exc)) from None
    if not unpacked.folder and not first_byte(unpacked.files[0]):
        raise TrajectoryRejected("file", f"{filename}: the file is empty")
    return unpacked


def _parse_name(unpacked: Unpacked, filename: str) -> str:
    """The name the parser sees and the raw log is stored under: a folder's is `<stem>.zip`."""
    if not unpacked.folder:
        return unpacked.files[0].name
    stem = filename[: -len(".zip")] if filename.lower().endswith(".zip") else filename
    return f"{stem}.zip"


def _parse(files: list[SourceFile], name: str, *, folder: Path) -> Transcript:
    try:
        with texts_on_disk(folder):
            return parse_files(files, name)
    except TranscriptFormatError as exc:
        raise TrajectoryRejected("file", str(exc)) from None
    except (UnicodeDecodeError, RecursionError) as exc:
        raise TrajectoryRejected("file", f"{name}: cannot be read as a log ({exc})") from None


def _trajectory_row(
    transcript: Transcript, *, filename: str, sha256: str, size_bytes: int
) -> Trajectory:
    counts = transcript_counts(transcript)
    usage = transcript.usage()
    return Trajectory(
        format=transcript.format[:40],
        filename=filename,
        sha256=sha256,
        size_bytes=size_bytes,
        event_count=counts.events,
        turn_count=counts.turns,
        tool_call_count=counts.tool_calls,
        file_change_count=counts.file_changes,
        subagent_count=max(len(transcript.threads) - 1, 0),
        malformed_line_count=len(transcript.malformed),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cost_usd=transcript.cost_usd,
        cost_computed=transcript.cost_computed,
        duration_s=transcript.duration_s,
        summary=_summary(transcript),
    )


def _summary(transcript: Transcript) -> dict[str, object]:
    return {
        "model": redact_text(transcript.model or ""),
        "cli_version": redact_text(transcript.cli_version or ""),
        "notes": [redact_text(note) for note in transcript.notes[:20]],
        "malformed_lines": [
            {"source": m.source, "line": m.line, "reason": redact_text(m.reason)}
            for m in transcript.malformed[:MALFORMED_KEPT]
        ],
    }


def _safe_name(name: str) -> str:
    """The upload's base name, cut to what a file name field and a storage path accept."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "".join(c for c in base if c.isprintable() and c not in '<>:"|?*').strip(". ")
    return cleaned[-120:] or "log.jsonl"


# -- orphans -----------------------------------------------------------------------------------


def trajectory_orphans_sweep(*, max_age_s: float) -> OrphanReport:
    """Remove what killed imports left behind, once older than `max_age_s`: uploads Django
    was receiving and import work folders in the app's temporary folder, half-moved files in
    media, media files of trajectories that no row names (a process killed between the move
    and the commit), and half-written rendered pages. A file of a live row is never touched."""
    return orphans_sweep(max_age_s=max_age_s, referenced=_referenced, page_folder=page_cache_dir())


def _referenced(names: list[str]) -> set[str]:
    """Which of these media names a trajectory row refers to."""
    found: set[str] = set()
    for field in ("raw_log", "normalized"):
        rows = Trajectory.objects.filter(**{f"{field}__in": names}).values_list(field, flat=True)
        found.update(rows)
    return found


# -- rendered pages ----------------------------------------------------------------------------


def transcript_page_html(
    *, trajectory: Trajectory, context: RunContext, title: str, export: bool = False
) -> bytes:
    """The transcript page (or, with `export`, the offline file) as UTF-8, rendered once.

    A rendered page is kept gzipped under DATA_DIR, named by a digest of all it depends on: the
    stored transcript, the renderer and the run context (verdict, solution, grader log, links).
    A new grading or a new renderer makes a new name, so nothing is ever served stale; the
    entries a trajectory no longer uses are deleted when its next page is written.
    """
    with trajectory.normalized.open("rb") as stored:
        normalized_sha256 = hashlib.sha256(stored.read()).hexdigest()
    prefix = f"{trajectory.pk}-{'export' if export else 'page'}-"
    key = json.dumps(
        [normalized_sha256, renderer_version(), title, dataclasses.asdict(context)],
        sort_keys=True,
        default=str,
    )
    path = page_cache_dir() / f"{prefix}{hashlib.sha256(key.encode()).hexdigest()[:40]}.html.gz"
    try:
        with gzip.open(path, "rb") as cached:
            return cached.read()
    except FileNotFoundError:
        pass
    page = _page_write(path, trajectory=trajectory, context=context, title=title, export=export)
    _page_prune(path, prefix=prefix)
    return page


def page_cache_dir() -> Path:
    return Path(settings.DATA_DIR) / "transcript-pages"


def _page_write(
    path: Path, *, trajectory: Trajectory, context: RunContext, title: str, export: bool
) -> bytes:
    """Render piece by piece into a temporary file, then move it in place in one step (two
    requests rendering the same page at once both write whole files; the last one stays).
    The page is read back through the file still open, which a concurrent prune cannot take."""
    transcript = trajectory_transcript(trajectory=trajectory)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "w+b") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL) as packed:
                out = io.TextIOWrapper(packed, encoding="utf-8", write_through=True)
                if export:
                    export_to(out, transcript, title=title, context=context)
                else:
                    write_transcript(out, transcript, context=context, title=title)
                out.detach()
            raw.flush()
            os.replace(temporary, path)
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
                return unpacked.read()
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _page_prune(current: Path, *, prefix: str) -> None:
    for stale in current.parent.glob(f"{prefix}*.html.gz"):
        if stale != current:
            stale.unlink(missing_ok=True)
