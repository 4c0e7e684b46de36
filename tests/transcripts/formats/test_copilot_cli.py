"""GitHub Copilot CLI session logs (events.jsonl) and its printed event stream."""

from __future__ import annotations

import json

import pytest

from transcript_formats import EventKind, TranscriptFormatError, parse_bytes, parse_path
from transcript_formats.diffs import apply_unified_diff
from transcript_formats.records import RAW_CAP_CHARS

from .hostile_logs import assert_payloads_stay_text, fuzz
from .payload_fields import carries_payloads, lines_with_payloads
from .transcript_readers import FIXTURES, events_of, texts, usage_tuple

SESSION = FIXTURES / "copilot_cli" / "events.jsonl"
STREAM = FIXTURES / "copilot_cli_stream.jsonl"


@pytest.fixture(scope="module")
def copilot():
    return parse_path(SESSION)


def lines(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_session_file_tokens_add_each_calls_output_and_each_segments_shutdown(copilot):
    turns = {t.index: t for t in copilot.main.turns}
    # Segment 1, claude-sonnet-4.5: the calls wrote 120 + 80 + 200 + 50 = 450 output tokens;
    # the shutdown says 500 output, 10,000 input of which 6,000 cache reads and 1,000 cache
    # writes. The last Sonnet call (turn 5) takes 500 - 450 = 50 more output and
    # 10,000 - 6,000 - 1,000 = 3,000 uncached input.
    assert usage_tuple(turns[2].usage) == (0, 120, 0, 0)
    assert usage_tuple(turns[5].usage) == (3000, 50 + 50, 6000, 1000)
    # Segment 2 (after the resume), gpt-5 split by agentMetrics["main"]: calls wrote 300 + 40;
    # shutdown 400 output, 20,000 input with 15,000 cache reads -> 60 more output, 5,000 input.
    assert usage_tuple(turns[9].usage) == (5000, 40 + 60, 15000, 0)
    # The haiku subagent: calls wrote 30 + 20 = 50 = the shutdown's 50; 3,000 input with
    # 2,000 cache reads -> 1,000 input on its own last call, not on the main thread.
    sub = copilot.threads[1]
    assert usage_tuple(sub.turns[-1].usage) == (1000, 20, 2000, 0)
    assert usage_tuple(sub.usage()) == (1000, 30 + 20, 2000, 0)
    # main: input 3,000 + 5,000; output 120 + 80 + 200 + 100 + 300 + 100; reads 6,000 + 15,000
    assert usage_tuple(copilot.usage(include_subagents=False)) == (8000, 900, 21000, 1000)
    assert usage_tuple(copilot.usage()) == (9000, 950, 23000, 1000)


def test_cost_is_priced_per_model_from_the_tables(copilot):
    # sonnet-4.5 $3/$15/$0.30/$3.75: 3,000*3 + 500*15 + 6,000*0.3 + 1,000*3.75 = 22,050
    # haiku-4.5 $1/$5/$0.10: 1,000*1 + 50*5 + 2,000*0.1 = 1,450
    # gpt-5 $1.25/$10/$0.125: 5,000*1.25 + 400*10 + 15,000*0.125 = 12,125   (per million)
    assert copilot.cost_computed
    assert copilot.cost_usd == pytest.approx((22050 + 1450 + 12125) / 1e6)


def test_session_details_come_from_session_start(copilot):
    assert copilot.format == "copilot-cli-events"
    assert copilot.session_id == "7c1e0a52-3b8d-4f6e-9a10-5d2c8e4b7f01"
    assert copilot.cli_version == "0.0.372"
    assert (copilot.cwd, copilot.git_branch) == ("/home/dev/kernels", "fast-k")
    assert copilot.model == "claude-sonnet-4.5"


def test_messages_reasoning_calls_and_results(copilot):
    assert texts(copilot, EventKind.USER_TEXT, "main") == [
        "Make k.py faster and check it\n\nAttached: /home/dev/kernels/k.py",
        "Also add a test",
    ]
    assert texts(copilot, EventKind.REASONING) == ["The loop in k.py is the hot spot."]
    calls = events_of(copilot, EventKind.TOOL_CALL, "main")
    assert [c.tool_name for c in calls] == ["view", "edit", "task", "bash", "apply_patch"]
    assert calls[0].arguments == {"path": "/home/dev/kernels/k.py"}
    denied = next(e for e in events_of(copilot, EventKind.TOOL_RESULT) if e.call_id == "toolu_rm")
    assert denied.is_error and denied.text == "Permission to run this tool was denied"
    notices = events_of(copilot, EventKind.SYSTEM_NOTICE)
    assert [n.text for n in notices if n.is_error] == ["model_call: Rate limited, retrying"]
    assert "Session resumed" in [n.text for n in notices]
    [compaction] = events_of(copilot, EventKind.COMPACTION)
    assert compaction.text == "We sped up k.py 2.1x."


def test_subagent_hangs_under_the_task_call_and_holds_its_own_calls(copilot):
    sub = copilot.threads[1]
    assert (sub.kind, sub.title, sub.parent_thread) == ("subagent", "Benchmark k.py", "main")
    [spawn] = events_of(copilot, EventKind.SUBAGENT_SPAWN)
    assert spawn.id == sub.parent_event and spawn.call_id == "toolu_task"
    turn = next(t for t in copilot.main.turns if spawn in t.events)
    after_call = turn.events[turn.events.index(spawn) - 1]
    assert after_call.kind == EventKind.TOOL_CALL and after_call.call_id == "toolu_task"
    [bench] = events_of(copilot, EventKind.TOOL_CALL, sub.id)
    assert bench.arguments == {"command": "python bench.py k"}  # a JSON string, parsed


def test_edits_and_patches_become_exact_diffs_but_a_views_listing_does_not(copilot):
    edit, patch = events_of(copilot, EventKind.FILE_CHANGE)
    assert edit.path == "/home/dev/kernels/k.py" and edit.tool_name == "edit"
    before = "def k(x):\n    return [v * 2 for v in x]\n"
    assert apply_unified_diff(before, edit.diff) == "def k(x):\n    return x * 2\n"
    assert patch.path == "tests/test_k.py" and patch.diff.startswith("--- /dev/null\n")
    assert (
        apply_unified_diff("", patch.diff)
        == "from k import k\n\ndef test_k():\n    assert k(2) == 4\n"
    )


def test_unknown_records_are_kept_and_malformed_lines_counted(copilot):
    [unknown] = events_of(copilot, EventKind.UNKNOWN)
    assert unknown.raw_type == "session.widget_opened"
    [bad] = copilot.malformed
    assert (bad.source, bad.line) == ("events.jsonl", 21)
    assert "invalid JSON" in bad.reason


def test_a_printed_stream_charges_each_calls_usage_record_and_ignores_the_shutdown():
    stream = parse_path(STREAM)
    first, second = (t for t in stream.main.turns if t.usage)
    # assistant.usage: input 5,000 with 4,000 cache reads -> 1,000 uncached; 40 out
    assert usage_tuple(first.usage) == (1000, 40, 4000, 0)
    # 5,200 with 5,000 cache reads -> 200 uncached; 10 out
    assert usage_tuple(second.usage) == (200, 10, 5000, 0)
    # the shutdown's 10,200 / 50 / 9,000 are the same calls again: not added
    assert usage_tuple(stream.usage()) == (1200, 50, 9000, 0)
    # gpt-5-mini $0.25/$2/$0.025: 1,200*0.25 + 50*2 + 9,000*0.025 = 625 per million
    assert stream.cost_usd == pytest.approx(625 / 1e6)
    # the stream prints thinking after its message: it is put first in the call
    assert first.events[0].kind == EventKind.REASONING
    assert stream.notes == []


def test_older_layout_with_tool_start_first_and_parent_tool_call_ids():
    # 0.0.3xx: the start precedes the message requesting it; subagent events carry
    # parentToolCallId in data instead of an agentId; no shutdown was written.
    log = lines(
        {"type": "session.start", "data": {"sessionId": "old", "copilotVersion": "0.0.330"}},
        {"type": "user.message", "data": {"content": "go"}},
        {"type": "tool.execution_start", "data": {"toolCallId": "t1", "toolName": "task"}},
        {
            "type": "assistant.message",
            "data": {"content": "", "toolRequests": [{"toolCallId": "t1", "name": "task"}]},
        },
        {"type": "subagent.started", "data": {"toolCallId": "t1", "agentName": "explore"}},
        {"type": "assistant.message", "data": {"content": "found it", "parentToolCallId": "t1"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "t1", "success": True}},
        {"type": "assistant.message", "data": {"content": "done", "outputTokens": 7}},
    )
    old = parse_bytes(log, "old.jsonl")
    assert len(events_of(old, EventKind.TOOL_CALL)) == 1  # not repeated by the message
    sub = old.threads[1]
    assert sub.title == "explore" and texts(old, EventKind.ASSISTANT_TEXT, sub.id) == ["found it"]
    assert usage_tuple(old.usage()) == (0, 7, 0, 0)
    assert "no session.shutdown" in old.notes[0]


def test_str_replace_editor_creates_and_edits_but_its_views_change_nothing():
    def call(call_id: str, **args: str) -> tuple[dict, dict]:
        request = {"toolCallId": call_id, "name": "str_replace_editor", "arguments": args}
        listing = "diff --git a/d b/d\n--- a/d\n+++ b/d\n@@ -1,0 +1,1 @@\n+x.py\n"
        done = {"toolCallId": call_id, "success": True}
        done["result"] = {"content": "ok", "detailedContent": listing}
        return (
            {"type": "assistant.message", "data": {"content": "", "toolRequests": [request]}},
            {"type": "tool.execution_complete", "data": done},
        )

    log = lines(
        {"type": "user.message", "data": {"content": "go"}},
        *call("v", command="view", path="/w"),
        *call("c", command="create", path="/w/x.py", file_text="print(1)\n"),
    )
    [created] = events_of(parse_bytes(log, "s.jsonl"), EventKind.FILE_CHANGE)
    assert created.path == "/w/x.py" and created.call_id == "c"
    # the recorded diff is used, its hunk read from its body, under our own headers
    assert created.diff == "--- /dev/null\n+++ b/w/x.py\n@@ -0,0 +1,1 @@\n+x.py\n"


def test_a_shutdown_with_only_session_wide_token_details_charges_the_current_model():
    log = lines(
        {"type": "user.message", "data": {"content": "go"}},
        {
            "type": "assistant.message",
            "data": {"content": "a", "model": "gpt-5", "outputTokens": 12},
        },
        {
            "type": "assistant.message",
            "data": {"content": "b", "model": "gpt-5", "outputTokens": 3},
        },
        {
            "type": "session.shutdown",
            "data": {
                "currentModel": "gpt-5",
                "modelMetrics": {"gpt-5": {"requests": 2}},
                "tokenDetails": {
                    "input": {"tokenCount": 100},
                    "output": {"tokenCount": 20},
                    "cache_read": {"tokenCount": 5},
                },
            },
        },
    )
    run = parse_bytes(log, "s.jsonl")
    # tokenDetails' input is already uncached; output 20 - (12 + 3) = 5 more on the last call
    assert usage_tuple(run.main.turns[-1].usage) == (100, 3 + 5, 5, 0)
    assert usage_tuple(run.usage()) == (100, 20, 5, 0)


def test_a_log_of_only_a_session_start_is_refused_naming_the_format():
    log = lines({"type": "session.start", "data": {"sessionId": "x"}, "id": "1"})
    with pytest.raises(TranscriptFormatError, match=r"run\.jsonl: read as copilot-cli-events"):
        parse_bytes(log, "run.jsonl")


def test_an_unknown_record_is_capped():
    log = lines(
        {"type": "user.message", "data": {"content": "hi"}},
        {"type": "session.blob", "data": {"value": "x" * 100_000}},
    )
    [unknown] = events_of(parse_bytes(log, "big.jsonl"), EventKind.UNKNOWN)
    assert isinstance(unknown.raw, str) and len(unknown.raw) < RAW_CAP_CHARS + 100


@pytest.mark.parametrize("path", [SESSION, STREAM])
def test_fields_of_any_type_parse_or_are_refused_cleanly(path):
    read = fuzz(path, rounds=60, seed=15, check=lambda t: None)
    assert read > 30  # not a vacuous test: most still parse


def test_payloads_in_every_field_stay_text_on_the_page():
    transcript = parse_bytes(lines_with_payloads(SESSION.read_bytes()), "events.jsonl")
    assert carries_payloads(json.dumps(transcript.to_dict(), default=str))
    assert_payloads_stay_text(transcript)
