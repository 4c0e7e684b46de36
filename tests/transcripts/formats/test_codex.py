"""Codex rollouts (current and legacy) and `codex exec --json`."""

from __future__ import annotations

import json

import pytest

from transcript_formats import EventKind, parse_bytes, parse_path
from transcript_formats.diffs import apply_unified_diff

from .transcript_readers import FIXTURES, events_of, texts, usage_tuple

OPS = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"


@pytest.fixture(scope="module")
def rollout():
    return parse_path(FIXTURES / "codex_rollout")


def test_usage_is_the_delta_of_running_totals_with_repeats_ignored(rollout):
    # totals (input, cached, output): (1000,200,150) twice, (2500,1200,400), (4200,2600,500) twice
    calls = [t.usage for t in rollout.main.turns if t.usage is not None]
    assert [usage_tuple(u) for u in calls] == [
        (800, 150, 200, 0),
        (500, 250, 1000, 0),
        (300, 100, 1400, 0),
    ]
    # input is reported without its cached part: 4200 - 2600
    assert usage_tuple(rollout.usage(include_subagents=False)) == (1600, 500, 2600, 0)


def test_subagent_rollout_is_linked_through_session_meta_source(rollout):
    sub = rollout.thread("agent-0199-child")
    assert sub.kind == "subagent" and sub.title == "Reviewer"
    assert sub.parent_thread == "main"
    [spawn] = events_of(rollout, EventKind.SUBAGENT_SPAWN)
    assert spawn.child_thread == sub.id and sub.parent_event == spawn.id
    assert usage_tuple(sub.usage()) == (200, 20, 100, 0)
    assert usage_tuple(rollout.usage()) == (1800, 520, 2700, 0)


def test_apply_patch_add_and_update_become_diffs_that_rebuild_the_file(rollout):
    add, update = events_of(rollout, EventKind.FILE_CHANGE)
    assert add.path == "ops.py" and add.call_id == "call_add"
    assert update.call_id == "call_upd"  # found inside a shell heredoc
    content = apply_unified_diff("", add.diff)
    assert content == OPS
    assert "@@ -6,1 +6,2 @@" in update.diff  # the line number found in the tracked file
    assert apply_unified_diff(content, update.diff) == OPS.replace(
        "    return a * b", "    # product\n    return a * b"
    )


def test_tool_calls_join_outputs_by_call_id_and_failures_are_errors(rollout):
    results = {e.call_id: e for e in events_of(rollout, EventKind.TOOL_RESULT)}
    assert results["call_add"].text.startswith("Success.")
    assert results["call_test"].is_error and results["call_test"].tool_name == "shell"
    calls = {e.call_id: e for e in events_of(rollout, EventKind.TOOL_CALL)}
    assert calls["call_test"].arguments == {"command": ["bash", "-lc", "pytest -q"]}


def test_environment_context_is_a_notice_and_events_do_not_repeat_items(rollout):
    assert texts(rollout, EventKind.USER_TEXT, "main") == ["Add ops.py and comment mul"]
    assert texts(rollout, EventKind.SYSTEM_NOTICE, "main")[0].startswith("<environment_context>")
    assert texts(rollout, EventKind.REASONING) == ["**Creating the file**"]
    assert texts(rollout, EventKind.ASSISTANT_TEXT, "main") == ["Done: ops.py is in place."]


def test_compacted_record_unknown_event_and_malformed_line(rollout):
    [compaction] = events_of(rollout, EventKind.COMPACTION)
    assert "ops.py created" in compaction.text
    [unknown] = events_of(rollout, EventKind.UNKNOWN)
    assert unknown.raw_type == "event_msg:galaxy_brain_event"
    [bad] = rollout.malformed
    assert bad.line == 20 and bad.source.endswith("0199-main.jsonl")


def test_session_meta_and_turn_context_fill_the_run_details(rollout):
    assert (rollout.session_id, rollout.cwd, rollout.git_branch) == (
        "0199-main",
        "/repo",
        "kernels",
    )
    assert (rollout.cli_version, rollout.model) == ("0.58.0", "gpt-5-codex")
    assert rollout.final_text == "Done: ops.py is in place."
    # gpt-5-codex: $1.25 / $10 / $0.125 per million (input, output, cached)
    expected = (1800 * 1.25 + 520 * 10 + 2700 * 0.125) / 1e6
    assert rollout.cost_computed and rollout.cost_usd == pytest.approx(expected, abs=1e-6)


