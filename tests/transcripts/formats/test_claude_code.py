"""Claude Code session files: the three subagent layouts, the tree, usage once per model call."""

from __future__ import annotations

import json

import pytest

from transcripts.formats import EventKind, parse_bytes, parse_path
from transcripts.formats.diffs import apply_unified_diff

from .transcript_readers import FIXTURES, events_of, texts, usage_tuple


@pytest.fixture(scope="module")
def v21():
    return parse_path(FIXTURES / "claude_code_2_1")


def test_usage_is_taken_once_per_model_call_from_its_largest_line(v21):
    # msg_1 has three lines repeating usage (output 5, 5, 40): counted once, with 40.
    first_call = v21.main.turns[1]
    assert usage_tuple(first_call.usage) == (10, 40, 0, 100)
    # main: msg_1 (10,40,0,100) + msg_2 (3,20,110,0) + msg_3 (2,30,130,0) + msg_5 (5,9,50,10)
    assert usage_tuple(v21.usage(include_subagents=False)) == (20, 99, 290, 110)


def test_subagent_usage_sits_on_its_thread_and_is_counted_once(v21):
    sub = v21.thread("agent-a1b2")
    # msg_s1 twice (4, 8) + msg_s2 (1, 6, 20)
    assert usage_tuple(sub.usage()) == (5, 14, 20, 0)
    assert usage_tuple(v21.usage()) == (25, 113, 310, 110)
    assert sum(t.usage().total_tokens for t in v21.threads) == v21.usage().total_tokens


def test_2_1_subagent_hangs_under_the_task_call_that_names_its_agent_id(v21):
    sub = v21.thread("agent-a1b2")
    assert sub.kind == "subagent"
    assert sub.parent_thread == "main"
    spawn = next(e for e in events_of(v21, EventKind.SUBAGENT_SPAWN) if e.id == sub.parent_event)
    assert spawn.child_thread == "agent-a1b2"
    turn = next(t for t in v21.main.turns if spawn in t.events)
    call_index = next(i for i, e in enumerate(turn.events) if e.call_id == "toolu_3")
    assert turn.events[call_index + 1] is spawn
    assert sub.title == "general-purpose"  # from agent-a1b2.meta.json


def test_warmup_agents_are_dropped(v21):
    assert [t.id for t in v21.threads] == ["main", "agent-a1b2"]
    assert "Warmup" not in texts(v21, EventKind.USER_TEXT)


def test_rewind_follows_the_branch_that_leads_to_the_last_message(v21):
    users = texts(v21, EventKind.USER_TEXT, "main")
    assert users == ["Write a kernel", "Now benchmark"]
    assert "abandoned answer" not in texts(v21, EventKind.ASSISTANT_TEXT)
    assert any("abandoned branches" in note for note in v21.notes)


def test_compact_boundary_becomes_a_compaction_event_with_its_summary(v21):
    [compaction] = events_of(v21, EventKind.COMPACTION)
    assert "auto" in compaction.text and "150000" in compaction.text
    assert "Summary: a kernel was written and checked." in compaction.text
    # the conversation continues after the boundary through logicalParentUuid
    assert texts(v21, EventKind.ASSISTANT_TEXT, "main")[-1] == "Done."


def test_unknown_record_type_becomes_an_unknown_event(v21):
    [unknown] = events_of(v21, EventKind.UNKNOWN)
    assert unknown.raw_type == "mystery-record"
    assert unknown.raw["payload"] == {"x": 1}


def test_malformed_line_is_counted_with_its_file_and_line(v21):
    [bad] = v21.malformed
    assert (bad.source, bad.line) == ("sess-1.jsonl", 18)
    assert "invalid JSON" in bad.reason


def test_write_of_a_new_file_is_all_added_and_edit_uses_structured_patch(v21):
    write, edit = events_of(v21, EventKind.FILE_CHANGE)
    assert write.path == "/w/k.py" and write.tool_name == "Write"
    assert write.diff == "--- /dev/null\n+++ b/w/k.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    assert apply_unified_diff("", write.diff) == "a\nb\n"
    assert "@@ -1,2 +1,2 @@\n a\n-b\n+c\n" in edit.diff
    assert apply_unified_diff("a\nb\n", edit.diff) == "a\nc\n"


def test_session_metadata_is_read(v21):
    assert v21.format == "claude-code-jsonl"
    assert v21.session_id == "sess-1"
    assert (v21.cwd, v21.git_branch, v21.cli_version) == ("/w", "main", "2.1.3")
    assert v21.model == "claude-sonnet-4-5-20250929"


def test_a_session_file_alone_brings_its_subagents_folder():
    alone = parse_path(FIXTURES / "claude_code_2_1" / "sess-1.jsonl")
    assert [t.id for t in alone.threads] == ["main", "agent-a1b2"]


def test_2_0_flat_agent_files_link_by_agent_id_in_result_or_text():
    transcript = parse_path(FIXTURES / "claude_code_2_0")
    subs = {t.id: t for t in transcript.threads if t.kind == "subagent"}
    # cc33 is a Warmup agent, dd44 belongs to another session
    assert set(subs) == {"agent-aa11", "agent-bb22"}
    spawns = {e.child_thread: e for e in events_of(transcript, EventKind.SUBAGENT_SPAWN)}
    assert spawns["agent-aa11"].call_id == "toolu_T1"  # toolUseResult.agentId
    assert spawns["agent-bb22"].call_id == "toolu_T2"  # "agentId: bb22" in the result text
    assert all(t.parent_event == spawns[t.id].id for t in subs.values())


def test_2_0_both_task_calls_of_one_model_call_share_one_usage():
    transcript = parse_path(FIXTURES / "claude_code_2_0")
    calls = [t for t in transcript.main.turns if t.usage is not None]
    assert [usage_tuple(t.usage) for t in calls] == [(5, 30, 0, 0), (1, 4, 50, 0)]


