"""A Claude Code subagent's file without its session, and one that is not its session's."""

from __future__ import annotations

import io
import json
import zipfile

from transcript_formats import EventKind, parse_bytes

from .transcript_readers import texts


def record(uuid: str, parent: str | None, kind: str, content, *, session: str, **extra) -> dict:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"m-{uuid}", model="claude-haiku-4-5")
        message["usage"] = {"input_tokens": 5, "output_tokens": 2}
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": session,
        "timestamp": f"2026-01-01T00:00:0{len(uuid)}Z",
        "cwd": "/work",
        "version": "2.0.50",
        "message": message,
        **extra,
    }


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def subagent(session: str, agent: str) -> bytes:
    side = {"isSidechain": True, "agentId": agent}
    return jsonl(
        [
            record("s1", None, "user", "Find the softmax reference", session=session, **side),
            record(
                "s22",
                "s1",
                "assistant",
                [{"type": "text", "text": "It is in ref.py."}],
                session=session,
                **side,
            ),
        ]
    )


def test_a_subagent_file_uploaded_alone_under_any_name_reads_as_that_subagents_transcript():
    for name in ("agent-a1b2.jsonl", "8c1f.jsonl"):
        transcript = parse_bytes(subagent("sess-1", "a1b2"), name)
        assert texts(transcript, EventKind.USER_TEXT) == ["Find the softmax reference"]
        assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["It is in ref.py."]
        assert transcript.main.title == "Subagent a1b2"
        assert any("one subagent's conversation" in note for note in transcript.notes)


def test_a_warmup_subagent_alone_is_read_too():
    side = {"isSidechain": True, "agentId": "w1"}
    rows = [
        record("w1", None, "user", "Warmup", session="sess-1", **side),
        record(
            "w22", "w1", "assistant", [{"type": "text", "text": "Ready."}], session="sess-1", **side
        ),
    ]
    transcript = parse_bytes(jsonl(rows), "w1.jsonl")
    assert texts(transcript, EventKind.ASSISTANT_TEXT) == ["Ready."]


def test_a_subagent_of_another_session_in_a_zip_is_named_in_a_note_not_dropped_silently():
    main = jsonl(
        [
            record("u1", None, "user", "write a kernel", session="sess-1"),
            record("u22", "u1", "assistant", [{"type": "text", "text": "Done."}], session="sess-1"),
        ]
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("sess-1.jsonl", main)
        archive.writestr("sess-1/subagents/agent-c3d4.jsonl", subagent("sess-9", "c3d4"))
    transcript = parse_bytes(buffer.getvalue(), "upload.zip")
    assert len(transcript.threads) == 1
    [note] = [n for n in transcript.notes if "agent-c3d4" in n]
    assert "another session" in note
