"""Where a child's time goes, step by step, when the evaluation asks for it
(EvaluateOptions.trace_steps; bench/throughput.py --trace): each step ends with the device
synchronized, so a step's seconds are its own device work and host work, not the next one's.
Off by default: the synchronizations cost a little, and a verdict never depends on them."""

import time
from typing import Any

import torch

from grader import channel


class Steps:
    def __init__(self, job: dict[str, Any]) -> None:
        self.on = bool(job.get("trace_steps"))
        self.cuda = job.get("device") == "cuda"
        self.seconds: dict[str, float] = {}
        self._last = time.monotonic()

    def start(self) -> None:
        if self.on:
            self._sync()
            self.seconds = {}
            self._last = time.monotonic()

    def mark(self, name: str) -> None:
        """The time since the last mark (or start) is `name`'s."""
        if not self.on:
            return
        self._sync()
        now = time.monotonic()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self._last, 4)
        self._last = now

    def send(self, **where: Any) -> None:
        if self.on and self.seconds:
            channel.send("steps", **where, seconds=dict(self.seconds))
        self.seconds = {}

    def _sync(self) -> None:
        # Never the step timer's to make CUDA's context: its time stays the step's that makes it.
        if self.cuda and torch.cuda.is_initialized():
            torch.cuda.synchronize()