def _rollout(*records: dict) -> bytes:
    lines = [{"timestamp": "2025-11-20T11:00:00.000Z", "type": t, "payload": p} for t, p in records]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_patch_apply_end_diff_replaces_one_whose_line_numbers_were_unknown():
    envelope = "*** Begin Patch\n*** Update File: big.py\n@@\n-old\n+new\n*** End Patch"
    codex_diff = "@@ -40,1 +40,1 @@\n-old\n+new\n"
    data = _rollout(
        ("session_meta", {"id": "s", "cwd": "/r"}),
        (
            "response_item",
            {"type": "custom_tool_call", "call_id": "c", "name": "apply_patch", "input": envelope},
        ),
        (
            "event_msg",
            {
                "type": "patch_apply_end",
                "call_id": "c",
                "success": True,
                "changes": {
                    "/r/big.py": {"type": "update", "unified_diff": codex_diff, "move_path": None}
                },
            },
        ),
    )
    [change] = events_of(parse_bytes(data, "rollout.jsonl"), EventKind.FILE_CHANGE)
    assert change.diff == "--- a/r/big.py\n+++ b/r/big.py\n" + codex_diff


def test_patch_apply_end_alone_gives_add_update_and_delete_diffs():
    data = _rollout(
        ("session_meta", {"id": "s"}),
        (
            "event_msg",
            {
                "type": "patch_apply_end",
                "call_id": "c",
                "success": True,
                "changes": {
                    "a.py": {"add": {"content": "x\n"}},
                    "b.py": {
                        "type": "update",
                        "unified_diff": "@@ -1 +1 @@\n-1\n+2\n",
                        "move_path": "c.py",
                    },
                    "d.py": {"type": "delete", "content": "gone\n"},
                },
            },
        ),
    )
    changes = {
        e.path: e.diff for e in events_of(parse_bytes(data, "r.jsonl"), EventKind.FILE_CHANGE)
    }
    assert changes["a.py"] == "--- /dev/null\n+++ b/a.py\n@@ -0,0 +1,1 @@\n+x\n"
    assert changes["b.py"].startswith("--- a/b.py\n+++ b/c.py\n")
    assert changes["d.py"] == "--- a/d.py\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-gone\n"


def test_failed_patch_marks_its_file_change_as_an_error():
    envelope = "*** Begin Patch\n*** Add File: x.py\n+x\n*** End Patch"
    data = _rollout(
        ("session_meta", {"id": "s"}),
        (
            "response_item",
            {"type": "custom_tool_call", "call_id": "c", "name": "apply_patch", "input": envelope},
        ),
        ("event_msg", {"type": "patch_apply_end", "call_id": "c", "success": False, "changes": {}}),
    )
    [change] = events_of(parse_bytes(data, "r.jsonl"), EventKind.FILE_CHANGE)
    assert change.is_error


def test_legacy_flat_rollout_is_read():
    legacy = parse_path(FIXTURES / "codex_legacy.jsonl")
    assert legacy.format == "codex-rollout-legacy"
    assert legacy.session_id == "legacy-1"
    assert texts(legacy, EventKind.USER_TEXT) == ["List files"]
    [result] = events_of(legacy, EventKind.TOOL_RESULT)
    assert result.text == "a.py\n" and result.call_id == "call_1"
    assert texts(legacy, EventKind.ASSISTANT_TEXT) == ["One file: a.py"]


@pytest.fixture(scope="module")
def exec_json():
    return parse_path(FIXTURES / "codex_exec.jsonl")


def test_exec_json_usage_per_turn_without_the_cached_part(exec_json):
    assert exec_json.format == "codex-exec-json"
    assert exec_json.session_id == "0199-exec"
    assert usage_tuple(exec_json.main.turns[0].usage) == (24763 - 24448, 122, 24448, 0)


def test_exec_json_items_become_events(exec_json):
    calls = events_of(exec_json, EventKind.TOOL_CALL)
    assert [c.tool_name for c in calls] == ["shell", "docs.search", "web_search"]
    shell, mcp = events_of(exec_json, EventKind.TOOL_RESULT)
    assert shell.is_error and shell.text == "1 failed"
    assert mcp.text == "3 hits" and not mcp.is_error
    assert [e.path for e in events_of(exec_json, EventKind.FILE_CHANGE)] == ["/w/k.py", "/w/new.py"]
    assert texts(exec_json, EventKind.REASONING) == ["**Looking at the kernel**"]
    assert texts(exec_json, EventKind.ASSISTANT_TEXT) == ["Fixed the kernel."]
    assert events_of(exec_json, EventKind.UNKNOWN)[0].raw_type == "item:hologram"


