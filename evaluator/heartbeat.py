"""The heartbeat of a grading: its worker renews the evaluation's lease while it grades.

The lease (ARENA_GRADER_LEASE_S) is much shorter than an evaluation can take, so a dead worker's
grading is taken over within a lease and a sweep; the heartbeat keeps a live worker's from being
taken. A beat that finds the evaluation held by another attempt is the end of this one.
"""

import logging
import threading
from collections.abc import Callable

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)


class Heartbeat(threading.Thread):
    """Calls `renew` every `interval_s` while the block runs. The first False it returns (the
    row was claimed again by another attempt) sets `lost` and ends the beats: the grading
    hands `lost` to the grader as its stop signal."""

    def __init__(self, *, renew: Callable[[], bool], interval_s: float, name: str) -> None:
        super().__init__(daemon=True, name=name)
        self.renew, self.interval_s = renew, interval_s
        self.done = threading.Event()
        self.lost = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(self.interval_s):
                if not self._beat():
                    logger.warning("%s: held by another attempt; this one stops", self.name)
                    self.lost.set()
                    return
        finally:
            connection.close()  # this thread's own connection

    def _beat(self) -> bool:
        # A beat the database refuses (locked, a dropped connection) is tried again at the next;
        # the lease outlasts a missed one.
        try:
            return self.renew()
        except DatabaseError:
            logger.warning("%s: lease not renewed this time", self.name, exc_info=True)
            connection.close()
            return True

    def __enter__(self) -> "Heartbeat":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.join(timeout=30)
