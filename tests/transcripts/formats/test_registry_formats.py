"""The formats read since the registry: Kimi Code's wire journal, pi and OpenClaw sessions,
Antigravity CLI's step log and Claude Code's web export; and the registry itself."""

from __future__ import annotations

import json

import pytest

from transcript_formats import EventKind, detect_format, parse_bytes, parse_path
from transcript_formats.detect import sniff
from transcript_formats.records import SourceFile
from transcript_formats.registry import FORMATS, RECORDS_SNIFFERS, harness_by_format

from .hostile_logs import assert_payloads_stay_text, fuzz
from .new_format_logs import (
    KERNEL,
    T0,
    antigravity_log,
    antigravity_rows,
    jsonl,
    kimi_code_rows,
    kimi_code_session,
    kimi_loop,
    loglines_export,
    openclaw_session,
    pi_rows,
    pi_session,
    write,
)
from .transcript_readers import events_of, texts, usage_tuple


def calls(transcript):
    return [e.tool_name for e in events_of(transcript, EventKind.TOOL_CALL)]


# -- the registry --------------------------------------------------------------------------------


def test_each_format_is_declared_once_with_a_parser_and_a_way_to_recognise_it():
    ids = [spec.id for spec in FORMATS]
    assert len(ids) == len(set(ids))
    assert all(spec.records or spec.document for spec in FORMATS)
    assert all(callable(spec.parse) for spec in FORMATS)


def test_the_upload_label_of_each_cli_format_comes_from_its_declaration():
    labels = harness_by_format()
    assert labels["kimi-code-wire"] == "kimi-cli"
    assert labels["pi-session"] == "pi"
    assert labels["openclaw-session"] == "openclaw"
    assert labels["antigravity-cli"] == "antigravity-cli"
    assert labels["claude-code-loglines"] == "claude-code"
    assert "openai-chat-messages" not in labels


def test_openclaw_is_tried_before_pi_whose_records_it_shares():
    order = [fmt for _, fmt in RECORDS_SNIFFERS]
    assert order.index("openclaw-session") < order.index("pi-session")


# -- Kimi Code CLI -------------------------------------------------------------------------------


def test_a_kimi_code_wire_journal_is_recognised_by_its_dotted_records(tmp_path):
    assert detect_format(kimi_code_session(tmp_path)) == "kimi-code-wire"


def test_kimi_code_streamed_parts_make_one_model_call_and_the_prompt_is_read_once(tmp_path):
    transcript = parse_path(kimi_code_session(tmp_path))
    assert texts(transcript, EventKind.USER_TEXT) == ["write a softmax kernel"]
    assert texts(transcript, EventKind.REASONING) == ["plan"]
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["Here.", "Done."]
    assert calls(transcript) == ["Write", "Bash"]
    [write_call, run_call] = events_of(transcript, EventKind.TOOL_CALL)
    assert write_call.arguments == {"path": "kernel.py", "content": KERNEL}
    assert run_call.arguments == {"command": "python kernel.py"}  # 1.1+: flat name, JSON text
    assert [e.text for e in events_of(transcript, EventKind.TOOL_RESULT)] == [
        "Wrote 14 bytes",
        "ok",
    ]
    assert transcript.cwd == "/work/softmax"


def test_kimi_code_tokens_are_the_usage_records_never_added_to_the_step_copy(tmp_path):
    transcript = parse_path(kimi_code_session(tmp_path))
    counted = [usage_tuple(t.usage) for t in transcript.main.turns if t.usage is not None]
    assert counted == [(100, 20, 50, 0), (120, 10, 60, 0), (10, 3, 150, 0)]
    assert transcript.model == "kimi-k2"


