"""The command line's preludes (roles/prelude.py): work handed to the children it starts ahead
(launch.start_children_now) before its own import of torch, taken by the evaluation later.

- The analysis of a KernelBench file, in the probe's child. The evaluation reads the task from
  it (taskspec.load_task's `analysed`) where the child analysed the same bytes; anything else
  (the child died, the file changed) and the grading process analyses the file itself, as
  without a prelude.
- The compile baseline's warm-up, in the judge's child. It runs the reference on the GPU, so
  nothing may be timed while it runs: the candidate waits at its timing gate, a file this
  process makes in the candidate's folder once the warm-up has ended. A warm-up that fails, or
  has not ended within WARMUP_LIMIT_S of its hand-over, ends with its child: the judge's job
  then starts a child cold and compiles as it would have, and the gate opens. The judge's job
  is handed over only after the watch has ended (settle), so a judge never waits on a prelude.
  Where the baseline cache already holds the compiled time of every visible shape, no judge
  compiles, and no warm-up is handed: the gate opens as soon as that is known. A KernelBench
  file's shape is known here only from an earlier analysis of the same bytes (analyses.py);
  without one the warm-up is handed at once.
"""

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandboxes.backends import Running

# How long a warm-up may run from its hand-over (the child's own imports included), and so
# the longest a candidate waits at its gate; past it, the judge compiles as it would have.
WARMUP_LIMIT_S = 60.0
# The analysis's limit: a file analysed in the grading process takes as long.
ANALYSIS_LIMIT_S = 300.0
# How long the warm-up's watch may take to learn whether the baseline cache makes the warm-up
# needless (nvidia-smi names the GPU: its own limit is 20 s), so the longest a candidate's gate
# may wait for that answer on top of WARMUP_LIMIT_S.
DECIDE_LIMIT_S = 30.0
# The gate's file, in the candidate's folder (its working folder in the sandbox).
GATE_NAME = "timing-gate"
POLL_S = 0.005


@dataclass
class Prelude:
    running: Running
    first: int
    handed: float
    limit_s: float

    def wait(self, event: str) -> dict[str, Any] | None:
        """The prelude's `event` message once it is served; None where it failed, its child
        ended, or its limit passed first."""
        deadline = self.handed + self.limit_s
        while True:
            messages = self.running.messages_from(self.first)
            served = next((m for m in messages if m.get("event") == "served"), None)
            if served is not None:
                if served.get("code") != 0:
                    return None
                return next((m for m in messages if m.get("event") == event), None)
            if not self.running.alive() or time.monotonic() >= deadline:
                return None
            time.sleep(POLL_S)


def hand(running: Running, folder: Path, job: dict[str, Any], limit_s: float) -> Prelude:
    path = folder / f"{job['role']}.json"
    path.write_text(json.dumps(job))
    first = running.send_ahead(str(path))
    return Prelude(running, first, time.monotonic(), limit_s)


@dataclass
class Warmup:
    """A warm-up handed to a slot's judge, and its watch."""

    gate: Path
    deadline: float
    report: dict[str, Any] = field(default_factory=dict)
    watch: threading.Thread | None = None

    def settle(self) -> None:
        """Until the warm-up has ended, or has been ended, and the gate is open."""
        if self.watch is not None:
            self.watch.join()

    def gate_job(self) -> dict[str, Any]:
        """What the candidate's job says of its gate: where it is, and how long to wait."""
        return {
            "timing_gate": str(self.gate),
            "timing_gate_s": round(max(0.0, self.deadline - time.monotonic()) + 5.0, 3),
        }


def start_warmup(
    slot_children: dict[str, Running],
    folder: Path,
    job: dict[str, Any],
    needless: Callable[[], bool] | None = None,
) -> Warmup | None:
    """The warm-up handed to the slot's judge, watched on a thread of its own. `needless`, asked
    on that thread first, says whether the baseline cache makes the warm-up work for nothing
    (an answer it cannot give is a no)."""
    running = slot_children.get("judge")
    if running is None:
        return None
    started = time.monotonic()
    deciding_s = DECIDE_LIMIT_S if needless is not None else 0.0
    warmup = Warmup(folder / "candidate" / GATE_NAME, started + deciding_s + WARMUP_LIMIT_S)

    def watch() -> None:
        skipped = False
        if needless is not None:
            try:
                skipped = needless()
            except Exception:  # a cache or a GPU that cannot be read is a cache miss
                skipped = False
        if skipped:
            warmup.report = {
                "warmed": False,
                "needless": True,
                "seconds": round(time.monotonic() - started, 3),
                "compile_s": None,
            }
        else:
            prelude = hand(running, folder / "judge", job, WARMUP_LIMIT_S)
            warmup.deadline = prelude.handed + WARMUP_LIMIT_S
            warmup.report = _warmed(prelude, running, slot_children, started)
        with contextlib.suppress(OSError):
            warmup.gate.touch()

    warmup.watch = threading.Thread(target=watch, daemon=True)
    warmup.watch.start()
    return warmup


def _warmed(
    prelude: Prelude, running: Running, slot_children: dict[str, Running], started: float
) -> dict[str, Any]:
    message = prelude.wait("warmed")
    if message is None:
        # Failed, died or too slow: ended now, so it runs nothing more on the GPU, and the
        # judge's job starts a child cold.
        if slot_children.get("judge") is running:
            slot_children.pop("judge", None)
        with contextlib.suppress(Exception):
            running.discard()
    return {
        "warmed": message is not None,
        "needless": False,
        "seconds": round(time.monotonic() - started, 3),
        "compile_s": (message or {}).get("seconds"),
    }
