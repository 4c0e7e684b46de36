"""Writes of the transcripts app: importing an agent's log as a Trajectory.

An import is all or nothing: the upload is checked, unpacked, redacted and parsed in memory
first; only then are the two files written and the rows saved in one transaction, and the files
are deleted again if anything after their writing fails.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import os
import posixpath
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from tasks.models import Task
from tasks.selectors import task_get_active
from transcripts.formats import Transcript, TranscriptFormatError, parse_bytes
from transcripts.formats.redact import redact_bytes, redact_text
from transcripts.models import Trajectory
from transcripts.render import RunContext, export_to, renderer_version, write_transcript
from transcripts.selectors import trajectory_transcript

if TYPE_CHECKING:
    from arena.models import Run

MAX_ZIP_MEMBERS = 10_000
# gzip level 1 compresses logs about 6x at several times the speed of the default level 9.
GZIP_LEVEL = 1
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


@dataclass
class Unpacked:
    files: list[tuple[str, bytes]]  # (relative name, content)
    folder: bool  # a zipped folder, stored and parsed as a zip


def trajectory_max_bytes() -> int:
    return int(settings.ARENA_TRAJECTORY_MAX_BYTES)


@dataclass
class Prepared:
    """A checked, redacted and parsed upload, ready to be written."""

    row: Trajectory
    raw_gz: bytes
    raw_name: str
    normalized_gz: bytes


def trajectory_import(
    *,
    data: bytes | None = None,
    path: Path | None = None,
    filename: str = "",
    run: Run | None = None,
    max_bytes: int | None = None,
) -> Trajectory:
    """Import one log (bytes or a file; a single file, a .gz, or a folder as .zip).

    Secrets are redacted before anything is stored or parsed. With `run`, the run's usage
    columns are set from the log and the trajectory is attached to it.
    """
    if run is not None and run.trajectory_id is not None:
        raise TrajectoryRejected("run", f"run {run.pk} already has a trajectory")
    prepared = trajectory_prepare(data=data, path=path, filename=filename, max_bytes=max_bytes)
    written: list[str] = []
    try:
        with transaction.atomic():
            return _write(prepared, run=run, written=written)
    except BaseException:
        _delete(written)
        raise


def trajectory_prepare(
    *,
    data: bytes | None = None,
    path: Path | None = None,
    filename: str = "",
    max_bytes: int | None = None,
) -> Prepared:
    """Everything but the writing: size check, unpacking, redaction, parsing (no transaction)."""
    limit = max_bytes if max_bytes is not None else trajectory_max_bytes()
    if path is not None and path.is_dir():
        filename = f"{path.name}.zip"
    filename = _safe_name(filename or (path.name if path else "") or "log.jsonl")
    upload = _read_upload(data=data, path=path, limit=limit, filename=filename)
    stored_raw, parse_name = _pack(unpack(upload, filename=filename, limit=limit), filename)
    transcript = _parse(stored_raw, parse_name)
    # Secrets written with JSON escapes in the raw log only show once parsed: redact again.
    normalized = redact_text(json.dumps(transcript.to_dict(), ensure_ascii=False, default=str))
    return Prepared(
        row=_trajectory_row(transcript, filename=filename, upload=upload),
        raw_gz=gzip.compress(stored_raw, compresslevel=GZIP_LEVEL),
        raw_name=f"{parse_name}.gz",
        normalized_gz=gzip.compress(normalized.encode("utf-8"), compresslevel=GZIP_LEVEL),
    )


def _read_upload(*, data: bytes | None, path: Path | None, limit: int, filename: str) -> bytes:
    if (data is None) == (path is None):
        raise ValueError("give exactly one of data and path")
    if path is not None:
        data = _read_path(path, limit=limit, filename=filename)
    assert data is not None
    if len(data) > limit:
        raise TrajectoryTooLarge(f"{filename}: larger than the {limit:,}-byte limit")
    if not data.strip():
        raise TrajectoryRejected("file", f"{filename}: the file is empty")
    return data


def _read_path(path: Path, *, limit: int, filename: str) -> bytes:
    """A file's bytes; a folder (a session with its subagent files) as an uncompressed zip."""
    if path.is_file():
        if path.stat().st_size > limit:
            raise TrajectoryTooLarge(f"{filename}: larger than the {limit:,}-byte limit")
        return path.read_bytes()
    if not path.is_dir():
        raise TrajectoryRejected("file", f"{path}: no such file or folder")
    # Links are left out: a folder's log must not pull in files from elsewhere on the host.
    files = sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    if sum(p.stat().st_size for p in files) > limit:
        raise TrajectoryTooLarge(f"{filename}: larger than the {limit:,}-byte limit")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for member in files:
            archive.write(member, member.relative_to(path).as_posix())
    return buffer.getvalue()


