"""Several evaluations on one GPU (EvaluateOptions.evaluations_per_gpu > 1), none touching
another's timing.

A GPU grading one evaluation at a time waits on the CPU work of each (the solution's import and
JIT, children's starts and exits, the grading process's own steps) and runs kernels a fraction
of its time. Two or more evaluations in flight overlap one's CPU work with another's kernels.
What they may share, and how (docs/grading-pipeline.md, "Several evaluations on one GPU"):

1. **One candidate at a time.** The code under test (the candidate's child, the decoy test's)
   runs only while its grading process holds the GPU's candidate lock (candidate_turn), until
   that child's whole process tree is gone. Untrusted code never shares the GPU with untrusted
   code, and none of it is ever asked to pause: nothing depends on its cooperation.
2. **Timing alone.** While a candidate is timed, and while a judge times the baselines, every
   other evaluation's trusted children on the GPU (the probe's, the judge's: the grader and the
   task's reference only) are held at a pause point, their queued kernels synchronized, so the
   GPU is drained of their work exactly, not by a guess (paused_others). A judge that times the
   baselines holds the candidate lock as well, so no candidate runs beside it.
3. **Memory.** An evaluation grades beside others within its share of the GPU's memory
   (gpu_memory_share, 1/N by default), or takes the GPU whole (the room): where its case plan's
   outputs and its judge would not fit its share, and while it probes a new task. Each
   evaluation holds the GPU's room for its whole length: shared beside others, or whole alone.
   Sharing decides only what an evaluation grades beside, never what it grades: its unseen
   shapes are screened and its cases planned on the whole GPU's memory, as one grading alone.

The GPU's folder (share_folder) is the grading processes' alone: under the host's temporary
folder, which a sandboxed candidate never sees (bwrap and docker give it a private one). In it:
- `candidate.lock`, the lock of rule 1 (flock: let go by the kernel when its holder dies);
- `room.lock` and `turnstile.lock`, the room of rule 3 (flock: shared by the evaluations that
  grade within their share, exclusive for one that takes the GPU whole; the turnstile, held
  only while the room is taken, keeps evaluations arriving later behind one that waits for the
  room whole, so that it is not kept waiting by an endless stream of shared ones);
- `pause`, a request of rule 2 (JSON: its id, and the grading process that made it);
- `active/<pid>`, a trusted child with a CUDA context that answers requests (its content: the
  pid of its grading process, whose own requests it does not answer);
- `acks/<pid>`, the id of the last request that child answered.

The order that makes the pause exact: a requester writes `pause` before it lists `active/`; a
child writes its `active/` entry before it first looks at `pause`, and looks again at every
pause point. A child that registered before the list is waited for; one that registered after
sees the request at its first pause point, before its first kernel.
"""

import contextlib
import fcntl
import itertools
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.hostinfo import nvidia_smi_query
from sandboxes.processes import process_state

POLL_S = 0.002
# How long a requester waits for the trusted children to pause: their longest step between
# pause points (a level-3 model built on the GPU, one case's reference and comparison). Past it
# the timing is not the solution's to lose: the evaluation ends as a grader error.
PAUSE_LIMIT_S = 120.0
# The longest a candidate may hold the others paused once its gate is open (its timing of the
# visible shapes); past it they run on, and its own timing may have had company.
TIMING_TURN_LIMIT_S = 120.0
# The files the candidate makes in its own folder beside its gate (roles/candidate.py): it waits
# there, and its timing has ended.
WAITING_SUFFIX = ".waiting"
DONE_SUFFIX = ".done"

_requests = itertools.count(1)
_uuids: dict[str, str] = {}


class PauseRefused(RuntimeError):
    """The other evaluations' trusted children did not pause within PAUSE_LIMIT_S."""


def share_folder(device: str, root: Path | None = None) -> Path:
    """The folder of the device this process grades on: on CUDA, CUDA_VISIBLE_DEVICES' first
    GPU (else 0), named by its UUID so that every spelling of one GPU meets in one folder; the
    host's processors are one device."""
    name = "cpu"
    if device == "cuda":
        visible = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0].strip() or "0"
        if visible not in _uuids:
            _uuids[visible] = _gpu_uuid(visible)
        name = _uuids[visible]
    base = root if root is not None else Path(tempfile.gettempdir())
    folder = base / "arena-gpu-share" / name
    (folder / "active").mkdir(mode=0o700, parents=True, exist_ok=True)
    (folder / "acks").mkdir(mode=0o700, exist_ok=True)
    return folder


def _gpu_uuid(visible: str) -> str:
    out = nvidia_smi_query("uuid", visible)
    name = out.splitlines()[0].strip() if out else f"gpu-{visible}"
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


