"""An agent's log uploaded with its kernel: a run graded like any other.

An upload names an agent and a task and carries the agent's log and its final kernel, attached
or taken from the log: the last content the agent wrote to its solution file, replayed by
transcript_formats.written_files from the task's starter files. The run, its trajectory and
its submission are written in one transaction, and the submission goes through the build stage
and the GPU queue as every other does; the run's cost and tokens are the log's. A log with no
kernel is stored as a transcript only: a finished run with no submission, never on the board.

Nothing is written for bad input: a kernel that is not Python or defines no ModelNew, an
unknown task, a file the log never writes, a log already uploaded, a log of another harness
than the agent's. The form asks its uploader to confirm a kernel taken from the log: between
its two steps the prepared upload waits in its work folder (`log_upload_hold`).
"""

from __future__ import annotations

import contextlib
import posixpath
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

from django.contrib.auth.base_user import AbstractBaseUser

from arena.agent_names import AgentNameRefused, agent_name_parse
from arena.lifecycle import run_log_create
from arena.models import Agent, Run, Submission
from arena.run_logs import (
    HARNESS_BY_FORMAT,
    agent_harness_check,
    run_spend_set,
    task_for_new_run,
)
from arena.selectors import runs_visible_to
from arena.services import (
    NotYours,
    agent_for_account,
    agent_name_check,
    upload_submission_add,
)
from arena.workspace import MAX_STARTER_FILES, STARTER_DIR
from evaluator.solution_checks import SolutionRefused, solution_check, solution_max_bytes
from tasks.models import Task
from tasks.selectors import task_folder, task_get_active
from transcript_formats import Transcript
from transcript_formats.redact import redact_text
from transcript_formats.written_files import (
    FileNotWritten,
    WrittenFile,
    file_from_transcript,
    log_names_task,
    solution_from_transcript,
)
from transcripts.models import Trajectory
from transcripts.services import (
    Prepared,
    TrajectoryForbidden,
    TrajectoryRejected,
    trajectory_held,
    trajectory_held_note,
    trajectory_hold,
    trajectory_prepare,
    trajectory_store,
)

KernelSource = Submission.KernelSource


class LogAlreadyUploaded(TrajectoryRejected):
    """The same log (by its sha256 as received) is already a run's: `run_id` names it."""

    def __init__(self, message: str, *, run_id: int | None) -> None:
        super().__init__("file", message)
        self.run_id = run_id


@dataclass(frozen=True)
class Kernel:
    """The kernel an upload is graded with and where it came from: attached beside the log, or
    the last content the log's agent wrote to it (the path, turn, thread and tool of that
    write, as written_files reports it)."""

    name: str
    code: str
    source: str  # Submission.KernelSource
    path: str = ""
    turn: int | None = None
    thread: str = ""
    tool: str = ""


@dataclass(frozen=True)
class LogReading:
    """What the parsed log says for this upload: the kernel its agent last wrote (None, with
    `problem`, where it writes none that can be graded; `written` where it writes one all the
    same), whether it names the task, and its harness, model and CLI version."""

    kernel: Kernel | None
    problem: str
    written: bool
    names_task: bool
    harness: str
    model: str
    cli_version: str


@dataclass
class LogUpload:
    """A checked upload waiting to be stored: the prepared log, what it was uploaded for, and
    the kernel it is to be graded with (None: a transcript only)."""

    prepared: Prepared
    task: Task
    agent_name: str
    model: str  # as the uploader declared it, for a new agent
    reading: LogReading
    kernel: Kernel | None

    def discard(self) -> None:
        self.prepared.discard()


# -- checking ------------------------------------------------------------------------------


