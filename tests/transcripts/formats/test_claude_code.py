"""Claude Code session files: the subagent layouts, the tree, usage once per model call."""

from __future__ import annotations

import json
import shutil

import pytest

from transcript_formats import EventKind, Transcript, parse_bytes, parse_path
from transcript_formats.claude_code_notices import DETAIL_CAP_CHARS
from transcript_formats.diffs import apply_unified_diff
from transcript_render import export_html

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
    # billed: main (20, 99, 290, 110) + abandoned msg_4 (1, 7, 0, 0) + subagent (5, 14, 20, 0)
    assert usage_tuple(v21.usage()) == (26, 120, 310, 110)
    paths = sum(t.usage().total_tokens for t in v21.threads)
    assert paths + v21.abandoned_usage().total_tokens == v21.usage().total_tokens


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
    assert "abandoned answer" not in texts(v21, EventKind.ASSISTANT_TEXT, "main")
    [branch] = v21.main.branches
    assert [e.text for t in branch.turns for e in t.events] == [
        "abandoned prompt",
        "abandoned answer",
    ]
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
    # sonnet-4-5: 20 in x $3, 99 out x $15, 290 read x $0.30, 110 write x $3.75 on the path,
    # 1 in x $3, 7 out x $15 on the abandoned branch (billed all the same);
    # haiku-4-5: 5 in x $1, 14 out x $5, 20 read x $0.10 (per million)
    main = 20 * 3 + 99 * 15 + 290 * 0.3 + 110 * 3.75
    expected = (main + 1 * 3 + 7 * 15 + 5 * 1 + 14 * 5 + 20 * 0.1) / 1e6
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


# -- 2.x parallel tool calls ---------------------------------------------------------------


@pytest.fixture
def parallel(tmp_path):
    """par-1: one response writes four tool_use lines, each chained to the one before; the
    results come back parented on their own call lines or chained in the order they finished.
    rev2's result does not name it: its meta file names the call (toolUseId)."""
    folder = tmp_path / "claude_code_parallel"
    shutil.copytree(FIXTURES / "claude_code_parallel", folder)
    meta = {"agentType": "reviewer", "toolUseId": "ag2"}
    (folder / "par-1" / "subagents" / "agent-rev2.meta.json").write_text(json.dumps(meta))
    return parse_path(folder)


def test_parallel_tool_calls_written_line_by_line_are_all_kept(parallel):
    [call_turn] = [t for t in parallel.main.turns if t.usage and t.usage.output_tokens == 60]
    calls = [e for e in call_turn.events if e.kind == EventKind.TOOL_CALL]
    assert [c.call_id for c in calls] == ["tb1", "tr1", "ag1", "ag2"]
    results = {e.call_id: e.text for e in call_turn.events if e.kind == EventKind.TOOL_RESULT}
    assert set(results) == {"tb1", "tr1", "ag1", "ag2"}
    assert parallel.main.branches == [] and parallel.notes == []


def test_parallel_agent_calls_each_get_their_subagent(parallel):
    spawns = {e.child_thread: e.call_id for e in events_of(parallel, EventKind.SUBAGENT_SPAWN)}
    assert spawns == {"agent-prof1": "ag1", "agent-rev2": "ag2"}  # ag2 through its meta file
    assert all(t.parent_event for t in parallel.threads[1:])


def test_parallel_calls_usage_once_per_response(parallel):
    # msg_p1: five lines repeating its usage, the largest output 60 -> (10, 60, 0, 200);
    # msg_p2 (3, 25, 250, 0). Main: (13, 85, 250, 200).
    assert usage_tuple(parallel.usage(include_subagents=False)) == (13, 85, 250, 200)
    # prof1 (4, 12, 0, 50) + rev2 (2, 8, 0, 30) = (6, 20, 0, 80); billed (19, 105, 250, 280)
    assert usage_tuple(parallel.usage()) == (19, 105, 250, 280)
    assert parallel.abandoned_usage().total_tokens == 0


# -- rewinds and retried responses ---------------------------------------------------------


@pytest.fixture(scope="module")
def rewound():
    return parse_path(FIXTURES / "claude_code_rewind" / "rw-1.jsonl")


def test_the_path_is_the_one_the_session_ended_on(rewound):
    assert texts(rewound, EventKind.USER_TEXT, "main") == [
        "Write a softmax kernel",
        "Make it numerically stable",
    ]
    assert texts(rewound, EventKind.ASSISTANT_TEXT, "main") == [
        "Written.",
        "Stable version written.",  # its replayed copy (new uuids, same content) is dropped
    ]


