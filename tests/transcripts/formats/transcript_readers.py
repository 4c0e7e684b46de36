"""Small readers over a parsed transcript, shared by the format tests."""

from __future__ import annotations

from pathlib import Path

from transcript_formats import Event, EventKind, Transcript

FIXTURES = Path(__file__).parent / "fixtures"


def events_of(transcript: Transcript, kind: EventKind, thread: str | None = None) -> list[Event]:
    threads = [transcript.thread(thread)] if thread else transcript.threads
    return [e for t in threads for turn in t.turns for e in turn.events if e.kind == kind]


def texts(transcript: Transcript, kind: EventKind, thread: str | None = None) -> list[str]:
    return [e.text for e in events_of(transcript, kind, thread)]


def usage_tuple(usage: object) -> tuple[int, int, int, int]:
    return (
        usage.input_tokens,  # type: ignore[attr-defined]
        usage.output_tokens,  # type: ignore[attr-defined]
        usage.cache_read_tokens,  # type: ignore[attr-defined]
        usage.cache_write_tokens,  # type: ignore[attr-defined]
    )