def test_api_error_system_record_is_an_error_notice():
    transcript = parse_path(FIXTURES / "claude_code_2_0")
    [notice] = events_of(transcript, EventKind.SYSTEM_NOTICE)
    assert notice.is_error and "529" in notice.text


def test_1_0_inline_sidechain_links_to_the_task_call_by_its_prompt():
    transcript = parse_path(FIXTURES / "claude_code_1_0" / "s10.jsonl")
    [sub] = [t for t in transcript.threads if t.kind == "subagent"]
    assert texts(transcript, EventKind.ASSISTANT_TEXT, sub.id) == ["It is a softmax."]
    [spawn] = events_of(transcript, EventKind.SUBAGENT_SPAWN)
    assert spawn.call_id == "toolu_A" and spawn.child_thread == sub.id
    assert sub.parent_event == spawn.id
    # the Warmup sidechain is dropped, its 500 input tokens with it
    assert usage_tuple(sub.usage()) == (4, 12, 0, 0)
    assert usage_tuple(transcript.usage()) == (16, 37, 250, 0)


def test_resumed_session_repeats_are_counted_once():
    transcript = parse_path(FIXTURES / "claude_code_resume")
    users = texts(transcript, EventKind.USER_TEXT, "main")
    assert users == ["Review kernel.py", "Thanks, now tune it"]
    assert texts(transcript, EventKind.ASSISTANT_TEXT, "main") == ["Reviewed.", "Tuned."]
    # msg_a (10,20,100) + msg_b (2,5,150) + msg_c (3,7,160), each once
    assert usage_tuple(transcript.usage(include_subagents=False)) == (15, 32, 410, 0)


def test_cost_is_computed_from_the_price_table_when_the_log_has_none(v21):
    # sonnet-4-5: 20 in x $3, 99 out x $15, 290 read x $0.30, 110 write x $3.75;
    # haiku-4-5: 5 in x $1, 14 out x $5, 20 read x $0.10 (per million)
    expected = (20 * 3 + 99 * 15 + 290 * 0.3 + 110 * 3.75 + 5 * 1 + 14 * 5 + 20 * 0.1) / 1e6
    assert v21.cost_computed is True
    assert v21.cost_usd == pytest.approx(expected, abs=1e-6)


def _session(*records: dict) -> bytes:
    base = {"sessionId": "s", "cwd": "/w", "version": "2.0.1", "isSidechain": False}
    return "".join(json.dumps({**base, **r}) + "\n" for r in records).encode()


def _assistant(uuid: str, parent: str, blocks: list, message_id: str) -> dict:
    message = {
        "id": message_id,
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": blocks,
    }
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "requestId": "r" + message_id,
        "message": message,
    }


def _result(uuid: str, parent: str, call_id: str, text: str) -> dict:
    content = [{"type": "tool_result", "tool_use_id": call_id, "content": text}]
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "message": {"role": "user", "content": content},
    }


def test_parallel_tool_results_and_notices_on_side_branches_are_kept():
    calls = [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}} for i in (1, 2)]
    data = _session(
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "message": {"role": "user", "content": "go"},
        },
        _assistant("a1", "u1", [calls[0]], "m1"),
        _assistant("a2", "a1", [calls[1]], "m1"),
        _result("r1", "a1", "t1", "one"),  # parented on the first call's line, not the last record
        {
            "type": "system",
            "uuid": "n1",
            "parentUuid": "a2",
            "content": "hook ran",
            "level": "info",
        },
        _result("r2", "a2", "t2", "two"),
        _assistant("a3", "r2", [{"type": "text", "text": "both done"}], "m2"),
    )
    transcript = parse_bytes(data, "s.jsonl")
    assert [e.text for e in events_of(transcript, EventKind.TOOL_RESULT)] == ["one", "two"]
    assert texts(transcript, EventKind.SYSTEM_NOTICE) == ["hook ran"]
    assert transcript.notes == []


def test_workflow_agents_nested_under_subagents_are_found_and_journals_ignored(tmp_path):
    source = FIXTURES / "claude_code_2_1"
    (tmp_path / "sess-1.jsonl").write_bytes((source / "sess-1.jsonl").read_bytes())
    nested = tmp_path / "sess-1" / "subagents" / "workflows" / "wf_1"
    nested.mkdir(parents=True)
    agent = source / "sess-1" / "subagents" / "agent-a1b2.jsonl"
    (nested / "agent-a1b2.jsonl").write_bytes(agent.read_bytes())
    journal = {"type": "user", "uuid": "j1", "sessionId": "sess-1", "message": {"content": "x"}}
    (nested / "journal.jsonl").write_text(json.dumps(journal) + "\n")
    for transcript in (parse_path(tmp_path), parse_path(tmp_path / "sess-1.jsonl")):
        assert [t.id for t in transcript.threads] == ["main", "agent-a1b2"]
        assert texts(transcript, EventKind.USER_TEXT, "main") == ["Write a kernel", "Now benchmark"]


def test_cost_written_on_lines_by_early_versions_is_the_log_cost_counted_once_per_call():
    first = _assistant("a1", "u1", [{"type": "text", "text": "hi"}], "m1") | {"costUSD": 0.5}
    second = _assistant("a2", "a1", [{"type": "text", "text": "again"}], "m1") | {"costUSD": 0.5}
    third = _assistant("a3", "a2", [{"type": "text", "text": "next"}], "m2") | {"costUSD": 0.25}
    user = {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "go"}}
    transcript = parse_bytes(_session(user, first, second, third), "s.jsonl")
    assert transcript.cost_usd == 0.75 and transcript.cost_computed is False