@dataclass
class ShareReport:
    """What sharing the GPU cost one evaluation (environment.gpu_share in the result)."""

    evaluations_per_gpu: int
    candidate_waited_s: float = 0.0
    # When this evaluation held the candidate lock: (from, to) on the host's monotonic clock,
    # which every process of the host shares.
    candidate_turns: list[tuple[float, float]] = field(default_factory=list)
    pauses: list[dict[str, Any]] = field(default_factory=list)
    # The room (rule 3): "shared" or "whole" (as the evaluation's children last held it), why
    # it was last taken whole (a probe's room is given back where the plan fits the share),
    # and the waits for it.
    room: str = ""
    whole_because: str = ""
    room_waited_s: float = 0.0
    # When this evaluation held the room whole: (from, to), as candidate_turns.
    whole_turns: list[tuple[float, float]] = field(default_factory=list)

    @property
    def refused(self) -> str | None:
        return next((p["refused"] for p in self.pauses if "refused" in p), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "evaluations_per_gpu": self.evaluations_per_gpu,
            "candidate_waited_s": round(self.candidate_waited_s, 3),
            "candidate_turns": [[round(a, 3), round(b, 3)] for a, b in self.candidate_turns],
            "pauses": self.pauses,
            "room": self.room,
            "whole_because": self.whole_because,
            "room_waited_s": round(self.room_waited_s, 3),
            "whole_turns": [[round(a, 3), round(b, 3)] for a, b in self.whole_turns],
        }