def test_exec_json_failed_turn_is_an_error(exec_json):
    assert exec_json.is_error
    assert texts(exec_json, EventKind.SYSTEM_NOTICE)[-1] == "stream disconnected"


def test_ghost_snapshots_are_skipped_and_compaction_items_are_compactions():
    data = _rollout(
        ("session_meta", {"id": "s"}),
        ("response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
        ("response_item", {"type": "compaction", "encrypted_content": "gAAA"}),
    )
    transcript = parse_bytes(data, "r.jsonl")
    assert events_of(transcript, EventKind.UNKNOWN) == []
    assert texts(transcript, EventKind.COMPACTION) == ["Conversation compacted"]


@pytest.fixture(scope="module")
def tool_search():
    return parse_path(FIXTURES / "codex_tool_search.jsonl")


def test_tool_search_call_is_a_tool_call_with_its_query_joined_to_what_it_loaded(tool_search):
    assert events_of(tool_search, EventKind.UNKNOWN) == []
    first, _, server = events_of(tool_search, EventKind.TOOL_CALL)
    assert first.tool_name == "tool_search" and first.call_id == "call_ts1"
    assert first.arguments == {"query": "calendar create", "limit": 2}
    results = {e.call_id: e for e in events_of(tool_search, EventKind.TOOL_RESULT)}
    assert results["call_ts1"].tool_name == "tool_search"
    assert results["call_ts1"].text == (
        "Loaded 2 tools:\ncalendar.create_event: Create an event\ncalendar.list_events: List events"
    )
    # A server-side search has no call id on either side: its id and its output's place join them.
    assert server.call_id == "ts_2" and server.arguments == {"query": "gmail send"}
    assert results["ts_2"].text == "Loaded 1 tool:\ngmail_send: Send mail"
    [turn] = [t for t in tool_search.main.turns if server in t.events]
    assert turn.events.index(results["ts_2"]) == turn.events.index(server) + 1


def test_a_tool_a_search_loaded_is_named_with_its_namespace(tool_search):
    [result] = [e for e in events_of(tool_search, EventKind.TOOL_RESULT) if e.call_id == "call_ev"]
    assert result.tool_name == "calendar.create_event" and result.text == "Created event 42"


def test_tool_search_tokens_are_the_deltas_of_the_running_totals(tool_search):
    # totals (input, cached, output): (1000,200,50), (2600,1000,90) twice, (4000,2200,150)
    calls = [usage_tuple(t.usage) for t in tool_search.main.turns if t.usage is not None]
    assert calls == [(1000 - 200, 50, 200, 0), (1600 - 800, 40, 800, 0), (1400 - 1200, 60, 1200, 0)]
    # 800 + 800 + 200 = 1800 = 4000 - 2200 uncached; 50 + 40 + 60 = 150 out
    assert usage_tuple(tool_search.usage()) == (1800, 150, 2200, 0)


def test_tool_search_records_of_odd_shapes_are_read_or_reported_never_raised():
    data = _rollout(
        ("session_meta", {"id": "s"}),
        ("response_item", {"type": "tool_search_call", "call_id": "c", "arguments": '{"q": 1}'}),
        ("response_item", {"type": "tool_search_output", "call_id": "c", "tools": "<b>x</b>"}),
        ("response_item", {"type": "tool_search_call", "arguments": "not json"}),
        ("response_item", {"type": "tool_search_output", "call_id": 7, "tools": [None, 3, {}]}),
        ("response_item", {"type": "tool_search_output", "status": "failed", "tools": None}),
    )
    transcript = parse_bytes(data, "r.jsonl")
    calls = events_of(transcript, EventKind.TOOL_CALL)
    assert [c.arguments for c in calls] == [{"q": 1}, "not json"]
    results = events_of(transcript, EventKind.TOOL_RESULT)
    assert [r.text for r in results] == ["No tools found", "Loaded 1 tool:\n?", "No tools found"]
    assert results[0].call_id == "c" and results[2].is_error
    assert transcript.malformed == []
