"""What every parser does last: times, the main model, and the cost when the log has none."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from .pricing import computed_cost_usd
from .schema import Transcript


def finish_transcript(transcript: Transcript) -> Transcript:
    _fill_times(transcript)
    if transcript.model is None:
        transcript.model = _most_used_model(transcript)
    if transcript.cost_usd is None:
        cost, unpriced = computed_cost_usd(transcript)
        if cost is not None:
            transcript.cost_usd = round(cost, 6)
            transcript.cost_computed = True
        if unpriced:
            transcript.notes.append(
                "No price known for " + ", ".join(unpriced) + "; their calls are not in the cost."
            )
    return transcript


def _fill_times(transcript: Transcript) -> None:
    stamps = [
        stamp
        for thread in transcript.threads
        for turn in thread.turns
        for stamp in [turn.timestamp, *(e.timestamp for e in turn.events)]
        if stamp
    ]
    if stamps:
        transcript.started_at = transcript.started_at or min(stamps)
        transcript.ended_at = transcript.ended_at or max(stamps)
    if transcript.duration_s is None and transcript.started_at and transcript.ended_at:
        start, end = parse_time(transcript.started_at), parse_time(transcript.ended_at)
        if start is not None and end is not None:
            transcript.duration_s = max(0.0, (end - start).total_seconds())


def parse_time(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _most_used_model(transcript: Transcript) -> str | None:
    counts = (
        Counter(turn.model for turn in transcript.main.turns if turn.model)
        if transcript.threads
        else Counter()
    )
    return counts.most_common(1)[0][0] if counts else None