def unpack(data: bytes, *, filename: str, limit: int) -> Unpacked:
    """The files of an upload; a .zip or .gz expands to at most `limit` bytes in all."""
    if filename.lower().endswith(".zip") or data[:4] == b"PK\x03\x04":
        return Unpacked(_unzip(data, filename=filename, limit=limit), folder=True)
    if filename.lower().endswith(".gz") or data[:2] == b"\x1f\x8b":
        inner = _gunzip(data, filename=filename, limit=limit)
        return Unpacked([(filename.removesuffix(".gz") or "log.jsonl", inner)], folder=False)
    return Unpacked([(filename, data)], folder=False)


def _gunzip(data: bytes, *, filename: str, limit: int) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(limit + 1)  # never more than the limit, however it was packed
    except (OSError, EOFError) as exc:
        raise TrajectoryRejected("file", f"{filename}: not a readable gzip file ({exc})") from None
    if len(out) > limit:
        raise TrajectoryTooLarge(f"{filename}: expands past the {limit:,}-byte limit")
    return out


def _unzip(data: bytes, *, filename: str, limit: int) -> list[tuple[str, bytes]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise TrajectoryRejected("file", f"{filename}: not a readable zip file ({exc})") from None
    if len(members) > MAX_ZIP_MEMBERS:
        raise TrajectoryRejected("file", f"{filename}: more than {MAX_ZIP_MEMBERS} entries")
    files: list[tuple[str, bytes]] = []
    total = 0
    for info in members:
        name = _member_name(info, filename)
        if name is None:
            continue
        content = _read_member(archive, info, filename=filename, budget=limit - total)
        total += len(content)
        files.append((name, content))
    if not files:
        raise TrajectoryRejected("file", f"{filename}: the zip file holds no files")
    return files


def _member_name(info: zipfile.ZipInfo, filename: str) -> str | None:
    """The member's safe relative name; None for folders; an error for anything dangerous."""
    raw = info.filename
    if info.is_dir() or raw.startswith("__MACOSX/"):
        return None
    where = f"{filename}: entry {raw!r}"
    if stat.S_ISLNK(info.external_attr >> 16):
        raise TrajectoryRejected("file", f"{where} is a symbolic link")
    if info.flag_bits & 0x1:
        raise TrajectoryRejected("file", f"{where} is encrypted")
    parts = raw.replace("\\", "/").split("/")
    if raw.startswith(("/", "\\")) or ":" in parts[0] or ".." in parts or "\x00" in raw:
        raise TrajectoryRejected("file", f"{where} points outside the folder")
    return posixpath.normpath("/".join(p for p in parts if p not in ("", ".")))


def _read_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, *, filename: str, budget: int
) -> bytes:
    # The sizes in a zip's directory are the uploader's claim; the read is capped regardless.
    if info.file_size > budget:
        raise TrajectoryTooLarge(f"{filename}: expands past the size limit")
    try:
        with archive.open(info) as stream:
            content = stream.read(budget + 1)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError) as exc:
        raise TrajectoryRejected(
            "file", f"{filename}: entry {info.filename!r} cannot be read ({exc})"
        ) from None
    if len(content) > budget:
        raise TrajectoryTooLarge(f"{filename}: expands past the size limit")
    return content


def _pack(unpacked: Unpacked, filename: str) -> tuple[bytes, str]:
    """The redacted log as one blob, and the name the parser should see it under."""
    redacted = [(name, redact_bytes(content)) for name, content in unpacked.files]
    if not unpacked.folder:
        return redacted[0][1], redacted[0][0]
    buffer = io.BytesIO()
    # Stored, not deflated: the blob is gzipped as a whole afterwards.
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, content in redacted:
            archive.writestr(name, content)
    stem = filename[: -len(".zip")] if filename.lower().endswith(".zip") else filename
    return buffer.getvalue(), f"{stem}.zip"


def _parse(blob: bytes, name: str) -> Transcript:
    try:
        return parse_bytes(blob, name)
    except TranscriptFormatError as exc:
        raise TrajectoryRejected("file", str(exc)) from None
    except (UnicodeDecodeError, RecursionError) as exc:
        raise TrajectoryRejected("file", f"{name}: cannot be read as a log ({exc})") from None


def _trajectory_row(transcript: Transcript, *, filename: str, upload: bytes) -> Trajectory:
    events = transcript.events()
    usage = transcript.usage()
    return Trajectory(
        format=transcript.format[:40],
        filename=filename,
        sha256=hashlib.sha256(upload).hexdigest(),
        size_bytes=len(upload),
        event_count=len(events),
        turn_count=sum(len(thread.turns) for thread in transcript.threads),
        tool_call_count=sum(e.kind == "tool_call" for e in events),
        file_change_count=sum(e.kind == "file_change" for e in events),
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
        "notes": [redact_text(note) for note in transcript.notes[:20]],
        "malformed_lines": [
            {"source": m.source, "line": m.line, "reason": redact_text(m.reason)}
            for m in transcript.malformed[:MALFORMED_KEPT]
        ],
    }


