"""The check every parse passes before it is shown: a log read as the wrong format, or whose
records lack their format's key fields, is refused with the format named, not rendered
half-empty (another agent's log read as a chat list shows turns with no text; read as a
stream, tool calls with no name).

A share, not a single gap, refuses a log: one nameless call or one empty message in a long
session is an odd record, shown as it is; most of them is a misread. No fixture or generated
log of any format has such gaps.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import TranscriptFormatError
from .schema import Event, EventKind, Transcript

# Reasoning is no message here: a model that withholds its thinking leaves signed, empty blocks.
MESSAGE_KINDS = frozenset({EventKind.USER_TEXT, EventKind.ASSISTANT_TEXT})
NO_NAME = frozenset({"", "?", "null", "None", "unknown"})
# Fewer gaps than this never refuse a log: a two-line subagent file with one odd record is
# still read.
MIN_GAPS = 2

Check = Callable[[Transcript, list[Event]], str | None]


def check_key_fields(
    transcript: Transcript, *, fmt: str, label: str, checks: tuple[Check, ...] = ()
) -> None:
    """Raise TranscriptFormatError naming `label` and `fmt` when the parse is not a session.
    `checks` are the format's own (its LogFormat's key_fields), run after the general ones."""
    events = transcript.events()
    if not events:
        # A log that only looks like a format (a header, a summary line) is not a session.
        raise TranscriptFormatError(
            f"{label}: read as {fmt}, but it holds no messages, tool calls or results"
        )
    for check in (*GENERAL_CHECKS, *checks):
        missing = check(transcript, events)
        if missing:
            raise TranscriptFormatError(
                f"{label}: read as {fmt}, but {missing}; it is likely a log in another format"
            )


def _mostly(part: int, whole: int) -> bool:
    return part >= MIN_GAPS and part * 2 > whole


def tool_names_present(_: Transcript, events: list[Event]) -> str | None:
    calls = [e for e in events if e.kind == EventKind.TOOL_CALL]
    nameless = sum(1 for e in calls if (e.tool_name or "").strip() in NO_NAME)
    if _mostly(nameless, len(calls)):
        return f"{nameless} of {len(calls)} tool calls have no tool name"
    return None


def message_texts_present(_: Transcript, events: list[Event]) -> str | None:
    messages = [e for e in events if e.kind in MESSAGE_KINDS]
    empty = sum(1 for e in messages if not e.text.strip() and not e.images)
    if _mostly(empty, len(messages)):
        return f"{empty} of {len(messages)} messages have no text"
    return None


def turns_filled(transcript: Transcript, _: list[Event]) -> str | None:
    turns = [turn for thread in transcript.threads for turn in thread.turns]
    hollow = sum(1 for turn in turns if not turn.events)
    if _mostly(hollow, len(turns)):
        return f"{hollow} of {len(turns)} turns hold no event"
    return None


def prompts_present(_: Transcript, events: list[Event]) -> str | None:
    """For formats that always record the user's words: prompts, none with text, were lost in
    the read."""
    prompts = [e for e in events if e.kind == EventKind.USER_TEXT]
    if len(prompts) >= MIN_GAPS and not any(e.text.strip() or e.images for e in prompts):
        return f"none of its {len(prompts)} user prompts has any text"
    return None


GENERAL_CHECKS: tuple[Check, ...] = (
    tool_names_present,
    message_texts_present,
    turns_filled,
)
