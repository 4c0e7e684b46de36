"""Gemini CLI session JSONL (0.40+): re-written messages, rewinds, restated history, subagents."""

from __future__ import annotations

import json

import pytest

from transcript_formats import EventKind, parse_bytes, parse_path
from transcript_formats.diffs import apply_unified_diff

from .transcript_readers import FIXTURES, events_of, texts, usage_tuple

FOLDER = FIXTURES / "gemini_jsonl"
MAIN = FOLDER / "session-2026-05-02T10-00-7d3e9f21.jsonl"
HEADER = {"sessionId": "s-1", "projectHash": "ab" * 32, "startTime": "2026-05-02T10:00:00Z"}


@pytest.fixture(scope="module")
def gemini():
    return parse_path(FOLDER)


def test_tokens_count_each_message_once_whatever_times_it_was_rewritten(gemini):
    # g1 is written four times (its tokens, then its tool call twice); it counts once.
    # Per call: input = input - cached + tool, output = output + thoughts, cache = cached.
    #   g1  9000-6000+0 = 3000   120+300 = 420   6000
    #   g2  9500-9000   =  500    40+0   =  40   9000
    #   g3  9700-9000+20=  720    60+150 = 210   9000
    #   g4 10000-9500   =  500    30     =  30   9500
    #   g5 10200-10000  =  200    25     =  25  10000   (rewound, but billed)
    #   g6 10300-10000  =  300    50     =  50  10000
    #   main             5220            775           53500
    assert usage_tuple(gemini.usage(include_subagents=False)) == (5220, 775, 53500, 0)
    #   s2  2000-0      = 2000    15+35  =  50      0
    #   s3  2100-1500   =  600    10     =  10   1500
    assert usage_tuple(gemini.thread("agent-sub-1").usage()) == (2600, 60, 1500, 0)
    assert usage_tuple(gemini.usage()) == (7820, 835, 55000, 0)


def test_cost_prices_each_call_at_its_models_rate(gemini):
    # gemini-2.5-pro $1.25 / $10 / $0.125 cached; gemini-2.5-flash $0.30 / $2.50 / $0.03
    main = 5220 * 1.25 + 775 * 10 + 53500 * 0.125
    sub = 2600 * 0.30 + 60 * 2.50 + 1500 * 0.03
    assert gemini.cost_usd == pytest.approx((main + sub) / 1e6, abs=1e-6)
    assert gemini.cost_computed and gemini.model == "gemini-2.5-pro"


def test_prompts_show_what_the_user_typed_and_tool_responses_are_no_prompts(gemini):
    assert texts(gemini, EventKind.USER_TEXT, "main") == [
        "Speed up @k.py",
        "Also try a bigger block",
        "Keep the block size; sum up.",
    ]


def test_thoughts_text_calls_and_results(gemini):
    assert texts(gemini, EventKind.REASONING, "main") == [
        "Planning\nRead k.py before editing.",
        "The diff is in; now measure.",
    ]
    calls = events_of(gemini, EventKind.TOOL_CALL, "main")
    assert [(c.tool_name, c.call_id) for c in calls] == [
        ("read_file", "read_file-1"),
        ("replace", "replace-1"),
        ("run_shell_command", "shell-1"),
        ("codebase_investigator", "inv-1"),
    ]
    results = events_of(gemini, EventKind.TOOL_RESULT, "main")
    assert [r.call_id for r in results] == ["read_file-1", "replace-1", "shell-1", "inv-1"]
    assert results[0].text == "x = 1\n"  # no display: the function response
    assert results[2].is_error and results[2].text == "Command exited with code 1"


def test_an_edit_becomes_a_diff_of_its_whole_contents(gemini):
    [change] = events_of(gemini, EventKind.FILE_CHANGE)
    assert change.path == "/w/k.py" and change.call_id == "replace-1"
    assert apply_unified_diff("x = 1\n", change.diff) == "x = 2\n"


