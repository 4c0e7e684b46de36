"""Grader children started ahead of their evaluation, so that an evaluation does not pay their
start-up (an interpreter importing torch and triton: about 5 s on a GPU host, three times per
evaluation: probe, candidate, judge).

A prepared slot is one evaluation's private scratch folder (evaluate.new_private_folder) with three
children already started in it, each waiting on stdin for its job (child.prepared_main): the
candidate in the isolating sandbox of the evaluation's options, bound to the slot's candidate
folder as a cold start would be; the probe and the judge as plain processes, which run only our
code and the task's reference. They have imported torch, triton and the grader, used the
profiler once on the host (its first use costs seconds), made Triton's driver on a GPU host
(not the probe), and (the probe and the judge, whose jobs use it) imported the compiler stack;
they have made no CUDA context, so a waiting child holds no GPU memory and no GPU state carries
over. Each child
serves one job and ends; a slot serves one evaluation. Its clock (timeout, wall time) starts at
the hand-over, and the sandbox, limits and environment are those of a cold start.

Slots are kept ready per process (a GPU worker grades one evaluation at a time), two by default
(EvaluateOptions.prepared_ahead); taking one starts its replacement on a thread, so that the next
evaluations find their children ready. A slot prepared for other settings (device, sandbox,
architecture, memory cap) is let go, never reused.
"""

import atexit
import contextlib
import os
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.preludes import Prelude, Warmup
from sandboxes.backends import Running

ROLES = ("candidate", "judge", "probe")

# (role, workdir) -> a started child, not yet handed its job.
Starter = Callable[[str, Path], Running]


@dataclass
class Slot:
    key: tuple[object, ...]
    folder: Path
    children: dict[str, Running] = field(default_factory=dict)
    # The command line's preludes (preludes.py): a KernelBench file's analysis handed to the
    # probe's child, and the compile baseline's warm-up handed to the judge's.
    analysis: tuple[Path, Prelude] | None = None
    warmup: Warmup | None = None

    def take(self, role: str) -> Running | None:
        return self.children.pop(role, None)

    def is_prepared(self) -> bool:
        return all(running.is_prepared() for running in self.children.values())

    def release(self) -> None:
        """Let go of the children no job was handed to (a probe that the cache made needless,
        or all of them where the evaluation stopped early)."""
        # A copy: a warm-up's watch may take the judge meanwhile (preludes.py).
        for running in list(self.children.values()):
            with contextlib.suppress(Exception):
                running.discard()
        self.children.clear()
        if self.warmup is not None:
            self.warmup.settle()


