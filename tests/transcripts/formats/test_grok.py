"""Grok CLI sessions: updates.jsonl with summary.json, chat_history.jsonl alone, detection and
hostile logs."""

from __future__ import annotations

import json

import pytest

from tests.transcripts.render.injection import PAYLOADS
from transcript_formats import (
    ArchiveLimits,
    EventKind,
    TranscriptFormatError,
    detect_format,
    parse_bytes,
    parse_path,
)
from transcript_formats.diffs import apply_unified_diff
from transcript_formats.records import RAW_CAP_CHARS

from .hostile_logs import assert_payloads_stay_text, fuzz
from .transcript_readers import FIXTURES, events_of, texts, usage_tuple

SESSION = FIXTURES / "grok_session"
SESSION_ID = "019b8f2e-4c1a-7d30-9e55-0a6c3b2d1f48"
FOLDER = SESSION / "%2Fw%2Fkernels" / SESSION_ID
CHAT = FIXTURES / "grok_chat_history.jsonl"


@pytest.fixture(scope="module")
def grok():
    return parse_path(SESSION)


def updates(*changes: dict, method: str = "session/update") -> bytes:
    lines = [
        {"timestamp": 1771000000 + n, "method": method, "params": {"sessionId": "s", "update": u}}
        for n, u in enumerate(changes)
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def test_each_prompt_carries_the_usage_of_all_its_model_calls(grok):
    calls = [(t.model, usage_tuple(t.usage)) for t in grok.main.turns if t.usage is not None]
    assert calls == [
        # inputTokens 12000 include 9000 cached; reasoningTokens 300 are output: 800 + 300
        ("grok-code-fast-1", (12000 - 9000, 800 + 300, 9000, 0)),
        # totalTokens 5100 = 5000 + 100: the 50 reasoning tokens are already in the output
        ("grok-code-fast-1", (5000 - 4000, 100, 4000, 0)),
    ]
    # 3000 + 1000 uncached in, 1100 + 100 out, 9000 + 4000 cache reads
    assert usage_tuple(grok.usage()) == (4000, 1200, 13000, 0)


def test_streamed_chunks_join_into_one_prompt_one_thought_and_one_message(grok):
    assert texts(grok, EventKind.USER_TEXT) == ["Speed up tile.py", "Now add a benchmark"]
    assert texts(grok, EventKind.REASONING) == ["Read it first."]
    assert texts(grok, EventKind.ASSISTANT_TEXT) == [
        "I'll use range directly.",
        "Edited; one test fails.",
        "Stopping here.",
    ]


def test_tool_calls_are_named_from_their_meta_and_their_last_output_is_the_result(grok):
    calls = {e.call_id: e for e in events_of(grok, EventKind.TOOL_CALL)}
    assert [c.tool_name for c in calls.values()] == [
        "read_file",
        "search_replace",
        "run_terminal_command",
    ]
    assert calls["call-3"].arguments == {"command": "pytest -q"}
    results = {e.call_id: e for e in events_of(grok, EventKind.TOOL_RESULT)}
    assert len(results) == 3  # one result a call, however many updates it had
    # The completed update carried no content: the in-progress output stays.
    assert results["call-1"].text == "def tile(n):\n    return [i for i in range(n)]\n"
    assert results["call-2"].text == "Edited tile.py"
    assert (
        results["call-3"].is_error and results["call-3"].text == "1 failed, 2 passed\nexit code 1"
    )


def test_a_diff_block_is_the_file_change(grok):
    [change] = events_of(grok, EventKind.FILE_CHANGE)
    assert change.path == "tile.py" and change.call_id == "call-2"
    before = "def tile(n):\n    return [i for i in range(n)]\n"
    assert apply_unified_diff(before, change.diff) == "def tile(n):\n    return list(range(n))\n"


def test_summary_json_gives_the_session_details(grok):
    assert grok.format == "grok-cli" and grok.session_id == SESSION_ID
    assert (grok.cwd, grok.git_branch, grok.model) == ("/w/kernels", "perf", "grok-code-fast-1")
    assert grok.started_at == "2026-02-13T16:26:39Z"
    assert "Session title: Speed up tile.py" in grok.notes
    # No price is known for Grok models: the cost is unknown, and the notes say why.
    assert grok.cost_usd is None
    assert any("No price known for grok-code-fast-1" in note for note in grok.notes)


def test_notices_unknown_updates_and_the_malformed_line(grok):
    assert texts(grok, EventKind.SYSTEM_NOTICE) == [
        "Plan:\n[pending] Fix the failing test",
        "Turn ended: cancelled",
    ]
    [unknown] = events_of(grok, EventKind.UNKNOWN)
    assert unknown.raw_type == "update:hyperdrive"
    [bad] = grok.malformed
    assert bad.source == f"%2Fw%2Fkernels/{SESSION_ID}/updates.jsonl" and bad.line == 19


def test_chat_history_alone_is_read_without_times_or_tokens():
    grok = parse_path(CHAT)
    assert grok.format == "grok-cli"
    assert texts(grok, EventKind.USER_TEXT) == ["Why is mm.py slow?", "thanks"]
    notices = texts(grok, EventKind.SYSTEM_NOTICE)
    assert notices[0] == "You are Grok, a coding agent."
    assert notices[1] == "<user_info>\nOS: linux\n</user_info>"  # sent along with the prompt
    assert notices[2] == "<system-reminder>Skills: none</system-reminder>"
    assert texts(grok, EventKind.REASONING) == ["Profile first.", "[encrypted reasoning]"]
    read, grep = events_of(grok, EventKind.TOOL_CALL)
    assert read.arguments == {"target_file": "mm.py"}
    assert grep.arguments == '{"pattern": "for i"'  # cut JSON is kept as the text it is
    results = {e.call_id: e.tool_name for e in events_of(grok, EventKind.TOOL_RESULT)}
    assert results == {"c1": "read_file", "c2": "grep"}
    assert {t.model for t in grok.main.turns if t.model} == {"grok-4"}
    assert events_of(grok, EventKind.UNKNOWN)[0].raw_type == "teleport"
    assert usage_tuple(grok.usage()) == (0, 0, 0, 0)
    assert grok.started_at is None and grok.cost_usd is None
    assert "Read from chat_history.jsonl, which records no times and no tokens." in grok.notes


def test_grok_files_are_detected_and_other_logs_are_not_taken_for_them():
    assert detect_format(SESSION) == "grok-cli"
    assert detect_format(FOLDER / "updates.jsonl") == "grok-cli"
    assert detect_format(FOLDER / "chat_history.jsonl") == "grok-cli"
    assert detect_format(CHAT) == "grok-cli"
    for other in ("claude_code_2_1", "codex_rollout", "cursor_stream.jsonl", "openai_chat.json"):
        assert detect_format(FIXTURES / other) != "grok-cli"


def test_a_prompt_given_in_several_models_is_noted():
    usage = {"inputTokens": 10, "outputTokens": 2, "modelUsage": {"grok-4": {}, "grok-3": {}}}
    grok = parse_bytes(
        updates(
            {"sessionUpdate": "user_message_chunk", "content": text("hi")},
            {"sessionUpdate": "agent_message_chunk", "content": text("yo")},
            {"sessionUpdate": "turn_completed", "stop_reason": "end_turn", "usage": usage},
        ),
        "updates.jsonl",
    )
    assert usage_tuple(grok.usage()) == (10, 2, 0, 0)
    assert any("several models (grok-3, grok-4)" in note for note in grok.notes)


# -- hostile logs ------------------------------------------------------------------------------


def test_payloads_in_every_field_stay_text_on_the_page():
    changes: list[dict] = []
    for n, p in enumerate(PAYLOADS):
        call = f"call-{n}"
        changes += [
            {"sessionUpdate": "user_message_chunk", "content": text(p)},
            {"sessionUpdate": "agent_thought_chunk", "content": text(p)},
            {"sessionUpdate": "agent_message_chunk", "content": text(p)},
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call,
                "title": p,
                "rawInput": {p: p},
                "_meta": {"x.ai/tool": {"name": p}},
            },
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "status": "failed" if n % 2 else "completed",
                "content": [
                    {"type": "content", "content": text(p)},
                    {"type": "diff", "path": p, "oldText": p, "newText": p + p},
                ],
            },
            {"sessionUpdate": "plan", "entries": [{"content": p, "status": p}]},
            {"sessionUpdate": p, p: p},
            {"sessionUpdate": "turn_completed", "stop_reason": p, "usage": {"modelUsage": {p: {}}}},
        ]
    grok = parse_bytes(updates(*changes), "updates.jsonl")
    assert len(events_of(grok, EventKind.FILE_CHANGE)) == len(PAYLOADS)
    assert_payloads_stay_text(grok)
    chat = [
        {"type": "system", "content": PAYLOADS[0]},
        *(
            line
            for n, p in enumerate(PAYLOADS)
            for line in (
                {"type": "user", "content": [text(f"{p}<user_query>{p}</user_query>")]},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": p}]},
                {
                    "type": "assistant",
                    "content": p,
                    "model_id": p,
                    "tool_calls": [{"id": f"c{n}", "name": p, "arguments": p}],
                },
                {"type": "tool_result", "tool_call_id": f"c{n}", "content": p},
                {"type": p, p: p},
            )
        ),
    ]
    data = "".join(json.dumps(line) + "\n" for line in chat).encode()
    assert_payloads_stay_text(parse_bytes(data, "chat_history.jsonl"))


