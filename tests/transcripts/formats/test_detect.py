"""Format detection from content, uploads as bytes, zip and gzip, and clear errors."""

from __future__ import annotations

import gzip
import io
import json
import zipfile

import pytest

from transcript_formats import (
    Event,
    EventKind,
    Thread,
    Transcript,
    TranscriptFormatError,
    Turn,
    detect,
    detect_format,
    parse_bytes,
    parse_path,
)
from transcript_formats.detect import SNIFF_LINE_CHARS, sniff
from transcript_formats.json_prefix import CUT, decode_prefix
from transcript_formats.key_fields import check_key_fields
from transcript_formats.records import SourceFile

from .transcript_readers import FIXTURES, texts


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude_code_2_1", "claude-code-jsonl"),
        ("claude_code_2_0/s20.jsonl", "claude-code-jsonl"),
        ("claude_code_1_0/s10.jsonl", "claude-code-jsonl"),
        ("claude_stream.jsonl", "claude-code-stream-json"),
        ("codex_rollout", "codex-rollout"),
        ("codex_legacy.jsonl", "codex-rollout-legacy"),
        ("codex_exec.jsonl", "codex-exec-json"),
        ("cursor_stream.jsonl", "cursor-stream-json"),
        ("gemini_session.json", "gemini-cli-session"),
        ("openai_chat.json", "openai-chat-messages"),
        ("anthropic_messages.json", "anthropic-messages"),
        ("cursor_transcripts", "cursor-agent-transcript"),
        ("gemini_jsonl", "gemini-cli-jsonl"),
        ("qwen_chat.jsonl", "qwen-code-jsonl"),
    ],
)
def test_each_format_is_detected_from_its_content(name, expected):
    assert detect_format(FIXTURES / name) == expected


def test_unknown_content_raises_an_error_naming_the_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some text\n")
    with pytest.raises(TranscriptFormatError, match=r"notes\.txt"):
        parse_path(path)


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(TranscriptFormatError, match="no such file"):
        parse_path(tmp_path / "absent.jsonl")


def test_upload_of_a_gzipped_log():
    data = gzip.compress((FIXTURES / "claude_stream.jsonl").read_bytes())
    transcript = parse_bytes(data, "run.jsonl.gz")
    assert transcript.format == "claude-code-stream-json"


def test_upload_of_a_zipped_session_folder_keeps_its_subagents():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in (FIXTURES / "claude_code_2_1").rglob("*"):
            if path.is_file():
                archive.write(path, f"run/{path.relative_to(FIXTURES / 'claude_code_2_1')}")
    transcript = parse_bytes(buffer.getvalue(), "run.zip")
    assert [t.id for t in transcript.threads] == ["main", "agent-a1b2"]


def test_a_broken_zip_is_a_clear_error():
    with pytest.raises(TranscriptFormatError, match=r"up\.zip"):
        parse_bytes(b"PK\x03\x04 not really", "up.zip")


def test_a_file_of_only_malformed_lines_is_not_a_known_format():
    with pytest.raises(TranscriptFormatError, match=r"broken\.jsonl"):
        parse_bytes(b"{oops\n{also bad\n", "broken.jsonl")


def test_stream_json_lines_with_uuids_are_not_taken_for_a_session_file():
    lines = [
        {"type": "system", "subtype": "init", "session_id": "x", "tools": [], "uuid": "1"},
        {
            "type": "assistant",
            "message": {
                "id": "m",
                "role": "assistant",
                "content": [{"type": "text", "text": "done"}],
            },
            "parent_tool_use_id": None,
            "session_id": "x",
            "uuid": "2",
        },
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    assert parse_bytes(data, "out.jsonl").format == "claude-code-stream-json"


def test_a_log_in_a_known_format_with_no_events_is_refused_naming_the_format():
    # A 117-byte upload: the init line of a stream-json run and nothing after it.
    line = {"type": "system", "subtype": "init", "session_id": "x", "tools": [], "uuid": "1"}
    data = (json.dumps(line) + "\n").encode()
    with pytest.raises(
        TranscriptFormatError,
        match=r"out.jsonl: read as claude-code-stream-json, but it holds no messages",
    ):
        parse_bytes(data, "out.jsonl")


# -- lines of any length ------------------------------------------------------------------------

SCREENSHOT = "iVBORw0KGgo" + "A" * 5_000_000  # a pasted 5 MB image, base64


def _lines(*records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _claude_line(uuid: str, parent: str | None, kind: str, content) -> dict:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s-big",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": kind, "content": content},
    }


def test_a_first_line_far_over_the_sniffing_window_is_still_read():
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": SCREENSHOT},
    }
    data = _lines(
        _claude_line("u1", None, "user", [image, {"type": "text", "text": "what is wrong here?"}]),
        _claude_line("a1", "u1", "assistant", [{"type": "text", "text": "The axis is flipped."}]),
    )
    assert len(data.split(b"\n", 1)[0]) > 50 * SNIFF_LINE_CHARS
    transcript = parse_bytes(data, "big.jsonl")
    assert transcript.format == "claude-code-jsonl"
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["The axis is flipped."]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            {"role": "user", "message": {"content": [{"type": "text", "text": SCREENSHOT}]}},
            "cursor-agent-transcript",
        ),
        (
            {
                "uuid": "q1",
                "type": "user",
                "sessionId": "s",
                "message": {"role": "user", "parts": [{"inlineData": {"data": SCREENSHOT}}]},
            },
            "qwen-code-jsonl",
        ),
        (
            {"type": "session_meta", "payload": {"id": "r", "instructions": SCREENSHOT}},
            "codex-rollout",
        ),
    ],
)
def test_a_single_huge_record_is_judged_from_its_start(record, expected):
    assert sniff(SourceFile("one.jsonl", _lines(record, {"x": 1}))) == expected


