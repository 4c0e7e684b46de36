"""Kimi CLI sessions: wire.jsonl (with subagents), context.jsonl, detection and hostile logs."""

from __future__ import annotations

import json

import pytest

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

SESSION = FIXTURES / "kimi_session"
SESSION_ID = "4f1c2a9e-0d7b-4c55-9a61-2b8e5f0c7d13"
CONTEXT = FIXTURES / "kimi_context.jsonl"


@pytest.fixture(scope="module")
def kimi():
    return parse_path(SESSION)


def wire(*messages: tuple[str, dict]) -> bytes:
    lines = [{"type": "metadata", "protocol_version": "1.10"}]
    lines += [
        {"timestamp": 1767261600 + n, "message": {"type": kind, "payload": payload}}
        for n, (kind, payload) in enumerate(messages)
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_each_step_is_a_model_call_whose_latest_status_update_is_its_usage(kimi):
    calls = [usage_tuple(t.usage) for t in kimi.main.turns if t.usage is not None]
    # chatcmpl-1 reported (1000, 20, 0, 0) and then (1200, 80, 300, 0): the latest counts.
    assert calls == [
        (1200, 80, 300, 0),
        (150, 40, 1500, 10),
        (90, 30, 1700, 0),
        (70, 25, 1800, 0),
        (400, 5, 2000, 0),
    ]
    # input_other is already without the cache: 1200 + 150 + 90 + 70 + 400 = 1910 uncached in,
    # 80 + 40 + 30 + 25 + 5 = 180 out, 300 + 1500 + 1700 + 1800 + 2000 = 7300 cache reads,
    # 10 cache writes
    assert usage_tuple(kimi.usage(include_subagents=False)) == (1910, 180, 7300, 10)


def test_a_subagent_is_read_once_from_its_parents_wire_under_its_agent_call(kimi):
    sub = kimi.thread("agent-a1b2c3")
    assert sub.kind == "subagent" and sub.title == "explore" and sub.parent_thread == "main"
    [spawn] = events_of(kimi, EventKind.SUBAGENT_SPAWN)
    assert spawn.child_thread == sub.id and sub.parent_event == spawn.id
    assert spawn.call_id == "tool_agent1" and spawn.tool_name == "Agent"
    [turn] = [t for t in kimi.main.turns if spawn in t.events]
    assert turn.events[turn.events.index(spawn) - 1].call_id == "tool_agent1"
    assert texts(kimi, EventKind.USER_TEXT, sub.id) == ["Find every caller of tile() in src/"]
    # subagents/a1b2c3/wire.jsonl tells the same again: it is not counted twice.
    assert [t.id for t in kimi.threads] == ["main", "agent-a1b2c3"]
    assert usage_tuple(sub.usage()) == (500, 60, 0, 0)
    assert usage_tuple(kimi.usage()) == (1910 + 500, 180 + 60, 7300, 10)


def test_parts_streamed_in_pieces_are_joined_and_arguments_completed(kimi):
    assert texts(kimi, EventKind.REASONING, "main") == [
        "The user wants tile changed.",
        "[encrypted reasoning]",
    ]
    calls = {e.call_id: e for e in events_of(kimi, EventKind.TOOL_CALL)}
    assert calls["tool_edit1"].tool_name == "StrReplaceFile"
    assert calls["tool_edit1"].arguments == {
        "path": "kernel.py",
        "edit": {"old": "return n", "new": "return n * 4"},
    }
    assert calls["tool_sh1"].arguments == {"command": "pytest -q"}


def test_tool_results_join_their_calls_and_failures_are_errors_with_their_message(kimi):
    results = {e.call_id: e for e in events_of(kimi, EventKind.TOOL_RESULT)}
    assert results["tool_edit1"].text == "File successfully edited."
    shell = results["tool_sh1"]
    assert shell.is_error and shell.tool_name == "Shell"
    assert shell.text == "Command failed with exit code: 1.\n1 failed, 3 passed"
    assert not results["tool_agent1"].is_error


def test_a_diff_display_block_is_the_file_change_numbered_where_the_snippet_starts(kimi):
    [change] = events_of(kimi, EventKind.FILE_CHANGE)
    assert change.path == "kernel.py" and change.call_id == "tool_edit1"
    assert (
        change.diff
        == "--- a/kernel.py\n+++ b/kernel.py\n@@ -2 +2 @@\n-    return n\n+    return n * 4\n"
    )
    before = "def tile(n):\n    return n\n"
    assert apply_unified_diff(before, change.diff) == "def tile(n):\n    return n * 4\n"


def test_prompts_images_notices_compaction_and_unknown_messages(kimi):
    assert texts(kimi, EventKind.USER_TEXT, "main") == [
        "Make tile() return n * 4 and run the tests",
        "What does this screenshot show?",
    ]
    [image] = next(e for e in events_of(kimi, EventKind.USER_TEXT) if e.images).images
    assert image.media_type == "image/png" and image.data == "iVBORw0KGgo="
    assert texts(kimi, EventKind.SYSTEM_NOTICE) == [
        "Approval asked for run command: pytest -q",
        "Approval: approve",
        "Step interrupted",
    ]
    assert texts(kimi, EventKind.COMPACTION) == ["Context compacted"]
    [unknown] = events_of(kimi, EventKind.UNKNOWN)
    assert unknown.raw_type == "wire:Hologram"


def test_session_details_times_and_the_malformed_last_line(kimi):
    assert kimi.format == "kimi-cli" and kimi.session_id == SESSION_ID
    assert kimi.started_at == "2026-01-01T10:00:00Z" and kimi.duration_s == 45.0
    [bad] = kimi.malformed
    assert bad.source == f"{SESSION_ID}/wire.jsonl" and bad.line == 39
    # The wire file names no model: nothing can be priced, and the page says so.
    assert kimi.cost_usd is None and kimi.model is None


def test_a_context_file_alone_is_read_without_tokens():
    kimi = parse_path(CONTEXT)
    assert kimi.format == "kimi-cli"
    assert texts(kimi, EventKind.USER_TEXT) == ["List the kernels and read tile.py"]
    assert texts(kimi, EventKind.REASONING) == ["Two reads at once."]
    assert texts(kimi, EventKind.ASSISTANT_TEXT) == [
        "Looking.",
        "There are two kernels; tile.py is gone.",
    ]
    glob, read = events_of(kimi, EventKind.TOOL_RESULT)
    assert (glob.call_id, glob.tool_name, glob.is_error) == ("Glob:0", "Glob", False)
    assert (read.call_id, read.tool_name, read.is_error) == ("ReadFile:1", "ReadFile", True)
    # Both parallel calls sit in the model call that made them, with their results.
    [call_turn] = [t for t in kimi.main.turns if read in t.events]
    assert [e.kind for e in call_turn.events].count(EventKind.TOOL_CALL) == 2
    assert texts(kimi, EventKind.SYSTEM_NOTICE)[0].startswith("<system-reminder>")
    assert events_of(kimi, EventKind.UNKNOWN)[0].raw_type == "role:wizard"
    # _usage records are the context's size, not tokens billed: no usage, said in a note.
    assert usage_tuple(kimi.usage()) == (0, 0, 0, 0)
    assert all(t.usage is None for t in kimi.main.turns)
    assert any("9,400 tokens" in note for note in kimi.notes)
    [bad] = kimi.malformed
    assert (bad.source, bad.line) == ("kimi_context.jsonl", 10)


def test_kimi_files_are_detected_and_other_logs_are_not_taken_for_them():
    assert detect_format(SESSION) == "kimi-cli"
    assert detect_format(SESSION / SESSION_ID / "wire.jsonl") == "kimi-cli"
    assert detect_format(SESSION / SESSION_ID / "context.jsonl") == "kimi-cli"
    assert detect_format(CONTEXT) == "kimi-cli"
    plain_chat = b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n'
    assert parse_bytes(plain_chat, "chat.jsonl").format == "openai-chat-messages"
    for other in ("claude_stream.jsonl", "codex_exec.jsonl", "cursor_stream.jsonl"):
        assert detect_format(FIXTURES / other) != "kimi-cli"


def test_legacy_wire_files_without_a_metadata_line_are_read():
    data = wire(
        ("TurnBegin", {"user_input": "hi"}), ("ContentPart", {"type": "text", "text": "yo"})
    )
    kimi = parse_bytes(data.split(b"\n", 1)[1], "wire.jsonl")
    assert texts(kimi, EventKind.ASSISTANT_TEXT) == ["yo"]


def test_a_wire_that_only_has_its_metadata_line_reads_the_context_beside_it(tmp_path):
    folder = tmp_path / "s1"
    folder.mkdir()
    (folder / "wire.jsonl").write_text('{"type": "metadata", "protocol_version": "1.10"}\n')
    (folder / "context.jsonl").write_text(
        '{"role": "_checkpoint", "id": 0}\n{"role": "user", "content": "hello"}\n'
    )
    (folder / "context_1.jsonl").write_text('{"role": "_checkpoint", "id": 0}\n')
    kimi = parse_path(tmp_path)
    assert texts(kimi, EventKind.USER_TEXT) == ["hello"]
    assert any("context_1.jsonl: not shown" in note for note in kimi.notes)


# -- hostile logs ------------------------------------------------------------------------------


def test_payloads_in_every_field_stay_text_on_the_page():
    from tests.transcripts.render.injection import PAYLOADS

    messages: list[tuple[str, dict]] = []
    for n, p in enumerate(PAYLOADS):
        call, agent = f"c{n}", f"a{n}"
        messages += [
            ("TurnBegin", {"user_input": [{"type": "text", "text": p}]}),
            ("StepBegin", {"n": 1}),
            ("ContentPart", {"type": "think", "think": p}),
            ("ContentPart", {"type": "text", "text": p}),
            ("ToolCall", {"id": call, "function": {"name": p, "arguments": json.dumps({p: p})}}),
            ("ToolCallPart", {"arguments_part": p}),
            ("StatusUpdate", {"token_usage": {"input_other": 1, "output": 1}, "message_id": p}),
            (
                "ToolResult",
                {
                    "tool_call_id": call,
                    "return_value": {
                        "is_error": n % 2 == 0,
                        "output": [{"type": "text", "text": p}],
                        "message": p,
                        "display": [{"type": "diff", "path": p, "old_text": p, "new_text": p + p}],
                    },
                },
            ),
            ("ApprovalRequest", {"action": p, "description": p}),
            ("ApprovalResponse", {"response": p, "feedback": p}),
            ("Notification", {"title": p, "body": p, "severity": "error"}),
            ("PlanDisplay", {"content": p}),
            ("BtwBegin", {"question": p}),
            ("BtwEnd", {"error": p}),
            ("HookResolved", {"event": p, "target": p, "action": "block", "reason": p}),
            ("QuestionRequest", {"questions": [{"question": p}]}),
            ("StepRetry", {"error_type": p, "next_attempt": p}),
            (p, {p: p}),
            ("ContentPart", {"type": p, p: p}),
            (
                "SubagentEvent",
                {
                    "parent_tool_call_id": call,
                    "agent_id": agent,
                    "subagent_type": p,
                    "event": {"type": "TurnBegin", "payload": {"user_input": p}},
                },
            ),
        ]
    kimi = parse_bytes(wire(*messages), "wire.jsonl")
    assert len(kimi.threads) == 1 + len(PAYLOADS)
    assert_payloads_stay_text(kimi)


def test_an_unknown_message_is_kept_capped_and_a_huge_line_is_read():
    huge = "x" * 3_000_000
    kimi = parse_bytes(
        wire(
            ("TurnBegin", {"user_input": huge}),
            ("Mystery", {"blob": "y" * 100_000}),
        ),
        "wire.jsonl",
    )
    assert texts(kimi, EventKind.USER_TEXT) == [huge]
    [unknown] = events_of(kimi, EventKind.UNKNOWN)
    assert isinstance(unknown.raw, str) and len(unknown.raw) < RAW_CAP_CHARS + 100


def test_a_log_over_the_size_limit_is_refused_naming_it():
    data = wire(("TurnBegin", {"user_input": "z" * 5000}))
    with pytest.raises(TranscriptFormatError, match=r"wire\.jsonl"):
        parse_bytes(data, "wire.jsonl", limits=ArchiveLimits(max_total_bytes=1024))


def test_subagents_nested_past_the_depth_limit_are_cut_off_not_recursed():
    event: dict = {"type": "TurnBegin", "payload": {"user_input": "deep"}}
    for n in range(40):
        event = {"type": "SubagentEvent", "payload": {"agent_id": f"a{n}", "event": event}}
    kimi = parse_bytes(
        wire(("TurnBegin", {"user_input": "top"}), (event["type"], event["payload"])), "w.jsonl"
    )
    assert len(kimi.threads) == 1 + 8
    assert events_of(kimi, EventKind.UNKNOWN)[0].raw_type == "wire:SubagentEvent (nested too deep)"


@pytest.mark.parametrize("path", [SESSION, CONTEXT, SESSION / SESSION_ID / "wire.jsonl"])
def test_mangled_logs_are_read_or_refused_with_a_format_error_only(path):
    read = fuzz(path, rounds=80, seed=7, check=lambda t: None)
    assert read > 40  # not vacuous: most mangled copies are still read


def test_arguments_nested_past_the_json_depth_are_kept_as_their_text():
    deep = "[" * 100_000 + "]" * 100_000
    kimi = parse_bytes(
        wire(
            ("TurnBegin", {"user_input": "go"}),
            ("ToolCall", {"id": "c", "function": {"name": "Shell", "arguments": deep}}),
        ),
        "wire.jsonl",
    )
    [call] = events_of(kimi, EventKind.TOOL_CALL)
    assert call.arguments == deep and kimi.malformed == []


def test_a_subagent_the_wire_never_mentions_is_read_from_its_folder(tmp_path):
    session = tmp_path / "s1"
    (session / "subagents" / "zz9").mkdir(parents=True)
    (session / "wire.jsonl").write_bytes(
        wire(
            ("TurnBegin", {"user_input": "look around"}),
            ("ToolCall", {"id": "c1", "function": {"name": "Agent", "arguments": "{}"}}),
            (
                "ToolResult",
                {"tool_call_id": "c1", "return_value": {"output": "started agent_id: zz9"}},
            ),
        )
    )
    (session / "subagents" / "zz9" / "wire.jsonl").write_bytes(
        wire(
            ("TurnBegin", {"user_input": "explore"}),
            ("StatusUpdate", {"token_usage": {"input_other": 7, "output": 3}, "message_id": "m"}),
        )
    )
    kimi = parse_path(tmp_path)
    sub = kimi.thread("agent-zz9")
    [spawn] = events_of(kimi, EventKind.SUBAGENT_SPAWN)
    assert sub.parent_event == spawn.id and spawn.call_id == "c1"
    assert usage_tuple(kimi.usage()) == (7, 3, 0, 0)