def test_an_unknown_update_is_kept_capped_and_a_huge_chunk_is_read():
    huge = "x" * 3_000_000
    grok = parse_bytes(
        updates(
            {"sessionUpdate": "user_message_chunk", "content": text(huge)},
            {"sessionUpdate": "mystery", "blob": "y" * 100_000},
        ),
        "updates.jsonl",
    )
    assert texts(grok, EventKind.USER_TEXT) == [huge]
    [unknown] = events_of(grok, EventKind.UNKNOWN)
    assert isinstance(unknown.raw, str) and len(unknown.raw) < RAW_CAP_CHARS + 100


def test_a_log_over_the_size_limit_is_refused_naming_it():
    data = updates({"sessionUpdate": "user_message_chunk", "content": text("z" * 5000)})
    with pytest.raises(TranscriptFormatError, match=r"updates\.jsonl"):
        parse_bytes(data, "updates.jsonl", limits=ArchiveLimits(max_total_bytes=1024))


def test_a_summary_alone_is_refused_naming_the_format():
    with pytest.raises(TranscriptFormatError, match=r"summary\.json: read as grok-cli"):
        parse_bytes((FOLDER / "summary.json").read_bytes(), "summary.json")


@pytest.mark.parametrize("path", [SESSION, CHAT, FOLDER / "updates.jsonl"])
def test_mangled_logs_are_read_or_refused_with_a_format_error_only(path):
    read = fuzz(path, rounds=80, seed=11, check=lambda t: None)
    assert read > 40  # not vacuous: most mangled copies are still read


def test_arguments_nested_past_the_json_depth_are_kept_as_their_text():
    deep = "[" * 100_000 + "]" * 100_000
    lines = [
        {"type": "user", "content": "<user_query>go</user_query>", "prompt_index": 0},
        {
            "type": "assistant",
            "content": "",
            "tool_calls": [{"id": "c", "name": "x", "arguments": deep}],
        },
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    [call] = events_of(parse_bytes(data, "chat_history.jsonl"), EventKind.TOOL_CALL)
    assert call.arguments == deep


def test_an_image_sent_with_a_prompt_is_kept():
    grok = parse_bytes(
        updates(
            {"sessionUpdate": "user_message_chunk", "content": text("What is this?")},
            {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            },
            {"sessionUpdate": "agent_message_chunk", "content": text("A plot.")},
        ),
        "updates.jsonl",
    )
    [prompt] = events_of(grok, EventKind.USER_TEXT)
    assert prompt.text == "What is this?"
    [image] = prompt.images
    assert (image.media_type, image.data) == ("image/png", "iVBORw0KGgo=")
