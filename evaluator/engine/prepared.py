"""Grader children started ahead of their evaluation, so that an evaluation does not pay their
start-up (an interpreter importing torch and triton: about 5 s on a GPU host, three times per
evaluation: probe, candidate, judge).

A prepared slot is one evaluation's private scratch folder (evaluate.new_private_folder) with three
children already started in it, each waiting on stdin for its job (child.prepared_main): the
candidate in the isolating sandbox of the evaluation's options, bound to the slot's candidate
folder as a cold start would be; the probe and the judge as plain processes, which run only our
code and the task's reference. They have imported torch, triton and the grader and used the
profiler once on the host (its first use costs seconds), and have made no CUDA context, so a
waiting child holds no GPU memory and no GPU state carries over. Each child
serves one job and ends; a slot serves one evaluation. Its clock (timeout, wall time) starts at
the hand-over, and the sandbox, limits and environment are those of a cold start.

One slot is kept ready per process (a GPU worker grades one evaluation at a time); taking it
starts the next, so that the next evaluation finds its children ready. A slot prepared for other
settings (device, sandbox, architecture, memory cap) is let go, never reused.
"""

import atexit
import contextlib
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.engine.sandbox import Running

ROLES = ("candidate", "judge", "probe")

# (role, workdir) -> a started child, not yet handed its job.
Starter = Callable[[str, Path], Running]


@dataclass
class Slot:
    key: tuple[object, ...]
    folder: Path
    children: dict[str, Running] = field(default_factory=dict)

    def take(self, role: str) -> Running | None:
        return self.children.pop(role, None)

    def release(self) -> None:
        """Let go of the children no job was handed to (a probe that the cache made needless,
        or all of them where the evaluation stopped early)."""
        for running in self.children.values():
            with contextlib.suppress(Exception):
                running.discard()
        self.children.clear()


class Pool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: Slot | None = None

    def take(
        self, key: tuple[object, ...], make_folder: Callable[[], Path], starter: Starter
    ) -> Slot:
        """The ready slot for `key`, or one started now; either way the next is started."""
        with self._lock:
            ready, self._ready = self._ready, None
        if ready is not None and ready.key != key:
            discard_slot(ready)
            ready = None
        slot = ready or start_slot(key, make_folder(), starter)
        next_slot = start_slot(key, make_folder(), starter)
        with self._lock:
            stale, self._ready = self._ready, next_slot
        if stale is not None:
            discard_slot(stale)
        return slot

    def close(self) -> None:
        with self._lock:
            ready, self._ready = self._ready, None
        if ready is not None:
            discard_slot(ready)


def start_slot(key: tuple[object, ...], folder: Path, starter: Starter) -> Slot:
    slot = Slot(key, folder)
    try:
        for role in ROLES:
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
