"""Logs of a known format that a newer CLI wrote: what is known is read, the rest is named."""

from __future__ import annotations

import json

from transcript_formats import EventKind, parse_bytes
from transcript_formats.tolerant import unknown_type_counts
from transcript_render import render_transcript

from .transcript_readers import events_of


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def newer_claude_code() -> bytes:
    base = {"sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w", "version": "3.0.0"}
    answer = {
        "id": "m1",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Writing it."}],
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    write_input = {"file_path": "/w/kernel.py", "content": "import triton\n"}
    return jsonl(
        [
            {
                **base,
                "type": "user",
                "uuid": "u1",
                "parentUuid": None,
                "message": {"role": "user", "content": "write a kernel"},
            },
            {**base, "type": "assistant", "uuid": "u2", "parentUuid": "u1", "message": answer},
            # Tool calls moved to records of their own, and telemetry of a type never seen.
            {
                **base,
                "type": "tool_use",
                "uuid": "u3",
                "parentUuid": "u2",
                "id": "toolu_1",
                "name": "Write",
                "input": write_input,
            },
            {
                **base,
                "type": "tool_result",
                "uuid": "u4",
                "parentUuid": "u3",
                "tool_use_id": "toolu_1",
                "content": "written",
            },
            {**base, "type": "telemetry_blob", "uuid": "u5", "parentUuid": "u4"},
            {**base, "type": "telemetry_blob", "uuid": "u6", "parentUuid": "u5"},
            {**base, "type": "hologram", "uuid": "u7", "parentUuid": "u6"},
        ]
    )


def test_top_level_tool_records_of_a_newer_claude_code_read_as_calls_and_results():
    transcript = parse_bytes(newer_claude_code(), "session.jsonl")
    assert transcript.format == "claude-code-jsonl"
    [call] = events_of(transcript, EventKind.TOOL_CALL)
    assert (call.tool_name, call.call_id) == ("Write", "toolu_1")
    assert call.arguments["file_path"] == "/w/kernel.py"
    [result] = events_of(transcript, EventKind.TOOL_RESULT)
    assert (result.tool_name, result.text) == ("Write", "written")


def test_each_unknown_record_type_is_named_once_with_its_count():
    transcript = parse_bytes(newer_claude_code(), "session.jsonl")
    assert unknown_type_counts(transcript) == [("telemetry_blob", 2), ("hologram", 1)]
    page = render_transcript(transcript).html
    assert page.count("telemetry_blob</code> this reader does not know") == 1
    assert "2 records of type <code>telemetry_blob</code>" in page


def test_function_call_and_result_records_among_response_items_are_read():
    rows = [
        {"type": "message", "role": "user", "content": "write a kernel"},
        {
            "type": "function_call",
            "name": "write_file",
            "call_id": "c1",
            "arguments": json.dumps({"path": "k.py", "content": "x"}),
        },
        {"type": "function_result", "call_id": "c1", "output": "ok"},
        {"type": "message", "role": "assistant", "content": "done"},
    ]
    transcript = parse_bytes(jsonl(rows), "rollout.jsonl")
    assert [e.tool_name for e in events_of(transcript, EventKind.TOOL_CALL)] == ["write_file"]
    [result] = events_of(transcript, EventKind.TOOL_RESULT)
    assert (result.call_id, result.text) == ("c1", "ok")


def test_tool_records_without_ids_read_with_the_names_they_carry():
    base = {"sessionId": "s2", "version": "1.9.0", "timestamp": "2025-12-16T01:00:00.000Z"}
    rows = [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "Open it"}},
        {**base, "type": "tool_use", "uuid": "t1", "name": "bash", "input": {"command": "cat a"}},
        {**base, "type": "tool_result", "uuid": "r1", "name": "bash", "output": "# Title\n"},
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "message": {"role": "assistant", "content": "Read it."},
        },
    ]
    transcript = parse_bytes(jsonl(rows), "session.jsonl")
    [call] = events_of(transcript, EventKind.TOOL_CALL)
    assert (call.tool_name, call.arguments) == ("bash", {"command": "cat a"})
    [result] = events_of(transcript, EventKind.TOOL_RESULT)
    assert (result.tool_name, result.text) == ("bash", "# Title\n")
    assert unknown_type_counts(transcript) == []