class GpuShare:
    """A grading process's side: the candidate lock and the pause requests."""

    def __init__(self, folder: Path, evaluations_per_gpu: int) -> None:
        self.folder = folder
        self.report = ShareReport(evaluations_per_gpu)
        self._room: int | None = None  # the room's descriptor while this evaluation holds it
        self._whole_since = 0.0

    # ---- the room (rule 3) ----------------------------------------------------------------------

    @property
    def whole(self) -> bool:
        return self._room is not None and self.report.room == "whole"

    def enter(self, stop: threading.Event | None = None) -> None:
        """The room taken shared, for the evaluation's length (`leave` lets it go); a whole
        hold is let go first."""
        self.leave()
        self._take_room(fcntl.LOCK_SH, stop)
        self.report.room = "shared"

    def take_whole(self, because: str, stop: threading.Event | None = None) -> None:
        """The room taken whole: the shared hold let go first (so that two evaluations that
        both want it whole never wait on each other), then taken alone once every other
        evaluation on the GPU has left it. Nothing of this evaluation runs on the GPU
        meanwhile."""
        if not self.whole:
            self.leave()
            self._take_room(fcntl.LOCK_EX, stop)
            self._whole_since = time.monotonic()
        self.report.room, self.report.whole_because = "whole", because

    def leave(self) -> None:
        if self._room is None:
            return
        os.close(self._room)  # lets the lock go
        self._room = None
        if self.report.room == "whole":
            self.report.whole_turns.append((self._whole_since, time.monotonic()))

    def _take_room(self, mode: int, stop: threading.Event | None) -> None:
        started = time.monotonic()
        turnstile = os.open(self.folder / "turnstile.lock", os.O_CREAT | os.O_RDWR, 0o600)
        room = os.open(self.folder / "room.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            _hold(turnstile, fcntl.LOCK_EX, stop)
            _hold(room, mode, stop)
        except BaseException:
            os.close(room)
            raise
        finally:
            os.close(turnstile)
        self._room = room
        self.report.room_waited_s += time.monotonic() - started

    # ---- the candidate lock (rule 1) ------------------------------------------------------------

    @contextlib.contextmanager
    def candidate_turn(self, stop: threading.Event | None = None) -> Iterator[None]:
        """Held while this evaluation's untrusted code runs (rule 1)."""
        started = time.monotonic()
        fd = os.open(self.folder / "candidate.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            _hold(fd, fcntl.LOCK_EX, stop)
            held = time.monotonic()
            self.report.candidate_waited_s += held - started
            try:
                yield
            finally:
                self.report.candidate_turns.append((held, time.monotonic()))
        finally:
            os.close(fd)  # lets the lock go

    @contextlib.contextmanager
    def paused_others(self, why: str) -> Iterator[None]:
        """Every other evaluation's trusted children on this GPU held at a pause point, their
        work synchronized, for the block (rule 2). Only a holder of the candidate lock asks,
        so requests never overlap."""
        started = time.monotonic()
        request = f"{os.getpid()}-{next(_requests)}"
        pause = self.folder / "pause"
        _write(pause, json.dumps({"id": request, "by": os.getpid()}))
        try:
            held = self._wait_for_answers(request, started + PAUSE_LIMIT_S)
            entry = {"why": why, "waited_s": round(time.monotonic() - started, 3), "held": held}
            self.report.pauses.append(entry)
            opened = time.monotonic()
            yield
            entry["held_s"] = round(time.monotonic() - opened, 3)
        finally:
            with contextlib.suppress(OSError, ValueError):
                if json.loads(pause.read_text()).get("id") == request:
                    pause.unlink()

    def _wait_for_answers(self, request: str, deadline: float) -> int:
        """The number of children held; PauseRefused past the deadline."""
        while True:
            waiting, held = [], 0
            for entry in (self.folder / "active").iterdir():
                pid, parent = _registration(entry)
                if pid is None or parent is None or parent == os.getpid():
                    continue
                if not (_alive(pid) and _alive(parent)):
                    continue
                if _read(self.folder / "acks" / str(pid)) == request:
                    held += 1
                else:
                    waiting.append(pid)
            if not waiting:
                return held
            if time.monotonic() >= deadline:
                raise PauseRefused(
                    f"the GPU's other evaluations did not pause within {PAUSE_LIMIT_S:.0f} s "
                    f"(children {waiting})"
                )
            time.sleep(POLL_S)

    def keep_gate(self, gate: Path, alive: Callable[[], bool]) -> threading.Thread:
        """On a thread: once the candidate waits at its gate (it makes `gate`.waiting), the
        others are paused and the gate opened; once its timing has ended (`gate`.done), it has
        ended, or TIMING_TURN_LIMIT_S has passed, they run on."""
        waiting = gate.with_name(gate.name + WAITING_SUFFIX)
        done = gate.with_name(gate.name + DONE_SUFFIX)

        def keep() -> None:
            while not waiting.exists():
                if not alive():
                    return
                time.sleep(POLL_S)
            try:
                with self.paused_others("candidate timing"):
                    gate.touch()
                    limit = time.monotonic() + TIMING_TURN_LIMIT_S
                    while not done.exists() and alive() and time.monotonic() < limit:
                        time.sleep(POLL_S)
                    if time.monotonic() >= limit:
                        self.report.pauses[-1]["ended_by_limit"] = True
            except PauseRefused as exc:
                self.report.pauses.append({"why": "candidate timing", "refused": str(exc)})
                # The gate stays shut: the candidate's wait ends at its own bound, untimed
                # company or not, and the grading process reports the refusal (evaluate.py).

        thread = threading.Thread(target=keep, name="gpu-share-gate", daemon=True)
        thread.start()
        return thread


class PausePoint:
    """A trusted child's side (roles/judge.py, roles/probe.py): registered for its job's length,
    it answers each pause request at its next call. `sync` drains the child's own queued work
    (torch.cuda.synchronize) before it answers."""

    def __init__(self, folder: str | None, sync: Callable[[], None]) -> None:
        self.folder = Path(folder) if folder else None
        self.sync = sync
        self.parent = os.getppid()
        self.answered = ""
        if self.folder is not None:
            _write(self.folder / "active" / str(os.getpid()), str(self.parent))

    def __call__(self) -> None:
        if self.folder is None:
            return
        pause = self.folder / "pause"
        while (request := _request(pause)) is not None:
            if request[1] == self.parent or request[0] == self.answered:
                return
            self.sync()
            self.answered = request[0]
            _write(self.folder / "acks" / str(os.getpid()), request[0])
            # Held until the request is gone (or its maker is: a dead requester's is stale); a
            # request made meanwhile is answered in turn.
            while (current := _request(pause)) is not None and current[0] == request[0]:
                if not _alive(current[1]):
                    with contextlib.suppress(OSError):
                        pause.unlink()
                    break
                time.sleep(POLL_S)

    def close(self) -> None:
        """The job's work drained, then the registration gone: no request waits for it."""
        if self.folder is None:
            return
        with contextlib.suppress(Exception):
            self.sync()
        for path in (
            self.folder / "active" / str(os.getpid()),
            self.folder / "acks" / str(os.getpid()),
        ):
            with contextlib.suppress(OSError):
                path.unlink()
        self.folder = None


def _hold(fd: int, mode: int, stop: threading.Event | None) -> None:
    """flock's `mode` on `fd`, waited for; EvaluationStopped where `stop` is set meanwhile."""
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if stop is not None and stop.is_set():
                from grader.options import EvaluationStopped  # the grading process's

                raise EvaluationStopped("the caller stopped the evaluation") from None
            time.sleep(POLL_S)


def _request(pause: Path) -> tuple[str, int] | None:
    try:
        data = json.loads(pause.read_text())
        return str(data["id"]), int(data["by"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _registration(entry: Path) -> tuple[int | None, int | None]:
    try:
        return int(entry.name), int(entry.read_text().strip() or 0)
    except (OSError, ValueError):
        return None, None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, text: str) -> None:
    """Written whole and renamed: a reader sees the old content or the new, never half."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    partial.write_text(text)
    os.replace(partial, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie has exited: it runs nothing more. A stat gone since the signal reads as alive,
    # as the signal said.
    return process_state(pid) != "Z"