def test_kimi_code_protocol_1_0_tool_calls_nest_name_and_arguments(tmp_path):
    old_call = {
        "type": "function",
        "id": "c9",
        "function": {"name": "Bash", "arguments": '{"command": "ls"}'},
    }
    rows = kimi_code_rows()
    rows[0]["protocol_version"] = "1.0"
    rows.insert(
        5,
        {
            "type": "context.append_message",
            "message": {"role": "assistant", "content": [], "toolCalls": [old_call]},
            "time": T0 + 1050,
        },
    )
    transcript = parse_bytes(jsonl(rows), "wire.jsonl")
    assert calls(transcript)[0] == "Bash"
    assert events_of(transcript, EventKind.TOOL_CALL)[0].arguments == {"command": "ls"}


def test_kimi_code_subagent_journal_is_a_thread_of_its_own(tmp_path):
    main = kimi_code_session(tmp_path)
    sub = [
        {"type": "metadata", "protocol_version": "1.4", "created_at": T0},
        {
            "type": "context.append_message",
            "agentId": "agent-0",
            "message": {"role": "user", "content": [{"type": "text", "text": "explore"}]},
            "time": T0 + 10,
        },
        {
            "type": "context.append_message",
            "agentId": "agent-0",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "found it"}]},
            "time": T0 + 20,
        },
    ]
    write(main.parent.parent / "agent-0" / "wire.jsonl", jsonl(sub))
    transcript = parse_path(main.parent.parent.parent)
    assert [t.kind for t in transcript.threads] == ["main", "subagent"]
    assert texts(transcript, EventKind.ASSISTANT_TEXT, "agent-agent-0") == ["found it"]
    assert len(events_of(transcript, EventKind.SUBAGENT_SPAWN)) == 1


def test_kimi_code_subagent_hangs_under_the_agent_call_whose_result_names_it(tmp_path):
    spawn = [
        kimi_loop({"type": "step.begin", "uuid": "s9"}, 1510),
        kimi_loop(
            {
                "type": "tool.call",
                "stepUuid": "s9",
                "toolCallId": "call-9",
                "name": "Agent",
                "args": {"prompt": "explore", "description": "Explore"},
            },
            1520,
        ),
        kimi_loop(
            {
                "type": "tool.result",
                "toolCallId": "call-9",
                "result": {"output": "agent_id: a7\nfound"},
            },
            1530,
        ),
    ]
    main = kimi_code_session(tmp_path, extra=spawn)
    sub = [
        {"type": "metadata", "protocol_version": "1.4", "created_at": T0},
        {
            "type": "context.append_message",
            "message": {"role": "user", "content": [{"type": "text", "text": "explore"}]},
            "time": T0 + 1525,
        },
    ]
    write(main.parent.parent / "a7" / "wire.jsonl", jsonl(sub))
    transcript = parse_path(main.parent.parent.parent)
    [spawned] = events_of(transcript, EventKind.SUBAGENT_SPAWN)
    assert (spawned.call_id, spawned.child_thread) == ("call-9", "agent-a7")


def test_kimi_cli_wire_files_still_read_as_kimi_cli():
    line = {
        "timestamp": 1767261600,
        "message": {"type": "TurnBegin", "payload": {"user_input": "hi"}},
    }
    data = jsonl([{"type": "metadata", "protocol_version": "1.10"}, line])
    assert sniff(SourceFile("wire.jsonl", data)) == "kimi-cli"


# -- pi and OpenClaw -----------------------------------------------------------------------------


