"""Cursor agent transcripts (agent-transcripts/<id>/<id>.jsonl and its subagents/)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from transcript_formats import EventKind, parse_bytes, parse_path
from transcript_formats.cursor_transcripts import cursor_time, split_prompt
from transcript_formats.diffs import apply_unified_diff

from .transcript_readers import FIXTURES, events_of, texts, usage_tuple

SESSION = "c0ffee01-aaaa-4bbb-8ccc-000000000001"
FOLDER = FIXTURES / "cursor_transcripts" / SESSION
AGENT = "agent-a9e47c10-bbbb-4ccc-8ddd-000000000002"


@pytest.fixture(scope="module")
def cursor():
    return parse_path(FIXTURES / "cursor_transcripts")


def test_prompts_lose_cursors_wrappers_and_keep_what_it_attached(cursor):
    assert texts(cursor, EventKind.USER_TEXT, "main") == [
        "Make the softmax kernel faster.",
        "now run the tests",
    ]
    [attached] = texts(cursor, EventKind.SYSTEM_NOTICE, "main")[:1]
    assert attached == "<attached_files>\nsoftmax.py (lines 1-40)\n</attached_files>"


def test_each_assistant_line_is_a_model_call_with_its_text_reasoning_and_tools(cursor):
    assert [len(t.events) for t in cursor.main.turns][:4] == [2, 3, 1, 4]
    assert texts(cursor, EventKind.REASONING, "main") == ["[REDACTED]", "[REDACTED]"]
    calls = events_of(cursor, EventKind.TOOL_CALL, "main")
    assert [c.tool_name for c in calls] == ["Read", "Shell", "StrReplace", "Write", "Task", "Shell"]
    assert calls[1].arguments == {"command": "python bench.py", "description": "Time the kernel"}
    assert texts(cursor, EventKind.ASSISTANT_TEXT, "main")[-1].startswith("Done: the kernel")


def test_writes_and_replacements_become_file_changes(cursor):
    replace, write = events_of(cursor, EventKind.FILE_CHANGE, "main")
    assert replace.path == "/w/softmax.py" and replace.tool_name == "StrReplace"
    assert apply_unified_diff("m = x.max()\ns = x.sum()\n", replace.diff) == "m, s = fused(x)\n"
    assert write.diff.startswith("--- /dev/null\n+++ b/w/fused.py\n@@ -0,0 +1,2 @@\n")


def test_the_subagent_hangs_under_the_task_call_that_had_its_prompt(cursor):
    sub = cursor.thread(AGENT)
    assert sub.kind == "subagent" and sub.title == "Find the callers"
    [spawn] = events_of(cursor, EventKind.SUBAGENT_SPAWN)
    assert spawn.child_thread == AGENT and sub.parent_event == spawn.id
    task_turn = next(t for t in cursor.main.turns if spawn in t.events)
    assert [e.kind for e in task_turn.events] == [EventKind.TOOL_CALL, EventKind.SUBAGENT_SPAWN]
    assert [c.tool_name for c in events_of(cursor, EventKind.TOOL_CALL, AGENT)] == ["Grep"]


def test_an_aborted_turn_is_a_notice_and_a_bad_line_is_counted(cursor):
    notice = texts(cursor, EventKind.SYSTEM_NOTICE, "main")[-1]
    assert notice == "Turn ended: aborted: User aborted/interrupted manually."
    [bad] = cursor.malformed
    assert bad.source == f"{SESSION}/{SESSION}.jsonl" and bad.line == 11


def test_no_usage_cost_model_or_duration_is_invented(cursor):
    # Cursor writes no tokens, no model and no times but the prompts' own.
    assert usage_tuple(cursor.usage()) == (0, 0, 0, 0)
    assert all(turn.usage is None for t in cursor.threads for turn in t.turns)
    assert cursor.model is None and cursor.cost_usd is None
    assert cursor.started_at == "2026-06-01T07:14:00Z" and cursor.duration_s is None
    assert cursor.session_id == SESSION and cursor.format == "cursor-agent-transcript"


def test_the_main_file_alone_brings_its_subagents_folder():
    transcript = parse_path(FOLDER / f"{SESSION}.jsonl")
    assert [t.id for t in transcript.threads] == ["main", AGENT]


def test_an_unlinked_subagent_is_shown_at_the_end_with_a_note():
    main = b'{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}\n'
    main += b'{"role":"assistant","message":{"content":[{"type":"text","text":"hello"}]}}\n'
    agent = b'{"role":"user","message":{"content":"look around"}}\n'
    agent += b'{"role":"assistant","message":{"content":[{"type":"text","text":"done"}]}}\n'
    transcript = _zipped({"s/s.jsonl": main, "s/subagents/x.jsonl": agent})
    [spawn] = events_of(transcript, EventKind.SUBAGENT_SPAWN)
    assert spawn.child_thread == "agent-x" and spawn in transcript.main.turns[-1].events
    assert transcript.notes == ["Subagent x matches no Task call; it is shown at the end."]


def test_tool_result_and_command_output_blocks_are_results():
    lines = [
        {"role": "user", "message": {"content": [{"type": "text", "text": "run it"}]}},
        {
            "role": "assistant",
            "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Shell"}]},
        },
        {
            "role": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "ok"}],
                    },
                    {"type": "command_output", "output": "3 passed"},
                ]
            },
        },
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    transcript = parse_bytes(data, "t.jsonl")
    results = events_of(transcript, EventKind.TOOL_RESULT)
    assert [(r.call_id, r.text) for r in results] == [("t1", "ok"), (None, "3 passed")]


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("Monday, Jun 1, 2026, 9:14 AM (UTC+2)", "2026-06-01T07:14:00Z"),
        ("Sunday, Aug 2, 2026, 3:51 AM (UTC-7)", "2026-08-02T10:51:00Z"),
        ("Friday, January 9, 2026, 12:05 PM (UTC+5:30)", "2026-01-09T06:35:00Z"),
        ("Friday, Jan 9, 2026, 12:05 AM (UTC)", "2026-01-09T00:05:00Z"),
        ("Friday, Feb 30, 2026, 1:00 PM (UTC)", None),
        ("yesterday", None),
    ],
)
def test_cursor_prompt_times_read_as_utc(text, iso):
    assert cursor_time(text) == iso


def test_a_prompt_without_a_query_wrapper_is_taken_whole():
    assert split_prompt("  plain words  ") == ("plain words", "", None)


def _zipped(files: dict[str, bytes]):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return parse_bytes(buffer.getvalue(), "cursor.zip")