def test_abandoned_branches_fold_under_a_notice_where_they_branch_off(rewound):
    rewind, retry = rewound.main.branches
    assert (rewind.kind, rewind.parent_thread, rewind.title) == ("branch", "main", "Make it faster")
    assert texts(rewound, EventKind.USER_TEXT, rewind.id) == ["Make it faster"]
    assert texts(rewound, EventKind.ASSISTANT_TEXT, retry.id) == ["Let me think about"]
    main = [e for t in rewound.main.turns for e in t.events]
    kinds = [(e.kind, e.child_thread) for e in main]
    written = next(i for i, e in enumerate(main) if e.text == "Written.")
    # the rewind's fold right after the answer it left, the retry's right after its prompt
    assert kinds[written + 1] == (EventKind.SYSTEM_NOTICE, rewind.id)
    assert main[written + 2].text == "Make it numerically stable"
    assert kinds[written + 3] == (EventKind.SYSTEM_NOTICE, retry.id)
    notice = main[written + 1]
    assert rewind.parent_event == notice.id
    # msg_r3 (3, 50, 120, 0) + msg_r4 (1, 20, 170, 0): 364 tokens; it hangs off line 4
    assert "3 messages, 2 model calls, 364 tokens" in notice.text
    assert "after line 4" in notice.text
    assert "1 message, 1 model call, 130 tokens" in main[written + 3].text


def test_abandoned_tokens_are_counted_apart_and_in_the_billed_total(rewound):
    # path: msg_r1 (10, 30, 0, 100) + msg_r2 (2, 10, 110, 0) + msg_r6 (5, 40, 110, 0)
    assert usage_tuple(rewound.usage(include_subagents=False)) == (17, 80, 220, 100)
    # rewound: msg_r3 (3, 50, 120, 0) + msg_r4 (1, 20, 170, 0); retried: msg_r5 (5, 15, 110, 0)
    assert usage_tuple(rewound.abandoned_usage()) == (9, 85, 400, 0)
    assert usage_tuple(rewound.usage()) == (26, 165, 620, 100)
    [note] = rewound.notes
    assert "2 branches" in note and "4 messages" in note and "494 tokens" in note
    # sonnet-4-5 per million: in $3, out $15, cache read $0.30, cache write $3.75
    cost = (26 * 3 + 165 * 15 + 620 * 0.3 + 100 * 3.75) / 1e6
    assert rewound.cost_usd == pytest.approx(cost, abs=1e-6)


def test_a_message_id_on_the_path_and_on_a_branch_is_counted_once():
    start = {"type": "user", "uuid": "u0", "parentUuid": None, "message": {"content": "start"}}
    first = _assistant("a0", "u0", [{"type": "text", "text": "ok"}], "m0")
    answer = _assistant("a1", "u1", [{"type": "text", "text": "draft"}], "m1")
    answer["message"]["usage"] = {"input_tokens": 5, "output_tokens": 50}
    again = {**answer, "uuid": "a1b", "parentUuid": "u2"}  # the same call under a retried prompt
    prompts = [
        {"type": "user", "uuid": "u1", "parentUuid": "a0", "message": {"content": "one"}},
        {"type": "user", "uuid": "u2", "parentUuid": "a0", "message": {"content": "two"}},
    ]
    data = _session(start, first, prompts[0], answer, prompts[1], again)
    transcript = parse_bytes(data, "s.jsonl")
    [branch] = transcript.main.branches
    assert texts(transcript, EventKind.USER_TEXT, branch.id) == ["two"]
    assert usage_tuple(transcript.usage()) == (5, 50, 0, 0)


def test_branches_survive_the_stored_round_trip(rewound):
    again = Transcript.from_dict(rewound.to_dict())
    assert [b.id for b in again.main.branches] == ["branch-1", "branch-2"]
    assert again.usage() == rewound.usage()
    assert again.abandoned_usage() == rewound.abandoned_usage()


def test_the_page_folds_each_branch_under_its_notice(rewound):
    page = export_html(rewound)
    assert page.count("Abandoned branch &middot;") == 2
    assert 'id="th-branch-1"' in page and "Make it faster" in page


# -- the branch the session ended on -------------------------------------------------------


