"""Active time: the gaps between events, each counted up to the idle threshold."""

from __future__ import annotations

from tests.transcripts.render.samples import showcase, stamp
from transcript_formats.schema import Event, EventKind, Thread, Transcript, Turn
from transcript_render import export_html
from transcript_render.timing import IDLE_AFTER_S, parse_time, transcript_timing


def turn(index: int, *seconds: int, thread: str = "m") -> Turn:
    events = [
        Event(f"{thread}{index}-{n}", EventKind.ASSISTANT_TEXT, timestamp=stamp(s))
        for n, s in enumerate(seconds)
    ]
    return Turn(index=index, events=events)


def test_a_session_left_open_for_two_days_counts_only_its_active_minutes():
    # Work 0-600 s, gone for two days, then 120 s more: 49 h of wall time.
    turns = [turn(1, 0, 300, 600), turn(2, 600 + 2 * 86_400, 600 + 2 * 86_400 + 120)]
    timing = transcript_timing(Transcript(format="t", threads=[Thread(id="m", turns=turns)]))
    # 300 + 300 (turn 1), the 2-day gap counted as IDLE_AFTER_S, then 120.
    assert timing.active_s == 300 + 300 + IDLE_AFTER_S + 120
    assert timing.wall_s == 2 * 86_400 + 720
    assert timing.turns[id(turns[0])] == 600
    assert timing.turns[id(turns[1])] == IDLE_AFTER_S + 120


def test_a_subagent_working_while_its_parent_waits_is_counted_once():
    # The parent calls at 0 and gets the answer at 900; the subagent works 100..800.
    main = Thread(id="m", turns=[turn(1, 0, 900)])
    sub = Thread(id="s", kind="subagent", turns=[turn(1, 100, 400, 700, 800, thread="s")])
    timing = transcript_timing(Transcript(format="t", threads=[main, sub]))
    # Merged: 0,100,400,700,800,900 -> 100+300+300+100+100, no gap over the threshold.
    assert timing.active_s == 900
    assert timing.turns[id(main.turns[0])] == 900  # the parent waited through all of it
    assert timing.turns[id(sub.turns[0])] == 700


def test_a_long_tool_run_counts_up_to_the_threshold():
    turns = [turn(1, 0, 1_200)]
    timing = transcript_timing(Transcript(format="t", threads=[Thread(id="m", turns=turns)]))
    assert timing.active_s == IDLE_AFTER_S


def test_logs_without_timestamps_have_no_active_time():
    events = [Event("a", EventKind.ASSISTANT_TEXT, timestamp=None)]
    transcript = Transcript(
        format="t", threads=[Thread(id="m", turns=[Turn(1, events)])], duration_s=12.0
    )
    timing = transcript_timing(transcript)
    assert timing.active_s is None and timing.wall_s == 12.0 and timing.turns == {}


def test_unreadable_zoneless_and_backward_timestamps():
    assert parse_time("not a time") is None and parse_time("") is None
    assert parse_time("2025-11-20T10:00:00") == parse_time("2025-11-20T10:00:00+00:00")
    assert parse_time("2025-11-20T10:00:00.5Z") == parse_time("2025-11-20T10:00:00Z") + 0.5
    events = [
        Event("a", EventKind.ASSISTANT_TEXT, timestamp=stamp(100)),
        Event("b", EventKind.ASSISTANT_TEXT, timestamp="<script>"),
        Event("c", EventKind.ASSISTANT_TEXT, timestamp=stamp(40)),  # earlier than the one before
        Event("d", EventKind.ASSISTANT_TEXT, timestamp=stamp(160)),
    ]
    turns = [Turn(1, events)]
    timing = transcript_timing(Transcript(format="t", threads=[Thread(id="m", turns=turns)]))
    assert timing.active_s == 120  # 40 -> 100 -> 160
    assert timing.turns[id(turns[0])] == 60  # never negative: 100 -> 160


def test_the_page_shows_active_and_wall_time_and_per_turn_durations():
    html = export_html(showcase(3))
    # 59 s of work in turns 1-4, 10 s and 10 s, then a day's gap counted as 5 min.
    assert 'Active time</div><div class="v">6 min 19 s' in html
    assert "wall 24 h 01 min" in html
    assert (
        '<span class="dur" title="active time: gaps over 5 min 00 s count as idle">53.0 s' in html
    )