def test_a_rewind_keeps_the_abandoned_turns_and_says_so(gemini):
    notices = texts(gemini, EventKind.SYSTEM_NOTICE, "main")
    assert notices[0].startswith("Rewound to before message u3: the 2 turns above it")
    assert "Trying 256." in texts(gemini, EventKind.ASSISTANT_TEXT, "main")


def test_subagent_is_the_file_its_tool_call_names(gemini):
    sub = gemini.thread("agent-sub-1")
    [spawn] = events_of(gemini, EventKind.SUBAGENT_SPAWN)
    assert sub.parent_event == spawn.id and spawn.call_id == "inv-1"
    assert texts(gemini, EventKind.USER_TEXT, "agent-sub-1") == ["Find callers of k"]
    assert [t.model for t in sub.turns] == [None, "gemini-2.5-flash", "gemini-2.5-flash"]


def test_notices_unknown_types_malformed_lines_and_metadata(gemini):
    [quota] = [e for e in events_of(gemini, EventKind.SYSTEM_NOTICE) if e.is_error]
    assert quota.text == "Quota exceeded for quota metric"
    assert events_of(gemini, EventKind.UNKNOWN)[0].raw_type == "nebula"
    [bad] = gemini.malformed
    assert (bad.source, bad.line) == (MAIN.name, 19)
    assert gemini.session_id == "7d3e9f21-1111-4222-8333-444455556666"
    assert gemini.started_at == "2026-05-02T10:00:00.000Z"
    assert gemini.ended_at == "2026-05-02T10:02:06.000Z"  # the last $set's lastUpdated


def test_the_session_file_alone_brings_its_subagent_folder():
    transcript = parse_path(MAIN)
    assert [t.id for t in transcript.threads] == ["main", "agent-sub-1"]


def _jsonl(*records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_a_restated_history_adds_only_its_new_messages_as_a_compaction():
    data = _jsonl(
        HEADER,
        {"id": "u1", "type": "user", "content": "hello"},
        {"id": "g1", "type": "gemini", "content": "hi", "model": "gemini-2.5-pro"},
        {
            "$set": {
                "messages": [
                    {"id": "c1", "type": "user", "content": [{"text": "Summary: said hi."}]},
                    {"id": "g1", "type": "gemini", "content": "hi (masked)"},
                ]
            }
        },
    )
    transcript = parse_bytes(data, "session-x.jsonl")
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["hi"]
    assert texts(transcript, EventKind.COMPACTION) == ["Summary: said hi."]


def test_thoughts_inside_candidates_are_not_added_twice():
    # total = input + output + tool: the writer already counted thoughts in output.
    tokens = {"input": 100, "output": 50, "cached": 40, "thoughts": 20, "tool": 5, "total": 155}
    data = _jsonl(
        HEADER,
        {"id": "u1", "type": "user", "content": "go"},
        {"id": "g1", "type": "gemini", "content": "ok", "tokens": tokens, "model": "m"},
    )
    # input 100 - 40 + 5 = 65; output 50 (thoughts inside); cache 40
    assert usage_tuple(parse_bytes(data, "s.jsonl").usage()) == (65, 50, 40, 0)


def test_a_result_only_the_response_message_holds_is_still_shown():
    data = _jsonl(
        HEADER,
        {"id": "u1", "type": "user", "content": "look"},
        {
            "id": "g1",
            "type": "gemini",
            "content": "",
            "toolCalls": [{"id": "c1", "name": "ls", "args": {}, "status": "executing"}],
        },
        {
            "id": "u2",
            "type": "user",
            "content": [
                {"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a"}}}
            ],
        },
    )
    transcript = parse_bytes(data, "s.jsonl")
    [result] = events_of(transcript, EventKind.TOOL_RESULT)
    assert (result.call_id, result.text) == ("c1", "a")
    assert texts(transcript, EventKind.USER_TEXT) == ["look"]
