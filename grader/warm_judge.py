"""Warm judges: one long-lived judge child per grading process and setting (device, sandbox,
architecture, paths), serving one evaluation's judge job after another (child.warm_main) and
keeping, between them, each case's expected outputs within a byte budget (reference_cache.py).
A leaderboard grades many agents' solutions of the same tasks: the next solution of a task whose
cases the judge holds runs only its own code and the comparison.

What keeps every isolation property (docs/grading-pipeline.md):
- the warm judge is a plain process that imports the grader and the tasks' references, never a
  solution; its job is handed over only after the candidate's whole process tree is gone, as a
  one-job judge's is, so it maps a candidate's outputs only then;
- it exports nothing, so no candidate holds a handle to its memory, and what it caches is in its
  own host memory;
- a job that fails, times out or is stopped ends the process (the next evaluation starts a new
  one), and torch's process-wide settings are put back after every job (child.TorchGlobals).
"""

import atexit
import contextlib
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from sandboxes.backends import Outcome, Running

# A started warm judge and its folder.
Started = tuple[Running, Path]


class WarmJudges:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[object, ...], Started] = {}

    def serve(
        self,
        key: tuple[object, ...],
        start: Callable[[], Started],
        job_line: str,
        timeout_s: float,
        stop: threading.Event | None = None,
    ) -> Outcome:
        """The job served by the warm judge for `key`, started first where there is none (or
        the one held has died); a judge prepared for other settings is let go."""
        with self._lock:
            stale = [k for k in self._held if k != key]
            dropped = [self._held.pop(k) for k in stale]
            held = self._held.pop(key, None)
        for started in dropped:
            _close(started)
        if held is not None and not held[0].alive():
            _close(held)
            held = None
        running, folder = held or start()
        outcome = running.serve(job_line, timeout_s, stop, end_event="served")
        if outcome.returncode == 0 and running.alive():
            with self._lock:
                self._held[key] = (running, folder)
        else:
            _close((running, folder))
        return outcome

    def close(self) -> None:
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for started in held:
            _close(started)

    def held(self) -> list[Running]:
        with self._lock:
            return [running for running, _ in self._held.values()]


def _close(started: Started) -> None:
    running, folder = started
    with contextlib.suppress(Exception):
        running.discard()
    shutil.rmtree(folder, ignore_errors=True)


WARM = WarmJudges()
atexit.register(WARM.close)
