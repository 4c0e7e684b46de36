"""Images in messages and tool results: read from each log shape, embedded within caps."""

from __future__ import annotations

import base64
import json

import pytest

from tests.transcripts.render.samples import png_bytes, png_image
from tests.transcripts.render.test_render import elements
from transcript_formats import parse_bytes
from transcript_formats.records import IMAGE_DATA_CAP_CHARS, images_of
from transcript_formats.schema import Event, EventKind, Image, Thread, Transcript, Turn
from transcript_render import export_html
from transcript_render.images import ImageBudget, sniff

PNG = base64.b64encode(png_bytes()).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\0" * 20).decode()
GIF = base64.b64encode(b"GIF89a" + b"\0" * 20).decode()
WEBP = base64.b64encode(b"RIFF\0\0\0\0WEBPVP8 " + b"\0" * 12).decode()
SVG = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').decode()


def img_tags(markup: str) -> list[dict[str, str | None]]:
    return [attrs for tag, attrs in elements(markup).tags if tag == "img"]


# -- reading ------------------------------------------------------------------------------------


def test_images_of_every_content_shape():
    parts = [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{JPEG}"}},
        {"type": "input_image", "image_url": f"data:image/gif;base64,{GIF}"},
        {"inlineData": {"mimeType": "image/webp", "data": WEBP}},
        {"type": "image", "source": {"type": "url", "url": "https://example.org/x.png"}},
        {"type": "input_image", "image_url": "https://example.org/y.png"},
    ]
    found = images_of(parts)
    assert [(i.media_type, bool(i.data)) for i in found] == [
        ("image/png", True),
        ("image/jpeg", True),
        ("image/gif", True),
        ("image/webp", True),
        ("image", False),  # by URL: named, never fetched
        ("image", False),
    ]
    assert found[0].size_bytes == len(png_bytes())
    assert images_of("text") == () and images_of([{"type": "image"}]) == (Image("image"),)


def test_an_image_over_the_reader_cap_keeps_only_its_size():
    data = "A" * (IMAGE_DATA_CAP_CHARS + 4)
    (image,) = images_of(
        [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]
    )
    assert image.data == "" and image.size_bytes == len(data) * 3 // 4


def claude_code_log() -> bytes:
    base = {"sessionId": "s1", "cwd": "/w", "version": "2.1.14", "isSidechain": False}
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    lines = [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "timestamp": "2025-11-20T10:00:00.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "What is this?"}, image],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "timestamp": "2025-11-20T10:00:05.000Z",
            "requestId": "r1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}],
                "usage": {"input_tokens": 3, "output_tokens": 4},
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u2",
            "parentUuid": "a1",
            "timestamp": "2025-11-20T10:00:06.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [image]}],
            },
        },
    ]
    return "\n".join(json.dumps(line) for line in lines).encode()


def test_claude_code_prompt_and_tool_result_images_are_read_and_survive_storage():
    transcript = parse_bytes(claude_code_log(), "s1.jsonl")
    with_images = [(e.kind, len(e.images)) for e in transcript.events() if e.images]
    assert with_images == [(EventKind.USER_TEXT, 1), (EventKind.TOOL_RESULT, 1)]
    stored = Transcript.from_dict(json.loads(json.dumps(transcript.to_dict())))
    assert [e.images for e in stored.events()] == [e.images for e in transcript.events()]


def test_codex_and_chat_message_images_are_read():
    codex = [
        {"timestamp": "2025-11-20T10:00:00Z", "type": "session_meta", "payload": {"id": "x"}},
        {
            "timestamp": "2025-11-20T10:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "see"},
                    {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                ],
            },
        },
    ]
    transcript = parse_bytes(
        "\n".join(json.dumps(r) for r in codex).encode(), "rollout-2025-11-20T10-00-00-x.jsonl"
    )
    assert [len(e.images) for e in transcript.events() if e.kind == EventKind.USER_TEXT] == [1]
    chat = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
        {"role": "assistant", "content": "a red square"},
    ]
    transcript = parse_bytes(json.dumps(chat).encode(), "chat.json")
    assert [len(e.images) for e in transcript.events()] == [1, 0]


# -- embedding ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "media_type"),
    [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"), (WEBP, "image/webp")],
)
def test_the_four_types_are_embedded_by_their_own_signature(data, media_type):
    # The claimed type is ignored: the bytes say what they are.
    (tag,) = img_tags(str(ImageBudget().html([Image("image/x-claimed", data)])))
    assert tag["src"] == f"data:{media_type};base64,{data}"
    assert tag["loading"] == "lazy"


def test_svg_and_bytes_that_are_no_image_are_refused():
    out = str(ImageBudget().html([Image("image/svg+xml", SVG), Image("image/png", "QUJD")]))
    assert "<img" not in out
    assert "image/svg+xml: not a PNG, JPEG, GIF or WebP" in out
    assert sniff(b"<svg") is None


def test_damaged_or_redacted_data_is_a_placeholder():
    out = str(ImageBudget().html([Image("image/png", PNG[:20] + "[REDACTED]" + PNG[30:])]))
    assert "<img" not in out and "damaged or redacted" in out


def test_an_image_over_the_cap_is_a_placeholder_with_its_size():
    big = "iVBORw0KGgo" + "A" * 4_533_321  # a PNG signature, 3.4 MB decoded
    out = str(ImageBudget().html([Image("image/png", big)]))
    assert "<img" not in out
    assert "image of 3.4 MB not embedded (over the 2.0 MB limit per image)" in out


def test_the_page_budget_runs_out():
    budget = ImageBudget(per_image=1_000, per_page=len(png_bytes()) * 2)
    out = str(budget.html([png_image()] * 3))
    assert len(img_tags(out)) == 2
    assert "image of 73 bytes not embedded (the page already holds 146 bytes of images)" in out


def test_an_image_not_kept_says_so():
    out = str(ImageBudget().html([Image("image/png", "", 9_000_000), Image("image/png")]))
    assert "image of 9.0 MB not embedded (too large to keep)" in out
    assert "image not embedded (not kept in the log)" in out


def test_a_hostile_media_type_is_text():
    out = str(ImageBudget().html([Image('"><script>alert(1)</script>', "QUJD")]))
    assert "<script" not in out and "&lt;script&gt;" in out


def test_the_page_shows_images_in_place_of_the_image_marks():
    event = Event("u", EventKind.USER_TEXT, text="What is this?\n[image]", images=(png_image(),))
    result = Event("r", EventKind.TOOL_RESULT, text="[image]", images=(png_image(),))
    html = export_html(
        Transcript(format="test", threads=[Thread(id="main", turns=[Turn(1, [event, result])])])
    )
    assert len(img_tags(html)) == 2
    assert "[image]" not in html.split("<body>", 1)[1]
    assert all(t["src"].startswith("data:image/png;base64,") for t in img_tags(html))


def test_the_policy_allows_images_from_data_urls_only():
    from transcript_render import transcript_policy

    directives = dict(d.split(" ", 1) for d in transcript_policy().split("; "))
    assert directives["img-src"] == "data:"
    assert directives["default-src"] == "'none'"