def test_a_pi_session_reads_the_path_it_ended_on_with_each_calls_tokens_and_cost(tmp_path):
    transcript = parse_path(pi_session(tmp_path))
    assert transcript.format == "pi-session"
    assert transcript.session_id == "9f0e" and transcript.cwd == "/work/softmax"
    assert texts(transcript, EventKind.ASSISTANT_TEXT, "main") == ["Here.", "Done."]
    assert texts(transcript, EventKind.SYSTEM_NOTICE, "main") == [
        "A branch left here with /tree (1 entry), shown apart.",
        "Tried another answer.",
    ]
    assert calls(transcript) == ["write", "bash"]
    counted = [usage_tuple(t.usage) for t in transcript.main.turns if t.usage is not None]
    assert counted == [(100, 40, 1000, 0), (20, 10, 1100, 0), (10, 5, 1200, 0)]
    # The branch left behind is shown apart, and its call was billed: in the tokens and cost.
    [branch] = transcript.main.branches
    assert texts(transcript, EventKind.ASSISTANT_TEXT, branch.id) == ["Left behind."]
    notice = next(e for e in events_of(transcript, EventKind.SYSTEM_NOTICE) if e.child_thread)
    assert (notice.child_thread, branch.parent_event) == (branch.id, notice.id)
    assert usage_tuple(transcript.abandoned_usage()) == (5, 5, 0, 0)
    assert transcript.cost_usd == pytest.approx(0.03)


def test_a_version_1_pi_session_without_ids_reads_line_by_line():
    rows = [{k: v for k, v in r.items() if k not in ("id", "parentId")} for r in pi_rows()]
    rows[0]["version"] = 1
    rows[0]["id"] = "old"
    transcript = parse_bytes(
        jsonl([r for r in rows if r.get("type") != "branch_summary"]), "s.jsonl"
    )
    assert transcript.format == "pi-session"
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["Here.", "Left behind.", "Done."]


def test_an_openclaw_session_is_told_from_pi_by_what_openclaw_writes(tmp_path):
    transcript = parse_path(openclaw_session(tmp_path))
    assert transcript.format == "openclaw-session"
    assert calls(transcript) == ["write", "bash"]


# -- Antigravity CLI -----------------------------------------------------------------------------


def test_antigravity_steps_answer_the_calls_before_them_in_order(tmp_path):
    transcript = parse_path(antigravity_log(tmp_path))
    assert transcript.format == "antigravity-cli"
    assert texts(transcript, EventKind.USER_TEXT) == ["write a softmax kernel"]
    assert texts(transcript, EventKind.REASONING) == ["plan"]
    assert calls(transcript) == ["write_to_file", "run_command"]
    results = events_of(transcript, EventKind.TOOL_RESULT)
    assert [(r.tool_name, r.text) for r in results] == [
        ("write_to_file", "Created /work/kernel.py"),
        ("run_command", "ok"),
    ]
    [change] = events_of(transcript, EventKind.FILE_CHANGE)
    assert change.path == "/work/kernel.py" and "+import triton" in (change.diff or "")


@pytest.mark.parametrize("full", [False, True])
def test_antigravity_arguments_read_the_same_from_either_step_log(full):
    transcript = parse_bytes(jsonl(antigravity_rows(full=full)), "transcript.jsonl")
    assert events_of(transcript, EventKind.TOOL_CALL)[1].arguments == {
        "CommandLine": "python kernel.py"
    }


# -- Claude Code web export ----------------------------------------------------------------------


def test_a_loglines_export_reads_as_a_claude_code_session(tmp_path):
    transcript = parse_path(loglines_export(tmp_path))
    assert transcript.format == "claude-code-loglines"
    assert transcript.session_id == "web-1" and transcript.cwd == "/p"
    assert calls(transcript) == ["Write", "Bash"]
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["Here.", "Done."]
    assert usage_tuple(transcript.usage()) == (19, 64, 100, 0)
    [change] = events_of(transcript, EventKind.FILE_CHANGE)
    assert change.path == "/p/kernel.py"


def test_a_loglines_export_on_one_line_is_recognised_too(tmp_path):
    path = loglines_export(tmp_path)
    path.write_text(json.dumps(json.loads(path.read_text())))
    assert detect_format(path) == "claude-code-loglines"


