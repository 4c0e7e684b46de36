"""Cursor stream-json, Gemini CLI sessions, OpenAI chat messages and Anthropic Messages lists."""

from __future__ import annotations

import pytest

from transcript_formats import EventKind, parse_path
from transcript_formats.diffs import apply_unified_diff

from .transcript_readers import FIXTURES, events_of, texts, usage_tuple


@pytest.fixture(scope="module")
def cursor():
    return parse_path(FIXTURES / "cursor_stream.jsonl")


def test_cursor_diff_string_becomes_the_file_change(cursor):
    edit, write = events_of(cursor, EventKind.FILE_CHANGE)
    assert edit.path == "/w/k.py" and edit.tool_name == "edit"
    assert edit.diff == "--- a/w/k.py\n+++ b/w/k.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    assert apply_unified_diff("x = 1\n", edit.diff) == "x = 2\n"
    assert write.diff == "--- /dev/null\n+++ b/w/new.py\n@@ -0,0 +1,2 @@\n+print(1)\n+print(2)\n"


def test_cursor_calls_results_thinking_and_turns(cursor):
    calls = events_of(cursor, EventKind.TOOL_CALL)
    assert [c.tool_name for c in calls] == ["edit", "shell", "write"]
    assert calls[0].call_id == "call_e\nfc_1"  # call ids may hold a newline
    shell = next(e for e in events_of(cursor, EventKind.TOOL_RESULT) if e.tool_name == "shell")
    assert shell.is_error and shell.text == "1 failed"
    assert texts(cursor, EventKind.REASONING) == ["Need to tile it."]
    # the model call mc-1 holds the thinking before it, its text and its three tool calls
    [mc1] = [t for t in cursor.main.turns if any(e.call_id == "call_s" for e in t.events)]
    assert sum(e.kind == EventKind.TOOL_CALL for e in mc1.events) == 3
    assert mc1.events[0].kind == EventKind.REASONING
    assert [t.model for t in cursor.main.turns] == [None, "Claude 4.5 Sonnet", "Claude 4.5 Sonnet"]
    assert cursor.duration_s == pytest.approx(4.986) and not cursor.is_error
    assert cursor.model == "Claude 4.5 Sonnet" and cursor.cost_usd is None
    assert events_of(cursor, EventKind.UNKNOWN)[0].raw_type == "interaction_query"


@pytest.fixture(scope="module")
def gemini():
    return parse_path(FIXTURES / "gemini_session.json")


def test_gemini_tokens_drop_the_cached_part_and_add_thoughts_to_output(gemini):
    [turn] = [t for t in gemini.main.turns if t.usage is not None]
    assert usage_tuple(turn.usage) == (8000 - 6000, 300 + 200, 6000, 0)
    # gemini-2.5-pro: $1.25 in, $10 out, $0.125 cached (per million)
    assert gemini.cost_usd == pytest.approx((2000 * 1.25 + 500 * 10 + 6000 * 0.125) / 1e6)


def test_gemini_messages_thoughts_tools_and_file_diff(gemini):
    assert gemini.session_id == "gem-1"
    assert texts(gemini, EventKind.USER_TEXT) == ["Fix k.py"]
    assert texts(gemini, EventKind.REASONING) == ["Reading\nLook at k.py first."]
    [change] = events_of(gemini, EventKind.FILE_CHANGE)
    assert change.path == "k.py" and change.diff.startswith("--- k.py")
    assert apply_unified_diff("x = 1\n", change.diff) == "x = 2\n"
    _, shell = events_of(gemini, EventKind.TOOL_RESULT)
    assert shell.is_error and "exit 1" in shell.text
    [notice] = events_of(gemini, EventKind.SYSTEM_NOTICE)
    assert notice.is_error and notice.text == "Quota exceeded"
    assert events_of(gemini, EventKind.UNKNOWN)[0].raw_type == "nebula"


def test_openai_chat_messages_join_tool_results_and_count_usage():
    chat = parse_path(FIXTURES / "openai_chat.json")
    assert chat.format == "openai-chat-messages"
    [call] = events_of(chat, EventKind.TOOL_CALL)
    assert call.tool_name == "write_file" and call.arguments == {"path": "add.py", "content": "x"}
    [result] = events_of(chat, EventKind.TOOL_RESULT)
    assert result.call_id == "call_1" and result.tool_name == "write_file"
    # prompt tokens include the cached ones: (120 - 100) + 160
    assert usage_tuple(chat.usage()) == (180, 35, 100, 0)
    assert texts(chat, EventKind.SYSTEM_NOTICE) == ["You write kernels."]


def test_anthropic_messages_list_with_thinking_and_tools():
    messages = parse_path(FIXTURES / "anthropic_messages.json")
    assert messages.format == "anthropic-messages"
    assert messages.model == "claude-opus-4-5"
    assert texts(messages, EventKind.REASONING) == ["Use the profiler."]
    [result] = events_of(messages, EventKind.TOOL_RESULT)
    assert result.text == "1.2 ms" and result.tool_name == "bash"
    assert texts(messages, EventKind.ASSISTANT_TEXT) == ["1.2 ms."]
    assert texts(messages, EventKind.SYSTEM_NOTICE) == ["Be brief."]