def _write(prepared: Prepared, *, run: Run | None, written: list[str]) -> Trajectory:
    """Inside the caller's transaction; `written` collects the files for its clean-up."""
    trajectory = prepared.row
    trajectory.raw_log.save(prepared.raw_name, ContentFile(prepared.raw_gz), save=False)
    written.append(trajectory.raw_log.name)
    trajectory.normalized.save(
        "transcript.json.gz", ContentFile(prepared.normalized_gz), save=False
    )
    written.append(trajectory.normalized.name)
    trajectory.save()
    if run is not None:
        _run_attach(run, trajectory)
    return trajectory


def _delete(names: list[str]) -> None:
    for name in names:
        default_storage.delete(name)


def _run_attach(run: Run, trajectory: Trajectory) -> None:
    """The run's spend is what its trajectory says it spent."""
    run.trajectory = trajectory
    run.input_tokens = trajectory.input_tokens
    run.output_tokens = trajectory.output_tokens
    run.cache_read_tokens = trajectory.cache_read_tokens
    run.cache_write_tokens = trajectory.cache_write_tokens
    run.cost_usd = trajectory.cost_usd
    run.cost_computed = trajectory.cost_computed
    fields = ["trajectory", "input_tokens", "output_tokens", "cache_read_tokens"]
    fields += ["cache_write_tokens", "cost_usd", "cost_computed"]
    if trajectory.duration_s is not None:
        run.duration_s = trajectory.duration_s
        fields.append("duration_s")
    run.save(update_fields=fields)


def _safe_name(name: str) -> str:
    """The upload's base name, cut to what a file name field and a storage path accept."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "".join(c for c in base if c.isprintable() and c not in '<>:"|?*').strip(". ")
    return cleaned[-120:] or "log.jsonl"


def trajectory_upload(
    *,
    data: bytes | None = None,
    path: Path | None = None,
    filename: str = "",
    run_id: int | None = None,
    agent_slug: str = "",
    task_slug: str = "",
    max_bytes: int | None = None,
) -> Trajectory:
    """An upload for an existing run, or for a new run of an agent on a task (no submission).

    The new run and the trajectory are created together or not at all.
    """
    # Runs belong to the arena app, a layer above this one; it is imported here, at the one
    # place where an upload names a run, so that the transcripts app stays importable alone.
    from arena.models import Run

    if run_id is not None and (agent_slug or task_slug):
        raise TrajectoryRejected("run", "give either a run id or an agent and a task, not both")
    if run_id is None:
        task = _task_for_new_run(agent_slug=agent_slug, task_slug=task_slug)
    elif not Run.objects.filter(pk=run_id).exists():
        raise TrajectoryRejected("run", f"no run with id {run_id}")
    elif Run.objects.filter(pk=run_id, trajectory__isnull=False).exists():
        raise TrajectoryRejected("run", f"run {run_id} already has a trajectory")
    # Parsing takes seconds on a large log: it happens before the transaction opens.
    prepared = trajectory_prepare(data=data, path=path, filename=filename, max_bytes=max_bytes)
    written: list[str] = []
    try:
        with transaction.atomic():
            if run_id is None:
                run = _run_create(agent_name=agent_slug.strip(), task=task)
            else:
                run = Run.objects.select_for_update().get(pk=run_id)
                if run.trajectory_id is not None:
                    raise TrajectoryRejected("run", f"run {run_id} already has a trajectory")
            return _write(prepared, run=run, written=written)
    except BaseException:
        _delete(written)
        raise


def _task_for_new_run(*, agent_slug: str, task_slug: str) -> Task:
    if not slugify(agent_slug):
        raise TrajectoryRejected("agent", "name the agent (letters or digits), or give a run id")
    if not task_slug.strip():
        raise TrajectoryRejected("task", "name the task, or give a run id")
    task = task_get_active(slug=task_slug.strip())
    if task is None:
        raise TrajectoryRejected("task", f"unknown task {task_slug.strip()!r}")
    return task


def _run_create(*, agent_name: str, task: Task) -> Run:
    """A run known only from its log: finished, with no submission to grade."""
    from arena.models import Run
    from arena.services import agent_get_or_create

    return Run.objects.create(
        agent=agent_get_or_create(name=agent_name),
        task=task,
        status=Run.Status.DONE,
        source=Run.Source.UPLOAD,
        finished_at=timezone.now(),
    )


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