# -- hostile copies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make", [kimi_code_session, pi_session, openclaw_session, antigravity_log, loglines_export]
)
def test_mangled_logs_of_the_new_formats_are_read_or_refused_with_a_format_error_only(
    make, tmp_path
):
    read = fuzz(make(tmp_path), rounds=60, seed=11, check=assert_payloads_stay_text)
    assert read > 20  # not vacuous: most mangled copies are still read


def test_antigravity_checkpoints_system_messages_and_the_chosen_model():
    rows = antigravity_rows()
    rows[0]["content"] += (
        "\n<USER_SETTINGS_CHANGE>\nThe user changed setting `Model Selection` from None to "
        "Gemini 3 Pro (High).\n</USER_SETTINGS_CHANGE>"
    )
    rows += [
        {"step_index": 6, "source": "SYSTEM", "type": "CHECKPOINT", "content": "# Resumed"},
        {"step_index": 7, "source": "SYSTEM", "type": "SYSTEM_MESSAGE", "content": "Be brief."},
        {"step_index": 8, "source": "SYSTEM", "type": "EPHEMERAL_MESSAGE", "content": "tick"},
    ]
    transcript = parse_bytes(jsonl(rows), "transcript.jsonl")
    assert transcript.model == "Gemini 3 Pro (High)"
    assert texts(transcript, EventKind.COMPACTION) == ["# Resumed"]
    assert texts(transcript, EventKind.SYSTEM_NOTICE) == ["Be brief."]


def test_a_pi_tree_whose_parents_are_not_entries_reads_as_one_line_of_conversation():
    rows = pi_rows()
    rows[3]["parentId"] = "t1"  # a call's id, not an entry's
    transcript = parse_bytes(jsonl(rows), "s.jsonl")
    assert transcript.main.branches == []
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["Here.", "Left behind.", "Done."]


def test_openclaws_own_custom_entries_mark_its_sessions():
    rows = pi_rows()
    rows.insert(
        2,
        {
            "type": "custom_message",
            "customType": "openclaw.runtime-context",
            "content": "context",
            "display": False,
            "id": "c1",
            "parentId": "a1",
        },
    )
    rows[3]["parentId"] = "c1"
    transcript = parse_bytes(jsonl(rows), "s.jsonl")
    assert transcript.format == "openclaw-session"
    assert texts(transcript, EventKind.SYSTEM_NOTICE, "main")[0] == "context"


def test_a_kimi_code_step_cancelled_before_any_output_is_no_turn():
    prompt = [{"type": "text", "text": "hi"}]
    rows = [
        {"type": "metadata", "protocol_version": "1.4", "created_at": T0},
        {"type": "config.update", "modelAlias": "moonshot-ai/kimi-k2", "time": T0},
        {"type": "turn.prompt", "input": prompt, "origin": {"kind": "user"}, "time": T0 + 1},
        {
            "type": "context.append_message",
            "message": {"role": "user", "content": prompt, "toolCalls": []},
            "time": T0 + 2,
        },
        {
            "type": "context.append_loop_event",
            "event": {"type": "step.begin", "uuid": "s1", "turnId": "0", "step": 1},
            "time": T0 + 3,
        },
        {"type": "llm.request", "kind": "loop", "model": "kimi-k2-code", "time": T0 + 4},
        {"type": "turn.cancel", "time": T0 + 5},
        {
            "type": "context.append_loop_event",
            "event": {"type": "step.begin", "uuid": "s2", "turnId": "1", "step": 1},
            "time": T0 + 6,
        },
        {
            "type": "context.append_loop_event",
            "event": {
                "type": "content.part",
                "stepUuid": "s2",
                "part": {"type": "text", "text": "ok"},
            },
            "time": T0 + 7,
        },
    ]
    transcript = parse_bytes(jsonl(rows), "wire.jsonl")
    assert [len(turn.events) for turn in transcript.main.turns] == [2, 1]
    assert texts(transcript, EventKind.SYSTEM_NOTICE) == ["The turn was cancelled."]
    assert transcript.main.turns[1].model == "kimi-k2-code"
