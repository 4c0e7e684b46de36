"""Format detection from content, uploads as bytes, zip and gzip, and clear errors."""

from __future__ import annotations

import gzip
import io
import json
import zipfile

import pytest

from transcripts.formats import TranscriptFormatError, detect_format, parse_bytes, parse_path

from .transcript_readers import FIXTURES


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
