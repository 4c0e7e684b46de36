"""How long a run and each of its turns took, with idle time left out.

A session file spans however long its window stayed open: one left overnight reads "49 h 38
min" by its first and last timestamps. Active time is the sum of the gaps between consecutive
timestamped events, each gap counted up to IDLE_AFTER_S; whatever a gap lasts beyond that is
idle (the user away, the machine asleep). The events of every thread are merged into one
timeline first (subagents and abandoned branches included), so a subagent working while its
parent waits is counted once, not twice.

A turn's duration is the active time from the previous event of its thread to its own last
event: the model's time to write it, the tools it ran, and any subagents it waited for.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from datetime import UTC, datetime

from transcript_formats.schema import Transcript, Turn

IDLE_AFTER_S = 300.0


@dataclass
class Timing:
    active_s: float | None  # None: the log has fewer than two timestamps
    wall_s: float | None
    turns: dict[int, float]  # id(turn) -> active seconds, for turns with a timestamp


def parse_time(value: str | None) -> float | None:
    """Seconds since the epoch of an ISO 8601 timestamp (UTC when it names no zone)."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def transcript_timing(transcript: Transcript, *, idle_after_s: float = IDLE_AFTER_S) -> Timing:
    # Abandoned branches too: the model worked on them while the session ran.
    threads = [_thread_times(thread.turns) for thread in transcript.all_threads()]
    points = sorted(t for thread in threads for _, t in thread)
    if len(points) < 2:
        return Timing(None, transcript.duration_s, {})
    # active[i]: active seconds from the first point to points[i].
    active = [0.0]
    for before, after in itertools.pairwise(points):
        active.append(active[-1] + min(max(after - before, 0.0), idle_after_s))

    def active_at(moment: float) -> float:
        return active[bisect.bisect_right(points, moment) - 1]

    turns: dict[int, float] = {}
    for thread in threads:
        previous: float | None = None
        for turn, moment in thread:
            if previous is not None:
                spent = max(active_at(moment) - active_at(previous), 0.0)
                turns[id(turn)] = turns.get(id(turn), 0.0) + spent
            else:
                turns.setdefault(id(turn), 0.0)
            previous = moment if previous is None else max(previous, moment)
    wall = transcript.duration_s
    if wall is None:
        wall = points[-1] - points[0]
    return Timing(active[-1], wall, turns)


def _thread_times(turns: list[Turn]) -> list[tuple[Turn, float]]:
    """(turn, time) for every event with a readable timestamp, in the thread's order."""
    out = []
    for turn in turns:
        for event in turn.events:
            moment = parse_time(event.timestamp)
            if moment is not None:
                out.append((turn, moment))
        if not turn.events:
            moment = parse_time(turn.timestamp)
            if moment is not None:
                out.append((turn, moment))
    return out
