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
3. **Memory: the GPU's room.** Every evaluation holds a claim on the GPU's memory for its
   whole length: a fraction of it, the least in which its case plan fits (its shapes' estimated
   peaks, its judge's room, its outputs held on the device: caseplan.beyond_share), or the
   whole while it probes a new task. The claims beside each other never add up to more than the
   GPU: an evaluation whose claim does not fit waits until enough of the others' have left. So
   an evaluation whose outputs fill half the GPU grades beside a matrix product's, never beside
   another of its own size. Sharing decides only what an evaluation grades beside, never what
   it grades: its unseen shapes are screened and its cases planned on the whole GPU's memory,
   as one grading alone, and each of its children is held to its claim.

The GPU's folder (share_folder) is the grading processes' alone: under the host's temporary
folder, which a sandboxed candidate never sees (bwrap and docker give it a private one). In it:
- `candidate.lock`, the lock of rule 1 (flock: let go by the kernel when its holder dies);
- `claims/<pid>-<n>`, the room of rule 3: one file per claim, its fraction of the GPU's memory,
  held under flock by the grading process that made it for as long as the claim stands, so
  that a claim whose maker died is seen as gone (and removed by the next one to look);
- `turnstile.lock`, held by the one evaluation making a claim, for as long as it waits: claims
  are weighed one at a time, and one that waits for room is not overtaken by later, smaller
  ones that would keep it waiting for ever;
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
# A claim that waits for room looks at the others' this often (each look opens their files).
ROOM_POLL_S = 0.01
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
_claims = itertools.count(1)
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
    # The room (rule 3), as the evaluation's children last held it: "shared" (a fraction of the
    # GPU's memory, room_share) or "whole"; why its claim was more than an even share of the
    # GPU (room_because) or the whole (whole_because: a probe's whole claim is given back where
    # the plan fits less); the waits for room.
    room: str = ""
    room_share: float = 0.0
    room_because: str = ""
    whole_because: str = ""
    room_waited_s: float = 0.0
    # Each claim this evaluation held: (from, to, fraction), as candidate_turns.
    room_turns: list[tuple[float, float, float]] = field(default_factory=list)

    @property
    def refused(self) -> str | None:
        return next((p["refused"] for p in self.pauses if "refused" in p), None)

    @property
    def whole_turns(self) -> list[tuple[float, float]]:
        return [(a, b) for a, b, fraction in self.room_turns if fraction >= 1.0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "evaluations_per_gpu": self.evaluations_per_gpu,
            "candidate_waited_s": round(self.candidate_waited_s, 3),
            "candidate_turns": [[round(a, 3), round(b, 3)] for a, b in self.candidate_turns],
            "pauses": self.pauses,
            "room": self.room,
            "room_share": round(self.room_share, 4),
            "room_because": self.room_because,
            "whole_because": self.whole_because,
            "room_waited_s": round(self.room_waited_s, 3),
            "room_turns": [[round(a, 3), round(b, 3), round(f, 4)] for a, b, f in self.room_turns],
        }


class GpuShare:
    """A grading process's side: its claim on the room, the candidate lock and the pause
    requests."""

    def __init__(self, folder: Path, evaluations_per_gpu: int) -> None:
        self.folder = folder
        self.report = ShareReport(evaluations_per_gpu)
        # The claim this evaluation holds: its file's descriptor (locked), path and fraction.
        self._claim: tuple[int, Path] | None = None
        self.fraction = 0.0
        self._since = 0.0

    # ---- the room (rule 3) ----------------------------------------------------------------------

    @property
    def whole(self) -> bool:
        return self._claim is not None and self.fraction >= 1.0

    def enter(self, stop: threading.Event | None = None) -> None:
        """An even share of the room claimed (1/N of the GPU's memory)."""
        self.claim(1.0 / self.report.evaluations_per_gpu, "", stop)

    def take_whole(self, because: str, stop: threading.Event | None = None) -> None:
        """The room claimed whole: once every other evaluation on the GPU has left it. Nothing
        of this evaluation runs on the GPU meanwhile."""
        self.claim(1.0, because, stop)

    def claim(self, fraction: float, because: str, stop: threading.Event | None = None) -> None:
        """`fraction` of the GPU's memory claimed for this evaluation's children. A smaller claim
        than the one held replaces it at once; a larger one lets the held claim go first (so
        that two evaluations that both grow never wait on each other), then waits until the
        others' claims leave room for it."""
        fraction = min(1.0, max(fraction, 1e-6))
        if self._claim is not None and fraction <= self.fraction:
            held = self._claim
            self._claim = self._write_claim(fraction)
            self._let_go(held)
        else:
            self.leave()
            self._wait_for_room(fraction, stop)
        self.fraction, self._since = fraction, time.monotonic()
        self.report.room = "whole" if fraction >= 1.0 else "shared"
        self.report.room_share = fraction
        if fraction >= 1.0:
            self.report.whole_because = because
        if fraction > 1.0 / self.report.evaluations_per_gpu + 1e-9:
            self.report.room_because = because

    def leave(self) -> None:
        if self._claim is None:
            return
        self._let_go(self._claim)
        self._claim = None

    def claims(self) -> dict[str, float]:
        """The standing claims on the GPU's room (their files' names and fractions); those whose
        makers are gone are removed."""
        folder = self.folder / "claims"
        standing = {}
        for path in folder.iterdir() if folder.is_dir() else []:
            if path.name.startswith("."):
                continue  # being written
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:  # its maker holds it: the claim stands
                with contextlib.suppress(ValueError, OSError):
                    standing[path.name] = float(os.pread(fd, 64, 0).decode() or 0)
            else:  # its maker is gone (the kernel let its lock go)
                with contextlib.suppress(OSError):
                    path.unlink()
            finally:
                os.close(fd)
        return standing

    def _wait_for_room(self, fraction: float, stop: threading.Event | None) -> None:
        started = time.monotonic()
        turnstile = os.open(self.folder / "turnstile.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            _hold(turnstile, fcntl.LOCK_EX, stop)
            while sum(self.claims().values()) + fraction > 1.0 + 1e-9:
                _raise_if_stopped(stop)
                time.sleep(ROOM_POLL_S)
            self._claim = self._write_claim(fraction)
        finally:
            os.close(turnstile)
        self.report.room_waited_s += time.monotonic() - started

    def _write_claim(self, fraction: float) -> tuple[int, Path]:
        """A claim's file, locked before it is renamed into place: every reader that sees it
        sees it held."""
        folder = self.folder / "claims"
        folder.mkdir(mode=0o700, exist_ok=True)
        path = folder / f"{os.getpid()}-{next(_claims)}"
        partial = path.with_name("." + path.name)
        fd = os.open(partial, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, f"{fraction:.6f}".encode())
        os.replace(partial, path)
        return fd, path

    def _let_go(self, claim: tuple[int, Path]) -> None:
        # Its end is read before it goes, and a claim's start after it stands: turns that
        # followed each other never read as overlapping.
        self.report.room_turns.append((self._since, time.monotonic(), self.fraction))
        fd, path = claim
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)  # lets the lock go

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
            _raise_if_stopped(stop)
            time.sleep(POLL_S)


def _raise_if_stopped(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        from grader.options import EvaluationStopped  # the grading process's

        raise EvaluationStopped("the caller stopped the evaluation")


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
