"""claude.ai data exports: choosing a conversation, its branches, blocks and attachments,
the absence of tokens, detection and hostile exports."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from tests.transcripts.render.injection import PAYLOADS
from transcript_formats import (
    ArchiveLimits,
    EventKind,
    TranscriptFormatError,
    detect_format,
    parse_bytes,
    parse_path,
)
from transcript_formats.claude_ai_export import ATTACHMENT_TEXT_CHARS
from transcript_formats.records import RAW_CAP_CHARS

from .hostile_logs import assert_payloads_stay_text, fuzz
from .transcript_readers import FIXTURES, events_of, texts, usage_tuple

EXPORT = FIXTURES / "claude_ai_conversations.json"
REVIEW = "5b0e7c1d-2f3a-4b5c-8d9e-0f1a2b3c4d5e"


@pytest.fixture(scope="module")
def export():
    return parse_path(EXPORT)


def conversation(*messages: dict, **fields) -> dict:
    return {"uuid": "c1", "name": "t", "chat_messages": list(messages), **fields}


def message(sender: str, *blocks: dict, **fields) -> dict:
    return {
        "sender": sender,
        "content": list(blocks),
        "created_at": "2026-01-01T00:00:00Z",
        **fields,
    }


def upload(document) -> bytes:
    return json.dumps(document).encode()


def test_of_many_conversations_the_longest_is_shown_with_a_note(export):
    assert export.format == "claude-ai-export" and export.session_id == REVIEW
    assert export.started_at == "2026-03-02T08:59:59.000000Z"
    assert export.notes[0].startswith("This export holds 3 conversations; shown is the one with")
    assert "“Tile kernel review”" in export.notes[0]


def test_exports_carry_no_tokens_so_usage_is_zero_and_cost_unknown(export):
    assert all(turn.usage is None for turn in export.main.turns)
    assert usage_tuple(export.usage()) == (0, 0, 0, 0)
    assert export.cost_usd is None and not export.cost_computed
    assert "claude.ai exports record no token counts: no usage or cost is shown." in export.notes


def test_the_branch_the_conversation_ended_on_is_shown_and_the_rest_counted(export):
    assert texts(export, EventKind.USER_TEXT) == [
        "Review this tiling kernel",
        "Make it faster, but keep it readable",
    ]
    assert "An answer you retried away." not in texts(export, EventKind.ASSISTANT_TEXT)
    assert any(note.startswith("2 messages on other branches") for note in export.notes)
    # line is the message's position in chat_messages: the retried pair (3, 4) is skipped
    assert [e.line for e in events_of(export, EventKind.USER_TEXT)] == [1, 5]


def test_blocks_become_reasoning_text_and_tool_calls_joined_to_their_results(export):
    assert texts(export, EventKind.REASONING) == ["The kernel multiplies; check the literature."]
    calls = events_of(export, EventKind.TOOL_CALL)
    assert [c.tool_name for c in calls] == ["web_search", "artifacts", "web_fetch"]
    assert calls[0].arguments == {"query": "loop tiling cache blocking"}
    search, artifact, fetch = events_of(export, EventKind.TOOL_RESULT)
    assert search.call_id == "toolu_01"
    assert search.text == "Loop tiling https://example.org/tiling\nTiling improves cache reuse."
    # An older tool_use without an id still gets its result, matched by tool name.
    assert (artifact.tool_name, artifact.text, artifact.call_id) == ("artifacts", "OK", None)
    assert fetch.is_error and fetch.call_id == "toolu_02"
    assert events_of(export, EventKind.UNKNOWN)[0].raw_type == "block:hologram"


def test_attachments_show_their_extracted_text_and_files_are_named(export):
    attached, files = texts(export, EventKind.SYSTEM_NOTICE)[:2]
    assert attached == (
        "Attached tile.py (text/x-python, 31 bytes)\n\ndef tile(n):\n    return n * 4\n"
    )
    assert files == "Files sent (their content is not in the export): profile.png"


def test_one_conversation_alone_is_shown_and_old_text_only_messages_are_read():
    document = json.loads(EXPORT.read_text())
    short = next(c for c in document if c["name"] == "Short one")
    for shape in (short, [short]):
        alone = parse_bytes(upload(shape), "one.json")
        assert alone.session_id == short["uuid"]
        assert texts(alone, EventKind.USER_TEXT) == ["What is a warp?"]
        assert texts(alone, EventKind.ASSISTANT_TEXT) == ["32 threads scheduled together."]
        assert not any(note.startswith("This export holds") for note in alone.notes)


def test_the_export_zip_is_read_from_its_conversations_file():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("conversations.json", EXPORT.read_bytes())
        archive.writestr(
            "users.json", upload([{"uuid": "u", "full_name": "A", "email_address": "a@b"}])
        )
        archive.writestr("projects.json", upload([{"uuid": "p", "name": "P", "docs": []}]))
    transcript = parse_bytes(buffer.getvalue(), "data-2026-03-02.zip")
    assert transcript.format == "claude-ai-export" and transcript.session_id == REVIEW


def test_claude_ai_exports_are_detected_and_message_lists_are_not_taken_for_them():
    assert detect_format(EXPORT) == "claude-ai-export"
    for other in ("anthropic_messages.json", "openai_chat.json", "gemini_session.json"):
        assert detect_format(FIXTURES / other) != "claude-ai-export"


def test_an_export_whose_conversations_are_all_empty_is_refused_naming_the_format():
    with pytest.raises(TranscriptFormatError, match=r"e\.json: read as claude-ai-export"):
        parse_bytes(upload([conversation(), conversation()]), "e.json")


def test_a_branch_cycle_ends_the_walk_and_the_leaf_is_honoured():
    doc = conversation(
        message("human", {"type": "text", "text": "a"}, uuid="m1", parent_message_uuid="m2"),
        message("assistant", {"type": "text", "text": "b"}, uuid="m2", parent_message_uuid="m1"),
        message("human", {"type": "text", "text": "c"}, uuid="m3", parent_message_uuid="m2"),
        current_leaf_message_uuid="m2",
    )
    transcript = parse_bytes(upload(doc), "c.json")
    assert texts(transcript, EventKind.USER_TEXT) == ["a"]
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["b"]


# -- hostile exports ---------------------------------------------------------------------------


def test_payloads_in_every_field_stay_text_on_the_page():
    messages = []
    for n, p in enumerate(PAYLOADS):
        messages += [
            {
                **message("human", {"type": "text", "text": p}),
                "attachments": [
                    {"file_name": p, "file_type": p, "file_size": 1, "extracted_content": p}
                ],
                "files": [{"file_name": p}],
            },
            message(
                "assistant",
                {"type": "thinking", "thinking": "", "summaries": [{"summary": p}]},
                {"type": "text", "text": p},
                {"type": "tool_use", "id": f"t{n}", "name": p, "input": {p: p}},
                {
                    "type": "tool_result",
                    "tool_use_id": f"t{n}",
                    "name": p,
                    "is_error": n % 2 == 0,
                    "content": [
                        {"type": "knowledge", "title": p, "url": p, "text": p},
                        {"type": "text", "text": p},
                    ],
                },
                {"type": p, p: p},
                start_timestamp=p,
            ),
            {"sender": p, "text": p},
        ]
    doc = conversation(*messages, name=PAYLOADS[0], uuid=PAYLOADS[1], model=PAYLOADS[2])
    transcript = parse_bytes(upload([doc, conversation()]), "conversations.json")
    assert transcript.model == PAYLOADS[2]
    assert_payloads_stay_text(transcript)


def test_sizes_are_capped_and_odd_messages_reported():
    big = "a" * (ATTACHMENT_TEXT_CHARS + 5000)
    doc = conversation(
        {
            **message("human", {"type": "text", "text": "hi"}),
            "attachments": [{"extracted_content": big}],
        },
        "not a message",
        message("assistant", {"type": "mystery", "blob": "z" * 100_000}),
        [1, 2],
    )
    transcript = parse_bytes(upload(doc), "c.json")
    [attached] = texts(transcript, EventKind.SYSTEM_NOTICE)
    assert attached.endswith("... [5,000 more characters]")
    assert len(attached) < ATTACHMENT_TEXT_CHARS + 200
    [unknown] = events_of(transcript, EventKind.UNKNOWN)
    assert isinstance(unknown.raw, str) and len(unknown.raw) < RAW_CAP_CHARS + 100
    assert [(bad.line, bad.reason) for bad in transcript.malformed] == [
        (2, "not a JSON object"),
        (4, "not a JSON object"),
    ]


def test_an_export_over_the_size_limit_or_not_json_is_refused_naming_it():
    with pytest.raises(TranscriptFormatError, match=r"conversations\.json"):
        parse_bytes(
            EXPORT.read_bytes(), "conversations.json", limits=ArchiveLimits(max_total_bytes=1024)
        )
    with pytest.raises(TranscriptFormatError, match=r"conversations\.json"):
        parse_bytes(EXPORT.read_bytes()[:-40], "conversations.json")


def test_mangled_exports_are_read_or_refused_with_a_format_error_only():
    read = fuzz(EXPORT, rounds=120, seed=5, check=lambda t: None)
    assert read > 60  # not vacuous: most mangled copies are still read
