"""Hanging a subagent's thread under the event that spawned it."""

from __future__ import annotations

from .records import EventIds
from .schema import Event, EventKind, Thread, Turn


def spawn_after(
    child: Thread, parent: Thread, turn: Turn, after: Event | None, ids: EventIds
) -> Event:
    """Put a SUBAGENT_SPAWN event for `child` right after `after` in `turn` (at its end when
    None), and make it the child's parent event."""
    event = Event(
        id=ids.next(),
        kind=EventKind.SUBAGENT_SPAWN,
        text=child.title,
        child_thread=child.id,
        tool_name=after.tool_name if after else None,
        call_id=after.call_id if after else None,
        timestamp=after.timestamp if after else turn.timestamp,
        line=after.line if after else None,
    )
    places = [i for i, e in enumerate(turn.events) if e is after]
    position = places[0] + 1 if places else len(turn.events)
    turn.events.insert(position, event)
    child.parent_thread, child.parent_event = parent.id, event.id
    return event