def test_a_bang_command_parented_on_line_one_does_not_hide_the_conversation():
    transcript = parse_path(FIXTURES / "claude_code_bang" / "bang-1.jsonl")
    assert transcript.main.branches == [] and transcript.notes == []
    assert [e.tool_name for e in events_of(transcript, EventKind.TOOL_CALL)] == ["Bash"]
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["All 3 tests pass."]
    # the `!` command and its output come last, where they were run
    assert texts(transcript, EventKind.USER_TEXT)[-2:] == [
        "<bash-input>ls</bash-input>",
        "<bash-stdout>k.py\ntest_k.py</bash-stdout><bash-stderr></bash-stderr>",
    ]
    # msg_b1 (8, 20, 0, 300) + msg_b2 (2, 15, 300, 0)
    assert usage_tuple(transcript.usage()) == (10, 35, 300, 300)


def test_a_lone_prompt_after_a_rewind_is_the_path_and_the_rest_a_branch():
    long = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "go"}},
        _assistant("a1", "u1", [{"type": "text", "text": "first"}], "m1"),
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "message": {"content": "more"}},
        _assistant("a2", "u2", [{"type": "text", "text": "second"}], "m2"),
        {"type": "user", "uuid": "u3", "parentUuid": "a1", "message": {"content": "instead"}},
    ]
    transcript = parse_bytes(_session(*long), "s.jsonl")
    assert texts(transcript, EventKind.USER_TEXT, "main") == ["go", "instead"]
    [branch] = transcript.main.branches
    assert texts(transcript, EventKind.ASSISTANT_TEXT, branch.id) == ["second"]


# -- 2.1 workflows -------------------------------------------------------------------------


def test_workflow_agents_hang_under_the_call_that_named_their_run():
    transcript = parse_path(FIXTURES / "claude_code_workflow")
    spawns = [(e.call_id, e.child_thread) for e in events_of(transcript, EventKind.SUBAGENT_SPAWN)]
    assert spawns == [
        ("wf1", "agent-aw1"),  # toolUseResult.runId
        ("wf1", "agent-aw2"),
        ("wf2", "agent-aw3"),  # only "Transcript dir: .../workflows/wf_run2" in the result
    ]
    assert transcript.thread("agent-aw2").title == "Workflow wf_run1: Sweep docs/b"
    assert transcript.notes == []
    # main: msg_w1 (5, 20, 0, 100) + msg_w2 (2, 10, 100, 0);
    # agents: aw1 (3, 9, 0, 40) + aw2 (1, 4, 0, 20) + aw3 (2, 6, 0, 10)
    assert usage_tuple(transcript.usage(include_subagents=False)) == (7, 30, 100, 100)
    assert usage_tuple(transcript.usage()) == (13, 49, 100, 170)


def test_the_session_file_alone_brings_its_workflow_agents():
    transcript = parse_path(FIXTURES / "claude_code_workflow" / "wf-1.jsonl")
    assert [t.id for t in transcript.threads] == ["main", "agent-aw1", "agent-aw2", "agent-aw3"]


def test_a_workflow_agent_naming_its_session_with_a_suffix_still_belongs(tmp_path):
    run = tmp_path / "s" / "subagents" / "workflows" / "wf_1"
    run.mkdir(parents=True)
    main = {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "go"}}
    agent = {"type": "user", "uuid": "x1", "parentUuid": None, "message": {"content": "part"}}
    (tmp_path / "s.jsonl").write_text(json.dumps({**main, "sessionId": "s"}) + "\n")
    (run / "agent-x.jsonl").write_text(json.dumps({**agent, "sessionId": "s#agent-x"}) + "\n")
    assert [t.id for t in parse_path(tmp_path).threads] == ["main", "agent-x"]


# -- 2.1 record types ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def records21():
    return parse_path(FIXTURES / "claude_code_records" / "rec-1.jsonl")


def test_2_1_session_records_are_notices_shown_where_they_change(records21):
    notices = texts(records21, EventKind.SYSTEM_NOTICE)
    # permission-mode "default" twice, then "plan": shown twice
    assert [n for n in notices if n.startswith("Permission mode")] == [
        "Permission mode: default",
        "Permission mode: plan",
    ]
    assert "Worktree: fast-softmax at /w/.claude/worktrees/fast-softmax" in notices
    assert "Pull request #42: https://example.invalid/pr/42" in notices
    assert "Mode: normal" in notices
    assert "Cost as Claude Code reckoned it: $0.0123 so far" in notices
    assert any(n.startswith("Tool output replaced in the context") for n in notices)