def log_upload_prepare(
    *,
    agent_name: str,
    task_slug: str,
    user: AbstractBaseUser | None,
    data: bytes | None = None,
    path: Path | None = None,
    file: BinaryIO | None = None,
    filename: str = "",
    max_bytes: int | None = None,
    model: str = "",
    solution: tuple[str, str] | None = None,
    solution_path: str = "",
    transcript_only: bool = False,
) -> LogUpload:
    """Check and parse an upload of a new run, writing nothing: the log, and the kernel
    attached (`solution`: file name and source), named in the log (`solution_path`), or else
    the one the log's agent last wrote (none with `transcript_only`). TrajectoryRejected (or
    TrajectoryForbidden) says what is wrong with which field."""
    task = task_for_new_run(agent_slug=agent_name, task_slug=task_slug)
    if solution is not None:
        _kernel_check(name=solution[0], code=solution[1], field="solution")
    known = task_files(task=task)

    def examine(transcript: Transcript) -> LogReading:
        return log_reading(transcript, task=task, known=known, path=solution_path)

    # Parsing takes seconds on a large log: it happens before any transaction opens.
    prepared = trajectory_prepare(
        data=data, path=path, file=file, filename=filename, max_bytes=max_bytes, examine=examine
    )
    reading: LogReading = prepared.examined
    upload = LogUpload(prepared, task, agent_name.strip(), model.strip(), reading, None)
    try:
        upload.kernel = _kernel_chosen(
            reading, solution=solution, named=bool(solution_path), transcript_only=transcript_only
        )
        log_upload_check(upload, user=user)
    except BaseException:
        upload.discard()
        raise
    return upload


def log_upload_check(upload: LogUpload, *, user: AbstractBaseUser | None) -> None:
    """What the database may have changed since the log was read: the log uploaded already, or
    the agent someone else's or of another harness."""
    _duplicate_check(sha256=upload.prepared.row.sha256, user=user)
    agent = Agent.objects.filter(name_key=agent_name_parse(upload.agent_name).key).first()
    if agent is None:
        try:
            agent_name_check(name=upload.agent_name)  # a new name that looks like another's
        except AgentNameRefused as exc:
            raise TrajectoryRejected("agent", exc.message) from None
        return
    try:
        agent_for_account(name=upload.agent_name, user=user)  # found, so nothing is made
    except NotYours as exc:
        raise TrajectoryForbidden("agent", exc.message) from None
    agent_harness_check(agent=agent, harness=upload.reading.harness)


def _kernel_chosen(
    reading: LogReading, *, solution: tuple[str, str] | None, named: bool, transcript_only: bool
) -> Kernel | None:
    if transcript_only:
        return None
    if solution is not None:
        return Kernel(name=solution[0], code=solution[1], source=KernelSource.ATTACHED)
    if named and reading.kernel is None:
        raise TrajectoryRejected("solution_path", reading.problem)
    return reading.kernel


def log_upload_kernel_required(upload: LogUpload) -> None:
    """Refuse an upload whose log writes a kernel that cannot be graded (its text unknown, not
    Python, no ModelNew) where none was attached: the uploader attaches it or asks for a
    transcript only. A log that writes no kernel at all is a transcript only."""
    if upload.kernel is None and upload.reading.kernel is None and upload.reading.written:
        upload.discard()
        raise TrajectoryRejected(
            "solution",
            f"{upload.reading.problem}: attach the kernel, or upload the log as a transcript only",
        )


def _kernel_check(*, name: str, code: str, field: str) -> None:
    try:
        solution_check(name=name, code=code)
    except SolutionRefused as exc:
        raise TrajectoryRejected(field, exc.message) from None


def _duplicate_check(*, sha256: str, user: AbstractBaseUser | None) -> None:
    run = Run.objects.filter(trajectory__sha256=sha256).order_by("pk").first()
    if run is None:
        return
    visible = user is None or runs_visible_to(user=user).filter(pk=run.pk).exists()
    if not visible:
        raise LogAlreadyUploaded(
            "this log was uploaded already, as a run that is not public", run_id=None
        )
    raise LogAlreadyUploaded(f"this log was uploaded already: run #{run.pk}", run_id=run.pk)


# -- what the log holds ----------------------------------------------------------------------


def log_reading(
    transcript: Transcript, *, task: Task, known: dict[str, str], path: str = ""
) -> LogReading:
    """The kernel the log's agent last wrote to its solution file (or to `path`), replayed from
    the task's files as the agent found them (`known`), checked as an attached one would be."""
    try:
        found = (
            file_from_transcript(transcript, path, known=known)
            if path
            else solution_from_transcript(transcript, task_slug=task.slug, known=known)
        )
    except FileNotWritten as exc:
        raise TrajectoryRejected("solution_path", str(exc)) from None
    kernel, problem = _kernel_of(found)
    return LogReading(
        kernel=kernel,
        problem=problem,
        written=found is not None,
        names_task=log_names_task(transcript, slug=task.slug, file_names=_task_words(task)),
        harness=HARNESS_BY_FORMAT.get(transcript.format, ""),
        model=redact_text(transcript.model or "")[: Run._meta.get_field("model").max_length],
        cli_version=redact_text(transcript.cli_version or "")[:50],
    )


