"""One meaning of "turn", "tool call" and "file change" across every format
(transcript_formats/counts.py; docs/transcripts.md, "What is counted"), checked over a log of
each format the registry declares."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from transcript_formats import EventKind, Transcript, parse_bytes, parse_path
from transcript_formats.counts import transcript_counts
from transcript_formats.file_writes import ops_of_call
from transcript_formats.registry import FORMATS
from transcript_render.view import build_view, outline

from .new_format_logs import (
    antigravity_log,
    kimi_code_session,
    loglines_export,
    openclaw_session,
    pi_session,
    write,
)
from .opencode_storage import export_document, write_storage
from .transcript_readers import FIXTURES, events_of


def fixture(name: str) -> Callable[[Path], Path]:
    return lambda _: FIXTURES / name


def opencode_export(tmp: Path) -> Path:
    return write(tmp / "export.json", json.dumps(export_document()).encode())


# A log of every format: the fixtures, and the logs of new_format_logs.
LOGS: dict[str, Callable[[Path], Path]] = {
    "claude-code-jsonl": fixture("claude_code_2_1"),
    "claude-code-stream-json": fixture("claude_stream.jsonl"),
    "claude-code-loglines": loglines_export,
    "codex-rollout": fixture("codex_rollout"),
    "codex-rollout-legacy": fixture("codex_legacy.jsonl"),
    "codex-exec-json": fixture("codex_exec.jsonl"),
    "cursor-stream-json": fixture("cursor_stream.jsonl"),
    "cursor-agent-transcript": fixture("cursor_transcripts"),
    "gemini-cli-session": fixture("gemini_session.json"),
    "gemini-cli-jsonl": fixture("gemini_jsonl"),
    "antigravity-cli": antigravity_log,
    "qwen-code-jsonl": fixture("qwen_chat.jsonl"),
    "copilot-cli-events": fixture("copilot_cli"),
    "opencode-storage": write_storage,
    "opencode-export": opencode_export,
    "droid-session": fixture("droid_session"),
    "droid-stream-json": fixture("droid_stream.jsonl"),
    "kimi-cli": fixture("kimi_session"),
    "kimi-code-wire": kimi_code_session,
    "pi-session": pi_session,
    "openclaw-session": openclaw_session,
    "grok-cli": fixture("grok_session"),
    "claude-ai-export": fixture("claude_ai_conversations.json"),
    "openai-chat-messages": fixture("openai_chat.json"),
    "anthropic-messages": fixture("anthropic_messages.json"),
}


def test_every_declared_format_has_a_log_here():
    assert set(LOGS) == {spec.id for spec in FORMATS}


def _file_tool_writes(transcript: Transcript) -> set[str]:
    """Call ids of the file tools' writes and edits that succeeded."""
    results = {e.call_id: e for e in events_of(transcript, EventKind.TOOL_RESULT) if e.call_id}
    found = set()
    for call in events_of(transcript, EventKind.TOOL_CALL):
        result = results.get(call.call_id)
        if not call.call_id or result is None or result.is_error:
            continue
        ops = ops_of_call(call, result, [])
        if any(op.kind in ("write", "append", "edit") and op.how == call.tool_name for op in ops):
            found.add(call.call_id)
    return found


@pytest.mark.parametrize("fmt", sorted(LOGS))
def test_turns_tool_calls_and_file_changes_mean_the_same_in_every_format(fmt, tmp_path):
    transcript = parse_path(LOGS[fmt](tmp_path))
    assert transcript.format == fmt
    counts = transcript_counts(transcript)
    events = transcript.events()

    # A tool call is every tool_call event, on every thread.
    assert counts.tool_calls == sum(e.kind == EventKind.TOOL_CALL for e in events)

    # A file change is every file a file tool wrote or edited: each such call has one.
    changed = {e.call_id for e in events_of(transcript, EventKind.FILE_CHANGE)}
    assert _file_tool_writes(transcript) <= changed
    assert counts.file_changes == len(events_of(transcript, EventKind.FILE_CHANGE))

    # A run's turns are its main conversation's and its subagents'; the page's card counts the
    # main conversation's, as its outline lists them.
    threads = transcript.threads
    assert counts.turns == sum(len(t.turns) for t in threads)
    view = build_view(transcript)
    assert view.figures.turns == counts.main_turns == len(threads[0].turns)
    if view.main is not None:
        assert len(outline(view.main)) == view.figures.turns
    assert view.figures.subagent_turns == counts.subagent_turns