def test_2_1_attachments_are_notices_with_readable_text(records21):
    notices = {e.text.split("\n")[0]: e for e in events_of(records21, EventKind.SYSTEM_NOTICE)}
    assert notices["Hook SessionStart:startup ran (exit 0, 40 ms)"].text.endswith("3 rules")
    blocked = notices["Hook PreToolUse:Bash blocked the action"]
    assert blocked.is_error and blocked.text.endswith("make is not allowed here")
    assert notices["Memory file loaded: /w/CLAUDE.md"].text.endswith("Always run the tests.")
    assert "Tools made available: WebSearch, NotebookEdit" in notices
    assert notices["Todo reminder (1 item)"].text.endswith("- Tune block size (in_progress)")
    assert "<task-id>b1</task-id>" in notices["Background task finished"].text


def test_a_message_queued_while_the_agent_worked_is_user_text(records21):
    users = texts(records21, EventKind.USER_TEXT)
    assert users == ["Tune the block size", "use python bench.py instead"]


def test_titles_are_silent_and_a_record_type_nobody_knows_is_still_unknown(records21):
    [unknown] = events_of(records21, EventKind.UNKNOWN)
    assert unknown.raw_type == "brand-new-record"
    everything = " ".join(e.text for e in records21.events())
    assert "Tuning the block size" not in everything and "block size\n" not in everything
    # msg_q1 (4, 10, 0, 50) + msg_q2 (2, 8, 50, 0)
    assert usage_tuple(records21.usage()) == (6, 18, 50, 50)


# -- subagent files missing from the upload ------------------------------------------------


def test_a_session_file_uploaded_without_its_folder_says_so():
    data = (FIXTURES / "claude_code_missing" / "miss-1.jsonl").read_bytes()
    for transcript in (
        parse_bytes(data, "miss-1.jsonl"),
        parse_path(FIXTURES / "claude_code_missing" / "miss-1.jsonl"),
    ):
        note = transcript.notes[0]
        assert note.startswith(
            "This session spawned 2 subagents and 1 workflow run whose files were not uploaded: "
            "upload the session folder as a .zip"
        )
        main = [e for t in transcript.main.turns for e in t.events]
        after = {
            main[i - 1].call_id: e.text
            for i, e in enumerate(main)
            if i and e.kind == EventKind.SYSTEM_NOTICE
        }
        assert after == {
            "ag1": "The log of subagent ma1 is not in the upload.",  # toolUseResult.agentId
            "ag2": "The log of subagent mb2 is not in the upload.",  # "agentId: mb2" in the text
            "wf1": "The logs of workflow run wf_gone are not in the upload.",
        }
        # msg_m1 (6, 30, 0, 100) + msg_m2 (1, 5, 100, 0) + msg_m3 (1, 6, 100, 0)
        assert usage_tuple(transcript.usage()) == (8, 41, 200, 100)


def test_a_folder_missing_one_agent_file_names_it_without_the_zip_advice(tmp_path):
    folder = tmp_path / "claude_code_parallel"
    shutil.copytree(FIXTURES / "claude_code_parallel", folder)
    (folder / "par-1" / "subagents" / "agent-prof1.jsonl").unlink()
    transcript = parse_path(folder)
    assert transcript.notes[0] == (
        "1 subagent named by this session has no file in the upload; their calls are shown "
        "without their logs."
    )


# -- hostile trees and records -------------------------------------------------------------


def test_parent_cycles_and_self_parents_are_read_without_end():
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": "a2", "message": {"content": "go"}},
        _assistant("a1", "u1", [{"type": "text", "text": "one"}], "m1"),
        _assistant("a2", "a1", [{"type": "text", "text": "two"}], "m2"),
        {"type": "system", "uuid": "s1", "parentUuid": "s1", "content": "self"},
        {"type": "attachment", "uuid": "t1", "parentUuid": "t2", "attachment": {"type": "x"}},
        {"type": "attachment", "uuid": "t2", "parentUuid": "t1", "attachment": {"type": "y"}},
        _assistant("a3", "t2", [{"type": "text", "text": "three"}], "m3"),
    ]
    transcript = parse_bytes(_session(*records), "s.jsonl")
    shown = texts(transcript, EventKind.ASSISTANT_TEXT) + texts(transcript, EventKind.USER_TEXT)
    assert sorted(shown) == ["go", "one", "three", "two"]