def _kernel_of(found: WrittenFile | None) -> tuple[Kernel | None, str]:
    if found is None:
        return None, "the log writes no solution.py and no file that defines ModelNew"
    name = posixpath.basename(found.path) or "solution.py"
    where = f"{found.path} as the log leaves it (turn {found.turn})"
    if found.content is None:
        return None, f"{where}: {found.reason or 'its text is not in the log'}"
    # Secrets written with JSON escapes only show once parsed: the stored log is redacted
    # again, and so is the kernel taken from it.
    code = redact_text(found.content)
    try:
        solution_check(name=name, code=code)
    except SolutionRefused as exc:
        return None, f"{where}: {exc.message.removeprefix(name + ': ')}"
    kernel = Kernel(
        name=name,
        code=code,
        source=KernelSource.LOG,
        path=found.path[:500],
        turn=found.turn,
        thread=found.thread_id[:200],
        tool=(found.tool_name or "")[:100],
    )
    return kernel, ""


def task_files(*, task: Task) -> dict[str, str]:
    """The task's starter files as an agent finds them in its workspace (arena/workspace.py),
    by path relative to it: where a replay of its writes starts."""
    starter = task_folder(task=task) / STARTER_DIR
    if not starter.is_dir():
        return {}
    files: dict[str, str] = {}
    for path in sorted(p for p in starter.rglob("*") if p.is_file() and not p.is_symlink()):
        if len(files) >= MAX_STARTER_FILES or path.stat().st_size > solution_max_bytes():
            continue
        try:
            files[f"{STARTER_DIR}/{path.relative_to(starter).as_posix()}"] = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return files


def _task_words(task: Task) -> list[str]:
    """Words besides its slug that name the task in a log: a slug's last part (level1/19_ReLU)."""
    last = task.slug.rsplit("/", 1)[-1]
    return [last] if last != task.slug and len(last) >= 4 else []


# -- storing ---------------------------------------------------------------------------------


def log_upload(
    *, user: AbstractBaseUser | None, transcript_only: bool = False, **given: Any
) -> Run:
    """Check, parse and store an upload at once (the API, the command): a kernel the log wrote
    is taken as it is, and a log that writes one that cannot be graded is refused unless a
    transcript only is asked for. `given`: as for log_upload_prepare."""
    upload = log_upload_prepare(user=user, transcript_only=transcript_only, **given)
    if not transcript_only:
        log_upload_kernel_required(upload)
    return log_upload_store(upload, user=user)


def log_upload_store(upload: LogUpload, *, user: AbstractBaseUser | None) -> Run:
    """The run, its trajectory and (with a kernel) its submission, in one transaction; the
    grading is enqueued once it commits. The checks run again inside it."""
    made: list[Run] = []

    def attach(trajectory: Trajectory) -> None:
        log_upload_check(upload, user=user)
        made.append(_run_create(upload, trajectory=trajectory, user=user))

    trajectory_store(upload.prepared, then=attach)
    return made[0]


def _run_create(upload: LogUpload, *, trajectory: Trajectory, user: AbstractBaseUser | None) -> Run:
    agent = _agent_for_upload(upload, user=user)
    kernel = upload.kernel
    if kernel is None:
        run = run_log_create(agent=agent, task=upload.task, created_by=user)
    else:
        submission = upload_submission_add(
            task=upload.task,
            agent=agent,
            solution_name=kernel.name,
            solution_code=kernel.code,
            user=user,
        )
        _provenance_set(submission, kernel)
        run = submission.run
    reading = upload.reading
    run.harness = reading.harness or agent.harness
    run.model = reading.model or agent.model
    run.cli_version = reading.cli_version
    run.log_names_task = reading.names_task
    run.save(update_fields=["harness", "model", "cli_version", "log_names_task"])
    run_spend_set(run, trajectory)
    return run


