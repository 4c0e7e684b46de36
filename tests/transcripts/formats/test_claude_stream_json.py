"""`claude -p --output-format stream-json --verbose` logs."""

from __future__ import annotations

import json

import pytest

from transcript_formats import EventKind, parse_bytes, parse_path

from .transcript_readers import FIXTURES, events_of, texts, usage_tuple


@pytest.fixture(scope="module")
def stream():
    return parse_path(FIXTURES / "claude_stream.jsonl")


def test_cost_and_duration_come_from_the_result_record(stream):
    assert stream.format == "claude-code-stream-json"
    assert stream.cost_usd == pytest.approx(0.0421)
    assert stream.cost_computed is False
    assert stream.duration_s == pytest.approx(12.5)


def test_success_subtype_with_is_error_true_is_an_error(stream):
    assert stream.is_error is True
    assert stream.final_text == "API Error: 500 internal"
    notice = events_of(stream, EventKind.SYSTEM_NOTICE)[-1]
    assert notice.is_error and "4 turns" in notice.text


def test_subagent_messages_follow_parent_tool_use_id(stream):
    [sub] = [t for t in stream.threads if t.kind == "subagent"]
    assert texts(stream, EventKind.USER_TEXT, sub.id) == ["Measure it"]
    [spawn] = events_of(stream, EventKind.SUBAGENT_SPAWN)
    assert spawn.call_id == "toolu_S" and sub.parent_event == spawn.id
    [failed] = events_of(stream, EventKind.TOOL_RESULT, sub.id)
    assert failed.is_error and failed.tool_name == "Bash"


def test_repeated_usage_lines_of_one_message_count_once(stream):
    main_calls = [t.usage for t in stream.main.turns if t.usage is not None]
    assert [usage_tuple(u) for u in main_calls] == [(3, 25, 0, 500), (2, 15, 520, 0)]
    assert usage_tuple(stream.usage()) == (13, 51, 520, 500)


def test_session_details_come_from_the_init_record(stream):
    assert (stream.session_id, stream.cwd, stream.cli_version) == ("sj-1", "/w", "2.0.30")
    assert stream.model == "claude-sonnet-4-5-20250929"


def test_edit_without_structured_patch_diffs_old_and_new_strings(stream):
    [change] = events_of(stream, EventKind.FILE_CHANGE)
    assert change.path == "/w/k.py"
    assert "-x = 1\n+x = 2\n" in change.diff


def test_unknown_event_type_is_kept_as_unknown(stream):
    [unknown] = events_of(stream, EventKind.UNKNOWN)
    assert unknown.raw_type == "telemetry_blip"


def test_result_usage_is_used_when_the_messages_carry_none():
    lines = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": "x",
            "tools": [],
            "model": "claude-opus-4-5",
        },
        {
            "type": "assistant",
            "parent_tool_use_id": None,
            "message": {
                "id": "m",
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
            },
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "ok",
            "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 2},
        },
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    transcript = parse_bytes(data, "out.jsonl")
    assert usage_tuple(transcript.usage()) == (7, 3, 2, 0)
    assert transcript.cost_computed  # no total_cost_usd in this result