@pytest.mark.parametrize(
    "attachment",
    [
        None,
        "text",
        7,
        [],
        [1, {"type": None}],
        {},
        {"type": None},
        {"type": ["hook_success"]},
        {"type": "hook_success", "hookName": {"a": 1}, "exitCode": "0", "content": {"x": [1]}},
        {"type": "queued_command", "prompt": {"text": "x"}},
        {"type": "queued_command", "prompt": [{"type": "text", "text": None}, 5]},
        {"type": "todo_reminder", "content": [{"content": None}, "x"]},
        {"type": "deferred_tools_delta", "addedNames": [1, None]},
        {"type": "file", "path": ["a"], "content": {"content": 5}},
    ],
)
def test_attachments_of_any_shape_are_read_or_reported(attachment):
    prompt = {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "go"}}
    record = {"type": "attachment", "uuid": "x1", "parentUuid": "u1", "attachment": attachment}
    transcript = parse_bytes(_session(prompt, record), "s.jsonl")
    assert texts(transcript, EventKind.USER_TEXT)[0] == "go"


@pytest.mark.parametrize(
    "kind", ["permission-mode", "worktree-state", "pr-link", "cost-state", "mode"]
)
def test_session_records_of_any_shape_are_read(kind):
    prompt = {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "go"}}
    for junk in (None, 1, [2], {"a": [None]}, "x" * 10):
        fields = {
            "permissionMode": junk,
            "worktreeSession": junk,
            "prUrl": junk,
            "prNumber": junk,
            "totalCostUSD": junk,
            "mode": junk,
        }
        transcript = parse_bytes(_session(prompt, {"type": kind, **fields}), "s.jsonl")
        assert transcript.malformed == []


def test_a_huge_attachment_is_cut():
    prompt = {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "go"}}
    huge = {"type": "skill_listing", "content": "y" * 1_000_000}
    record = {"type": "attachment", "uuid": "x1", "parentUuid": "u1", "attachment": huge}
    [notice] = events_of(parse_bytes(_session(prompt, record), "s.jsonl"), EventKind.SYSTEM_NOTICE)
    assert len(notice.text) < DETAIL_CAP_CHARS + 100 and "more characters" in notice.text


def test_text_from_new_records_and_branches_is_escaped_on_the_page():
    payload = "<script>window.__pwned=1</script>"
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "go"}},
        _assistant("a1", "u1", [{"type": "text", "text": payload}], "m1"),
        {"type": "user", "uuid": "u2", "parentUuid": "u1", "message": {"content": payload}},
        _assistant("a2", "u2", [{"type": "text", "text": "kept"}], "m2"),
        {
            "type": "attachment",
            "uuid": "x1",
            "parentUuid": "a2",
            "attachment": {"type": "hook_success", "hookName": payload, "content": payload},
        },
        {"type": "permission-mode", "permissionMode": payload},
        {"type": "worktree-state", "worktreeSession": {"worktreeName": payload}},
    ]
    transcript = parse_bytes(_session(*records), "s.jsonl")
    assert transcript.main.branches  # "go" was answered twice: the first answer is a branch
    page = export_html(transcript)
    assert payload not in page and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page


def test_a_forked_agent_repeating_the_session_lines_shows_and_counts_them_once(tmp_path):
    prompt = {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "go"}}
    call = _assistant(
        "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Agent", "input": {}}], "m1"
    )
    call["message"]["usage"] = {"input_tokens": 9, "output_tokens": 9}
    spawned = _result("r1", "a1", "t1", "done") | {"toolUseResult": {"agentId": "f1"}}
    own = _assistant("f2", "a1", [{"type": "text", "text": "forked work"}], "mf")
    own["message"]["usage"] = {"input_tokens": 1, "output_tokens": 2}
    copied = {**call, "uuid": "c1", "isSidechain": True}  # same message id, a new uuid
    (tmp_path / "s.jsonl").write_bytes(_session(prompt, call, spawned))
    (tmp_path / "s" / "subagents").mkdir(parents=True)
    (tmp_path / "s" / "subagents" / "agent-f1.jsonl").write_bytes(_session(prompt, copied, own))
    transcript = parse_path(tmp_path)
    fork = transcript.thread("agent-f1")
    assert texts(transcript, EventKind.USER_TEXT, fork.id) == []  # the inherited prompt: once
    # m1 (9, 9) counted on main only; the fork's own call (1, 2)
    assert usage_tuple(transcript.usage()) == (10, 11, 0, 0)