def _agent_for_upload(upload: LogUpload, *, user: AbstractBaseUser | None) -> Agent:
    """The named agent, made for the account where new with the log's harness and the model
    declared (else the log's); an agent of no harness yet takes the log's now."""
    reading = upload.reading
    described = {
        "harness": reading.harness,
        "model": upload.model or reading.model,
        "cli_version": reading.cli_version,
    }
    try:
        agent = agent_for_account(name=upload.agent_name, user=user, defaults=described)
    except NotYours as exc:
        raise TrajectoryForbidden("agent", exc.message) from None
    except AgentNameRefused as exc:
        raise TrajectoryRejected("agent", exc.message) from None
    agent_harness_check(agent=agent, harness=reading.harness)
    blank = [name for name in ("harness", "model") if described[name] and not getattr(agent, name)]
    for name in blank:
        setattr(agent, name, described[name])
    if blank:
        agent.save(update_fields=blank)
    return agent


def _provenance_set(submission: Submission, kernel: Kernel) -> None:
    submission.kernel_source = kernel.source
    submission.kernel_path = kernel.path
    submission.kernel_turn = kernel.turn
    submission.kernel_thread = kernel.thread
    submission.kernel_tool = kernel.tool
    fields = ["kernel_source", "kernel_path", "kernel_turn", "kernel_thread", "kernel_tool"]
    submission.save(update_fields=fields)


# -- held between the form's two steps -----------------------------------------------------


@dataclass(frozen=True)
class HeldUpload:
    """A held upload as its confirmation page shows it; `handle` gives it back."""

    handle: str
    task: Task
    agent_name: str
    model: str
    reading: LogReading
    trajectory: Trajectory  # unsaved: the log's counts


def log_upload_hold(upload: LogUpload, *, user: AbstractBaseUser) -> HeldUpload:
    """Keep a checked upload for its uploader to confirm the kernel taken from its log (or to
    attach another, or none), until log_upload_held takes it back."""
    note = {
        "user": user.pk,
        "task": upload.task.slug,
        "agent": upload.agent_name,
        "model": upload.model,
        "reading": asdict(upload.reading),
    }
    handle = trajectory_hold(upload.prepared, note=note)
    return HeldUpload(
        handle, upload.task, upload.agent_name, upload.model, upload.reading, upload.prepared.row
    )


def log_upload_held_view(handle: str, *, user: AbstractBaseUser) -> HeldUpload | None:
    """The upload `user` holds under `handle`, left held; None where it is gone or expired."""
    found = trajectory_held_note(handle)
    if found is None or found[1].get("user") != user.pk:
        return None
    row, note = found
    task = task_get_active(slug=note["task"])
    if task is None:
        return None
    reading = _reading_from_note(note["reading"])
    return HeldUpload(handle, task, note["agent"], note["model"], reading, row)


def log_upload_held(handle: str, *, user: AbstractBaseUser) -> LogUpload:
    """The upload `user` held under `handle`, taken back once (TrajectoryRejected where it is
    gone, expired or someone else's), its kernel the one found in its log; the caller stores or
    discards it."""
    if log_upload_held_view(handle, user=user) is None:
        raise TrajectoryRejected("file", "this upload is no longer held: upload the log again")
    prepared, note = trajectory_held(handle)
    try:
        task = task_for_new_run(agent_slug=note["agent"], task_slug=note["task"])
        reading = _reading_from_note(note["reading"])
    except BaseException:
        prepared.discard()
        raise
    return LogUpload(prepared, task, note["agent"], note["model"], reading, reading.kernel)


def log_upload_drop(handle: str, *, user: AbstractBaseUser) -> None:
    """Let go of an upload `user` held and will not confirm (its browser holds newer ones)."""
    with contextlib.suppress(TrajectoryRejected):  # gone already
        log_upload_held(handle, user=user).discard()


def _reading_from_note(note: dict[str, Any]) -> LogReading:
    kernel = Kernel(**note["kernel"]) if note["kernel"] is not None else None
    return LogReading(**{**note, "kernel": kernel})


def log_upload_kernel_set(
    upload: LogUpload, *, solution: tuple[str, str] | None = None, transcript_only: bool = False
) -> None:
    """The uploader's answer to the kernel found in the log: kept (neither argument), replaced
    by one attached (`solution`, checked), or none at all (`transcript_only`)."""
    if transcript_only:
        upload.kernel = None
    elif solution is not None:
        _kernel_check(name=solution[0], code=solution[1], field="solution")
        upload.kernel = Kernel(name=solution[0], code=solution[1], source=KernelSource.ATTACHED)
    elif upload.reading.kernel is None:
        raise TrajectoryRejected(
            "solution", f"{upload.reading.problem}: attach the kernel, or store a transcript only"
        )
    else:
        upload.kernel = upload.reading.kernel