def test_sniffing_a_long_line_decodes_only_its_start(monkeypatch):
    seen: list[int] = []
    real = detect.decode_prefix
    monkeypatch.setattr(detect, "decode_prefix", lambda text: seen.append(len(text)) or real(text))
    line = {"type": "user", "uuid": "u", "sessionId": "s", "message": {"content": SCREENSHOT}}
    assert sniff(SourceFile("x.jsonl", _lines(line, line))) == "claude-code-jsonl"
    assert seen and max(seen) <= SNIFF_LINE_CHARS


def test_a_pretty_printed_document_is_still_one_document():
    data = json.dumps(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], indent=2
    )
    assert sniff(SourceFile("chat.json", data.encode())) == "openai-chat-messages"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1, "b": [1, 2]}', {"a": 1, "b": [1, 2]}),
        (
            '{"type": "user", "message": {"content": "abc',
            {"type": "user", "message": {"content": CUT}},
        ),
        ('{"a": [1, {"b": tr', {"a": [1, {"b": CUT}]}),
        ('{"a": 1, "very_long_na', {"a": 1}),
        ('[{"x": 1}, {"y": "2', [{"x": 1}, {"y": CUT}]),
        ('"unterminated', CUT),
    ],
)
def test_a_json_prefix_reads_as_far_as_it_goes(text, value):
    assert decode_prefix(text) == value


@pytest.mark.parametrize("text", ['{"a" 1', "{1: 2", '{"a": nope, "b": 2}', "not json"])
def test_a_json_prefix_that_is_no_json_is_refused(text):
    with pytest.raises(ValueError):
        decode_prefix(text)


# -- refusals: a format's key fields --------------------------------------------------------------


CURSOR_MAIN = next((FIXTURES / "cursor_transcripts").rglob("c0ffee01-*.jsonl"))


def test_cursor_agent_transcripts_are_read_as_what_they_are():
    transcript = parse_bytes(CURSOR_MAIN.read_bytes(), "t.jsonl")
    assert transcript.format == "cursor-agent-transcript"
    assert texts(transcript, EventKind.USER_TEXT)[0] == "Make the softmax kernel faster."


def test_read_as_a_chat_list_they_would_be_refused_not_shown_as_empty_turns():
    # What an agent-transcripts file was read as before: an OpenAI message list whose
    # messages' text sits under `message`, where the chat reader finds none.
    misread = detect._parsers()["openai-chat-messages"](
        [SourceFile("t.jsonl", CURSOR_MAIN.read_bytes())]
    )
    with pytest.raises(
        TranscriptFormatError, match=r"t\.jsonl: read as openai-chat-messages, but 5 of 7 turns"
    ):
        check_key_fields(misread, fmt="openai-chat-messages", label="t.jsonl")


def test_messages_with_no_text_are_refused_naming_the_format():
    data = _lines(
        *({"role": r, "content": [{"type": "text", "text": ""}]} for r in ("user", "assistant") * 2)
    )
    with pytest.raises(
        TranscriptFormatError,
        match=r"x\.jsonl: read as openai-chat-messages, but 4 of 4 messages have no text",
    ):
        parse_bytes(data, "x.jsonl")


def test_tool_calls_with_no_name_are_refused_naming_the_format():
    # Another agent's stream whose tool calls the Cursor stream reader cannot name.
    data = _lines(
        {"type": "system", "subtype": "init", "session_id": "d", "model": "m"},
        {"type": "user", "message": {"content": "fix it"}},
        *(
            {
                "type": "tool_call",
                "subtype": "started",
                "call_id": f"c{i}",
                "tool_call": {"args": {}},
            }
            for i in range(3)
        ),
    )
    with pytest.raises(
        TranscriptFormatError,
        match=r"d\.jsonl: read as cursor-stream-json, but 3 of 3 tool calls have no tool name",
    ):
        parse_bytes(data, "d.jsonl")


def test_one_odd_record_never_refuses_a_log():
    transcript = _transcript(
        _turn(
            Event(id="e1", kind=EventKind.USER_TEXT, text="go"),
            Event(id="e2", kind=EventKind.TOOL_CALL, tool_name="?"),
            Event(id="e3", kind=EventKind.ASSISTANT_TEXT, text=""),
        )
    )
    check_key_fields(transcript, fmt="x", label="log")


def test_turns_that_hold_nothing_are_refused():
    transcript = _transcript(
        _turn(Event(id="e1", kind=EventKind.USER_TEXT, text="go")), _turn(), _turn()
    )
    with pytest.raises(
        TranscriptFormatError, match=r"log: read as x, but 2 of 3 turns hold no event"
    ):
        check_key_fields(transcript, fmt="x", label="log")


def test_prompts_with_no_text_are_refused_for_formats_that_always_record_them():
    wordless = {"role": "user", "message": {"content": "<user_query></user_query>"}}
    answer = {"role": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}}
    data = _lines(wordless, wordless, answer, answer, answer)
    with pytest.raises(
        TranscriptFormatError,
        match=r"c\.jsonl: read as cursor-agent-transcript, but none of its 2 user prompts",
    ):
        parse_bytes(data, "c.jsonl")


def _turn(*events: Event) -> Turn:
    return Turn(index=0, events=list(events))


def _transcript(*turns: Turn) -> Transcript:
    return Transcript(format="x", threads=[Thread(id="main", turns=list(turns))])
