"""Qwen Code session JSONL: prompts, reasoning, tool calls and results, usage, subagents."""

from __future__ import annotations

import json

import pytest

from transcript_formats import EventKind, detect_format, parse_bytes, parse_path
from transcript_formats.diffs import apply_unified_diff

from .transcript_readers import FIXTURES, events_of, texts, usage_tuple

PATH = FIXTURES / "qwen_chat.jsonl"
AGENT = "agent-explore-7f3c"


@pytest.fixture(scope="module")
def qwen():
    return parse_path(PATH)


def test_qwen_is_not_read_as_a_claude_code_session():
    # Its records carry uuid, parentUuid, sessionId and type user/assistant like Claude Code's.
    assert detect_format(PATH) == "qwen-code-jsonl"


def test_usage_counts_each_model_call_once_and_never_the_telemetry_record(qwen):
    # input = prompt - cached (+ tool); cache = cached; output = candidates, plus thoughts
    # only where the total shows they were counted apart:
    #   q3  1200-1000 = 200   80     (total 1280 = 1200+80: 30 thoughts inside)  1000
    #   q5  1400-1200 = 200   60+40  (total 1500 = 1400+60+40)                   1200
    #   q7  1600-1400 = 200   20     (no total, no thoughts)                     1400
    #   q12  500-0    = 500   30                                                    0
    #   q17  700-300  = 400   25                                                  300
    #   main           1500  255                                                  3900
    # The ui_telemetry record's 999,999 tokens repeat an API response: not counted.
    assert usage_tuple(qwen.usage(include_subagents=False)) == (1500, 255, 3900, 0)
    #   subagent q14  300 in, 12 out
    assert usage_tuple(qwen.thread(AGENT).usage()) == (300, 12, 0, 0)
    assert usage_tuple(qwen.usage()) == (1800, 267, 3900, 0)


def test_prompt_reasoning_and_tool_calls_are_kept(qwen):
    assert texts(qwen, EventKind.USER_TEXT, "main") == ["Make add() handle floats"]
    assert texts(qwen, EventKind.REASONING, "main") == ["The signature says int."]
    calls = events_of(qwen, EventKind.TOOL_CALL, "main")
    assert [(c.tool_name, c.call_id) for c in calls] == [
        ("read_file", "call_r1"),
        ("edit", "call_e1"),
        ("run_shell_command", "call_s1"),
        ("task", "call_t1"),
    ]
    assert calls[0].arguments == {"absolute_path": "/w/add.py"}


def test_results_join_their_calls_and_failures_are_marked(qwen):
    results = {r.call_id: r for r in events_of(qwen, EventKind.TOOL_RESULT, "main")}
    assert results["call_r1"].text.startswith("def add(a: int")
    assert results["call_s1"].is_error and results["call_s1"].text == "1 failed, 3 passed"
    call_turn = next(t for t in qwen.main.turns if results["call_e1"] in t.events)
    assert [e.kind for e in call_turn.events][:2] == [EventKind.TOOL_CALL, EventKind.TOOL_RESULT]


def test_an_edit_display_becomes_the_file_change(qwen):
    [change] = events_of(qwen, EventKind.FILE_CHANGE)
    assert change.path == "add.py" and change.call_id == "call_e1"
    old = "def add(a: int, b: int) -> int:\n    return a + b\n"
    assert apply_unified_diff(old, change.diff) == old.replace("int", "float")


def test_system_records_compression_commands_notifications_and_rewinds(qwen):
    [compaction] = texts(qwen, EventKind.COMPACTION)
    assert compaction.startswith("History compressed: 1650 → 300 tokens.")
    assert "Summary: add() takes floats" in compaction
    notices = texts(qwen, EventKind.SYSTEM_NOTICE, "main")
    assert notices[:2] == ["/compress", "[notification] Background shell finished"]
    assert notices[2].startswith("Rewound: the last 2 items")
    assert events_of(qwen, EventKind.UNKNOWN)[0].raw_type == "system/future_thing"


def test_sidechain_records_form_the_subagent_under_its_task_call(qwen):
    sub = qwen.thread(AGENT)
    assert sub.kind == "subagent" and sub.title == "Explore"
    [spawn] = events_of(qwen, EventKind.SUBAGENT_SPAWN)
    assert spawn.call_id == "call_t1" and sub.parent_event == spawn.id
    assert texts(qwen, EventKind.USER_TEXT, AGENT) == ["Find the failing test and say why."]


def test_session_metadata_malformed_lines_and_unpriced_models(qwen):
    assert (qwen.session_id, qwen.cwd, qwen.git_branch, qwen.cli_version) == (
        "5e1c0a77-0000-4000-8000-00000000qwen",
        "/w",
        "main",
        "0.6.2",
    )
    assert qwen.model == "qwen3-coder-plus" and qwen.cost_usd is None
    assert qwen.notes == [
        "No price known for qwen3-coder-flash, qwen3-coder-plus; their calls are not in the cost."
    ]
    [bad] = qwen.malformed
    assert (bad.source, bad.line) == ("qwen_chat.jsonl", 19)


def test_a_result_without_a_response_part_reads_its_call_and_error():
    base = {"sessionId": "s", "cwd": "/w", "version": "0.6", "timestamp": "2026-04-10T08:00:00Z"}
    lines = [
        {
            **base,
            "uuid": "1",
            "type": "user",
            "message": {"role": "user", "parts": [{"text": "go"}]},
        },
        {
            **base,
            "uuid": "2",
            "type": "assistant",
            "message": {"role": "model", "parts": [{"functionCall": {"id": "c", "name": "ls"}}]},
        },
        {
            **base,
            "uuid": "3",
            "type": "tool_result",
            "toolCallResult": {"callId": "c", "status": "error", "error": {"message": "denied"}},
        },
    ]
    transcript = parse_bytes("".join(json.dumps(x) + "\n" for x in lines).encode(), "q.jsonl")
    [result] = events_of(transcript, EventKind.TOOL_RESULT)
    assert (result.call_id, result.tool_name, result.text, result.is_error) == (
        "c",
        "ls",
        "denied",
        True,
    )
