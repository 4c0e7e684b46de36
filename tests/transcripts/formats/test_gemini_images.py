"""A Gemini CLI chat recording's pasted image reaches its user event, and the page embeds it."""

import base64
import json

from transcript_formats import parse_bytes
from transcript_formats.schema import EventKind
from transcript_render import export_html

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))


def session(parts: list) -> bytes:
    return json.dumps(
        {
            "sessionId": "s-1",
            "projectHash": "p",
            "messages": [
                {"id": "1", "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": parts},
                {
                    "id": "2",
                    "timestamp": "2026-01-01T00:00:05Z",
                    "type": "gemini",
                    "content": "The plot shows a memory-bound kernel.",
                    "tokens": {"input": 10, "output": 7, "cached": 0, "total": 17},
                },
            ],
        }
    ).encode()


def test_a_pasted_image_is_kept_on_the_user_event_and_embedded_in_the_page():
    data = base64.b64encode(PNG).decode()
    parts = [
        {"text": "What does this plot say?"},
        {"inlineData": {"mimeType": "image/png", "data": data}},
    ]
    transcript = parse_bytes(session(parts), "session-1.json")
    [user] = [e for e in transcript.events() if e.kind == EventKind.USER_TEXT]
    assert user.text == "What does this plot say?"
    assert [(i.media_type, i.data) for i in user.images] == [("image/png", data)]
    assert f"data:image/png;base64,{data}" in export_html(transcript)


def test_a_message_with_no_image_has_none():
    transcript = parse_bytes(session([{"text": "plain"}]), "session-1.json")
    [user] = [e for e in transcript.events() if e.kind == EventKind.USER_TEXT]
    assert user.images == ()
