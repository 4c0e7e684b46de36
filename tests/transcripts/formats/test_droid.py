"""Factory Droid: the session store (with settings.json) and `droid exec` stream-json."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from transcript_formats import (
    EventKind,
    TranscriptFormatError,
    detect_format,
    parse_bytes,
    parse_path,
)
from transcript_formats.diffs import apply_unified_diff

from .hostile_logs import assert_payloads_stay_text, fuzz
from .payload_fields import carries_payloads, lines_with_payloads
from .transcript_readers import FIXTURES, events_of, texts, usage_tuple

STREAM = FIXTURES / "droid_stream.jsonl"
SESSIONS = FIXTURES / "droid_session"
MAIN = "1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
SUB = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"


@pytest.fixture(scope="module")
def stream():
    return parse_path(STREAM)


@pytest.fixture(scope="module")
def session():
    return parse_path(SESSIONS)


def test_stream_json_is_read_as_droid_not_as_cursor_or_claude(stream):
    # Its tool_call records and its init record listing tools once read as Cursor's stream
    # ("tool call ? null") or Claude's.
    assert detect_format(STREAM) == "droid-stream-json"
    calls = events_of(stream, EventKind.TOOL_CALL)
    assert [c.tool_name for c in calls] == ["Read", "Edit", "Execute"]
    assert calls[0].arguments == {"file_path": "/home/dev/kernels/k.py"}
    assert all(c.call_id for c in calls)


def test_a_stream_without_tool_calls_is_not_taken_for_claude_stream_json():
    # its init record lists tools, which alone once meant Claude's stream
    log = b"".join(
        json.dumps(r).encode() + b"\n"
        for r in (
            {"type": "system", "subtype": "init", "session_id": "s", "tools": ["Read"]},
            {"type": "message", "role": "user", "id": "u", "text": "hi", "session_id": "s"},
            {"type": "message", "role": "assistant", "id": "a", "text": "hello", "session_id": "s"},
            {"type": "completion", "finalText": "hello", "session_id": "s"},
        )
    )
    run = parse_bytes(log, "exec.jsonl")
    assert run.format == "droid-stream-json"
    assert texts(run, EventKind.ASSISTANT_TEXT) == ["hello"]


def test_stream_json_usage_is_the_completions_total_on_the_last_call(stream):
    # completion.usage: 1,200 input, 300 output (the 50 thinking tokens are part of them),
    # 8,000 cache reads, 500 cache writes
    assert usage_tuple(stream.usage()) == (1200, 300, 8000, 500)
    last = [t for t in stream.main.turns if t.usage]
    assert len(last) == 1 and last[0] is stream.main.turns[-1]
    # claude-sonnet-4-5: 1,200*3 + 300*15 + 8,000*0.3 + 500*3.75 = 12,375 per million
    assert stream.cost_usd == pytest.approx(12375 / 1e6) and stream.cost_computed
    assert any("only as a total" in note for note in stream.notes)


def test_stream_json_messages_reasoning_results_and_run_details(stream):
    assert stream.session_id == "c6b8a1f0-2d4e-4b7a-9e3c-1f5a7d9b2c40"
    assert (stream.cwd, stream.model) == ("/home/dev/kernels", "claude-sonnet-4-5-20250929")
    assert texts(stream, EventKind.USER_TEXT) == ["Speed up k.py"]
    assert texts(stream, EventKind.REASONING) == ["Vectorise the loop."]  # printed twice, once
    assert stream.final_text == "k.py is faster; one test fails."
    assert stream.duration_s == pytest.approx(12.5)
    failed = [e for e in events_of(stream, EventKind.TOOL_RESULT) if e.is_error]
    assert [e.call_id for e in failed] == ["toolu_03"]
    [change] = events_of(stream, EventKind.FILE_CHANGE)
    assert change.path == "/home/dev/kernels/k.py"
    assert (
        apply_unified_diff("    return [v * 2 for v in x]\n", change.diff) == "    return x * 2\n"
    )
    [bad] = stream.malformed
    assert (bad.source, bad.line) == ("droid_stream.jsonl", 10)
    assert events_of(stream, EventKind.UNKNOWN)[0].raw_type == "heartbeat"


def test_stream_json_error_record_makes_the_run_an_error():
    log = b"".join(
        json.dumps(r).encode() + b"\n"
        for r in (
            {"type": "message", "role": "user", "text": "hi", "session_id": "s"},
            {
                "type": "error",
                "source": "cli",
                "message": "Authentication failed",
                "session_id": "s",
            },
        )
    )
    run = parse_bytes(log, "exec.jsonl")
    assert run.is_error and texts(run, EventKind.SYSTEM_NOTICE) == ["Authentication failed"]


def test_session_tokens_come_from_each_sessions_settings_file(session):
    main, sub = session.threads
    # main settings.json: 40 input, 900 output (thinking 100 counted inside), 30,000 cache
    # reads, 5,000 cache writes, on the main session's last model call
    assert usage_tuple(main.usage()) == (40, 900, 30000, 5000)
    assert main.turns[-1].usage is not None
    # the subagent's own settings.json: 10 / 200 / 4,000 / 1,000, on its thread
    assert usage_tuple(sub.usage()) == (10, 200, 4000, 1000)
    assert usage_tuple(session.usage()) == (50, 1100, 34000, 6000)
    # sonnet-4-5: 40*3 + 900*15 + 30,000*0.3 + 5,000*3.75 = 41,370
    # haiku-4-5: 10*1 + 200*5 + 4,000*0.1 + 1,000*1.25 = 2,660   (per million)
    assert session.cost_usd == pytest.approx((41370 + 2660) / 1e6)


def test_session_messages_blocks_and_the_task_subagent(session):
    assert session.format == "droid-session"
    assert (session.session_id, session.cwd) == (MAIN, "/home/dev/kernels")
    assert session.model == "claude-sonnet-4-5-20250929"
    prompt, pasted = events_of(session, EventKind.USER_TEXT, "main")
    assert prompt.text == "Speed up k.py and benchmark it"
    assert pasted.images[0].media_type == "image/png" and pasted.images[0].data
    reminder = texts(session, EventKind.SYSTEM_NOTICE, "main")[0]
    assert reminder.startswith("<system-reminder>")
    assert texts(session, EventKind.REASONING) == ["Read it first."]
    sub = session.threads[1]
    assert (sub.id, sub.kind, sub.title) == (SUB, "subagent", "Benchmark k.py")
    [spawn] = events_of(session, EventKind.SUBAGENT_SPAWN)
    assert spawn.call_id == "toolu_t" and sub.parent_event == spawn.id
    failed = [e for e in events_of(session, EventKind.TOOL_RESULT, SUB) if e.is_error]
    assert len(failed) == 1
    edit, create = events_of(session, EventKind.FILE_CHANGE)
    assert edit.path == "/home/dev/kernels/k.py"
    assert create.path == "/home/dev/kernels/bench.py" and create.diff.startswith("--- /dev/null")
    assert apply_unified_diff("", create.diff) == "import k\nprint(k.k(2))\n"
    assert events_of(session, EventKind.UNKNOWN)[0].raw_type == "session_note"


def test_a_reminder_ahead_of_the_prompt_in_one_block_is_split_from_it():
    records = [
        {"type": "session_start", "id": "s", "cwd": "/w"},
        {
            "type": "message",
            "id": "m1",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "<system-reminder>\nBe brief.\n</system-reminder>\n\nGo",
                    }
                ],
            },
        },
        {"type": "message", "id": "m2", "message": {"role": "assistant", "content": "Ok"}},
    ]
    run = parse_bytes("".join(json.dumps(r) + "\n" for r in records).encode(), "s.jsonl")
    assert texts(run, EventKind.USER_TEXT) == ["Go"]
    assert texts(run, EventKind.SYSTEM_NOTICE) == [
        "<system-reminder>\nBe brief.\n</system-reminder>"
    ]
    assert texts(run, EventKind.ASSISTANT_TEXT) == ["Ok"]


def test_a_session_file_alone_keeps_its_messages_and_has_no_tokens():
    alone = parse_path(SESSIONS / f"{MAIN}.jsonl")
    assert alone.format == "droid-session" and len(alone.threads) == 1
    assert usage_tuple(alone.usage()) == (0, 0, 0, 0)


def test_messages_that_carry_usage_are_charged_on_their_own_calls(tmp_path):
    records = [
        {"type": "session_start", "id": "s", "cwd": "/w"},
        {"type": "message", "id": "u", "message": {"role": "user", "content": "go"}},
        {
            "type": "message",
            "id": "a",
            "message": {
                "role": "assistant",
                "model": "claude-haiku-4-5",
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 11},
            },
        },
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    settings = {"tokenUsage": {"inputTokens": 999, "outputTokens": 999}}
    (tmp_path / "s.settings.json").write_text(json.dumps(settings))
    # the message's own usage wins; the settings total would count it again
    assert usage_tuple(parse_path(tmp_path).usage()) == (7, 3, 11, 0)


def test_a_zipped_sessions_folder_and_a_settings_file_alone():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in SESSIONS.iterdir():
            archive.write(path, f"-home-dev-kernels/{path.name}")
    zipped = parse_bytes(buffer.getvalue(), "sessions.zip")
    assert zipped.format == "droid-session" and len(zipped.threads) == 2
    settings = (SESSIONS / f"{MAIN}.settings.json").read_bytes()
    with pytest.raises(TranscriptFormatError, match="settings"):
        parse_bytes(settings, f"{MAIN}.settings.json")


@pytest.mark.parametrize("path", [STREAM, SESSIONS])
def test_fields_of_any_type_parse_or_are_refused_cleanly(path):
    read = fuzz(path, rounds=60, seed=15, check=lambda t: None)
    assert read > 20  # not a vacuous test: many still parse


def test_a_mangled_settings_file_is_counted_not_fatal(tmp_path):
    (tmp_path / "s.jsonl").write_bytes((SESSIONS / f"{MAIN}.jsonl").read_bytes())
    (tmp_path / "s.settings.json").write_text('{"tokenUsage": {"inputTokens": 5}, "model": [1]}')
    transcript = parse_path(tmp_path)
    assert usage_tuple(transcript.usage()) == (5, 0, 0, 0) and transcript.model is None


@pytest.mark.parametrize("path", [STREAM, SESSIONS / f"{MAIN}.jsonl"])
def test_payloads_in_every_field_stay_text_on_the_page(path):
    transcript = parse_bytes(lines_with_payloads(path.read_bytes()), path.name)
    assert carries_payloads(json.dumps(transcript.to_dict(), default=str))
    assert_payloads_stay_text(transcript)