def test_a_tool_call_in_a_message_that_also_carries_text_is_counted():
    base = {"sessionId": "s1", "cwd": "/w", "version": "2.0.50"}

    def line(uuid: str, parent: str | None, kind: str, content, second: int) -> dict:
        message: dict = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(id=f"m{uuid}", model="claude-sonnet-4-5")
        stamp = f"2026-01-01T00:00:{second:02d}Z"
        return {
            **base,
            "type": kind,
            "uuid": uuid,
            "parentUuid": parent,
            "timestamp": stamp,
            "message": message,
        }

    def call(n: int) -> dict:
        return {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f"ls {n}"}}

    def result(n: int) -> dict:
        return {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}

    rows = [
        line("u1", None, "user", "look around", 0),
        # One message: text and two calls (Claude Code 1.0 wrote whole messages on a line).
        line("a1", "u1", "assistant", [{"type": "text", "text": "Looking."}, call(1), call(2)], 1),
        line("u2", "a1", "user", [result(1), result(2)], 2),
        line("a2", "u2", "assistant", [{"type": "text", "text": "Once more."}, call(3)], 3),
        line("u3", "a2", "user", [result(3)], 4),
    ]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    assert transcript_counts(parse_bytes(data, "session.jsonl")).tool_calls == 3
    # The same session written without message or call ids, one request id for all.
    for row in rows:
        row["message"].pop("id", None)
        row["requestId"] = "req-1"
        for block in (
            row["message"]["content"] if isinstance(row["message"]["content"], list) else []
        ):
            block.pop("id", None)
            block.pop("tool_use_id", None)
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    assert transcript_counts(parse_bytes(data, "session.jsonl")).tool_calls == 3


def test_gemini_clis_write_file_is_a_file_change_like_claude_codes_write():
    call = {
        "id": "write_file-1",
        "name": "write_file",
        "args": {"file_path": "/w/kernel.py", "content": "import triton\n"},
        "status": "success",
        "resultDisplay": "Successfully created and wrote to new file: /w/kernel.py.",
        "result": [
            {
                "functionResponse": {
                    "id": "write_file-1",
                    "name": "write_file",
                    "response": {"output": "Created /w/kernel.py"},
                }
            }
        ],
    }
    session = {
        "sessionId": "g1",
        "projectHash": "p",
        "messages": [
            {"type": "user", "content": "write a kernel", "timestamp": "2026-01-01T00:00:00Z"},
            {
                "type": "gemini",
                "content": "Writing it.",
                "toolCalls": [call],
                "timestamp": "2026-01-01T00:00:01Z",
                "model": "gemini-2.5-pro",
            },
        ],
    }
    transcript = parse_bytes(json.dumps(session).encode(), "session-1.json")
    [change] = events_of(transcript, EventKind.FILE_CHANGE)
    assert (change.tool_name, change.path) == ("write_file", "/w/kernel.py")
    assert "+import triton" in (change.diff or "")
    assert transcript_counts(transcript).file_changes == 1


def test_the_copilot_logs_card_and_outline_agree_on_turns():
    transcript = parse_path(FIXTURES / "copilot_cli")
    view = build_view(transcript)
    assert view.main is not None
    assert view.figures.turns == len(outline(view.main)) == 10
    assert view.figures.subagent_turns == 2
    assert transcript_counts(transcript).turns == 12