class Pool:
    """Slots ready ahead for one process's evaluations: taking one starts its replacement on a
    thread, off the evaluation's clock. Several are kept ahead where evaluations are short: a
    slot's children need about 10 s to import and warm up, and a small level-1 problem grades in
    less, so with one ahead the next evaluation would find its children still importing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: list[Slot] = []
        self._starting = 0
        self._closed = False
        # Slots start on one thread for the process's life: a sandbox that dies with its parent
        # (bwrap --die-with-parent, PR_SET_PDEATHSIG) goes when the thread that started it
        # ends, not the process.
        self._starter = _Serial()

    def take(
        self,
        key: tuple[object, ...],
        make_folder: Callable[[], Path],
        starter: Starter,
        ahead: int = 1,
        roles: tuple[str, ...] = ROLES,
    ) -> Slot:
        """A ready slot for `key` (its children: `roles`), or one started now; either way the
        pool is filled again to `ahead` slots for `key` (slots for other settings are let go)."""
        with self._lock:
            stale = [s for s in self._ready if s.key != key]
            self._ready = [s for s in self._ready if s.key == key]
            ready = self._ready.pop(0) if self._ready else None
            self._closed = False
        for slot in stale:
            discard_slot(slot)
        slot = ready or start_slot(key, make_folder(), starter, roles)
        self._fill(key, make_folder, starter, ahead, roles)
        return slot

    def _fill(
        self,
        key: tuple[object, ...],
        make_folder: Callable[[], Path],
        starter: Starter,
        ahead: int,
        roles: tuple[str, ...],
    ) -> None:
        with self._lock:
            missing = max(0, ahead - len(self._ready) - self._starting)
            self._starting += missing
        for _ in range(missing):
            self._starter.submit(self._start_one, key, make_folder, starter, roles)

    def _start_one(
        self,
        key: tuple[object, ...],
        make_folder: Callable[[], Path],
        starter: Starter,
        roles: tuple[str, ...],
    ) -> None:
        slot = None
        # A failure here leaves the next evaluation to start its children cold and report why.
        with contextlib.suppress(Exception):
            slot = start_slot(key, make_folder(), starter, roles)
        with self._lock:
            self._starting -= 1
            keep = slot is not None and not self._closed
            if keep and slot is not None:
                self._ready.append(slot)
        if slot is not None and not keep:
            discard_slot(slot)

    def start_now(
        self,
        key: tuple[object, ...],
        make_folder: Callable[[], Path],
        starter: Starter,
        roles: tuple[str, ...] = ROLES,
    ) -> Slot:
        """Start a slot for `key` on this thread, for the evaluation about to take it: the
        command line starts its children before it imports torch and reads the task, so that
        their start-up and its own overlap."""
        slot = start_slot(key, make_folder(), starter, roles)
        with self._lock:
            # First in line: the evaluation about to begin takes it (and its preludes), not a
            # slot an earlier evaluation of this process left ready.
            self._ready.insert(0, slot)
            self._closed = False
        return slot

    def let_go(self, slot: Slot) -> None:
        """`slot` discarded with its folder if no evaluation took it (one that stopped before it
        began, or ran with other settings); a slot taken is its evaluation's to retire."""
        with self._lock:
            waiting = any(s is slot for s in self._ready)
            if waiting:
                self._ready = [s for s in self._ready if s is not slot]
        if waiting:
            discard_slot(slot)

    def analysis(self, path: Path) -> dict[str, Any] | None:
        """The analysis of the KernelBench file at `path` that a ready slot's probe child was
        handed (the command line's prelude), once it is done; None where none was handed, or it
        did not end with one."""
        with self._lock:
            handed = [s.analysis for s in self._ready if s.analysis and s.analysis[0] == path]
        return handed[0][1].wait("analysis") if handed else None

    def wait_filled(self, timeout_s: float) -> list[Slot]:
        """The ready slots once every one has started and its children have finished their
        imports (or `timeout_s` has passed)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                settled = not self._starting and all(s.is_prepared() for s in self._ready)
            if settled:
                break
            time.sleep(0.05)
        with self._lock:
            return list(self._ready)

    def close(self) -> None:
        with self._lock:
            ready, self._ready = self._ready, []
            self._closed = True
        for slot in ready:
            discard_slot(slot)


def start_slot(
    key: tuple[object, ...], folder: Path, starter: Starter, roles: tuple[str, ...] = ROLES
) -> Slot:
    slot = Slot(key, folder)
    try:
        for role in roles:
            workdir = folder / role
            workdir.mkdir(parents=True, exist_ok=True)
            slot.children[role] = starter(role, workdir)
    except BaseException:
        discard_slot(slot)
        raise
    return slot


def discard_slot(slot: Slot) -> None:
    slot.release()
    _remove(slot.folder)


def retire_slot(slot: Slot) -> None:
    """After its evaluation: the children let go now, the folder removed on a thread of its own
    (freeing gigabytes of outputs in /dev/shm takes seconds, which need not be this evaluation's;
    the next waits for it, wait_removed). A folder the process leaves behind goes in the
    stale-folder sweep."""
    slot.release()
    _REMOVER.submit(_remove, slot.folder)


def wait_removed(timeout_s: float = 120.0) -> None:
    """Until the folders retired so far are gone: an evaluation's outputs need the room."""
    _REMOVER.wait_idle(timeout_s)


class _Serial:
    """Calls run one after another on one daemon thread, started with the first and kept for
    the process's life; a call that raises is let go."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._calls: deque[tuple[Callable[..., object], tuple[object, ...]]] = deque()
        self._unfinished = 0
        self._thread: threading.Thread | None = None

    def submit(self, call: Callable[..., object], *args: object) -> None:
        with self._changed:
            self._calls.append((call, args))
            self._unfinished += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def wait_idle(self, timeout_s: float) -> None:
        """Until every call submitted so far has finished (or `timeout_s` has passed)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while self._unfinished and time.monotonic() < deadline:
                self._changed.wait(0.5)

    def _serve(self) -> None:
        while True:
            with self._changed:
                while not self._calls:
                    self._changed.wait()
                call, args = self._calls.popleft()
            with contextlib.suppress(Exception):
                call(*args)
            with self._changed:
                self._unfinished -= 1
                self._changed.notify_all()


_REMOVER = _Serial()


def _remove(folder: Path) -> None:
    """The slot's folder and all a candidate left in it, folders it made unreadable included
    (as tempfile.TemporaryDirectory removes a private_scratch)."""

    def writable_again(function: object, path: str, _: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, onerror=writable_again)
            else:
                os.unlink(path)

    shutil.rmtree(folder, onerror=writable_again)


POOL = Pool()
# Children also end by themselves when this process goes: their stdin closes.
atexit.register(POOL.close)
