"""Cursor agent transcripts, Gemini CLI JSONL and Qwen Code logs are hostile too: payloads in
every field stay text, unknown records are capped, bad lines are counted, and mangled logs are
read or refused with a TranscriptFormatError, never anything else."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.transcripts.render.injection import PAYLOADS
from transcript_formats import EventKind, parse_bytes
from transcript_formats.records import RAW_CAP_CHARS

from .hostile_logs import JUNK_LINES, assert_payloads_stay_text, fuzz
from .transcript_readers import FIXTURES, events_of

CURSOR = FIXTURES / "cursor_transcripts"
GEMINI = FIXTURES / "gemini_jsonl"
QWEN = FIXTURES / "qwen_chat.jsonl"


def _jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


class Payloads:
    """A different payload for each field asked for, cycling through all of them."""

    def __init__(self, offset: int) -> None:
        self.index = offset
        self.used: list[str] = []

    def __call__(self) -> str:
        payload = PAYLOADS[self.index % len(PAYLOADS)]
        self.index += 1
        self.used.append(payload)
        return payload


def cursor_log(p: Payloads) -> bytes:
    return _jsonl(
        [
            {
                "role": "user",
                "message": {
                    "content": [{"type": "text", "text": f"<user_query>{p()}</user_query>{p()}"}]
                },
            },
            {
                "role": "assistant",
                "message": {
                    "content": [
                        {"type": "text", "text": p()},
                        {"type": "thinking", "thinking": p()},
                        {"type": "tool_use", "id": p(), "name": p(), "input": {p(): p()}},
                        {
                            "type": "tool_use",
                            "name": "StrReplace",
                            "input": {"path": p(), "old_string": p(), "new_string": p()},
                        },
                        {
                            "type": "tool_use",
                            "name": "Write",
                            "input": {"path": p(), "contents": p()},
                        },
                        {"type": p(), "data": p()},
                    ]
                },
            },
            {"role": "user", "message": {"content": [{"type": "command_output", "output": p()}]}},
            {"type": "turn_ended", "status": p(), "error": p()},
            {"role": p(), "message": {"content": p()}},
        ]
    )


def gemini_log(p: Payloads) -> bytes:
    display = {"fileDiff": p(), "fileName": p(), "originalContent": p(), "newContent": p()}
    call = {
        "id": p(),
        "name": p(),
        "args": {p(): p()},
        "status": "success",
        "resultDisplay": display,
    }
    return _jsonl(
        [
            {
                "sessionId": p(),
                "projectHash": p(),
                "startTime": p(),
                "lastUpdated": p(),
                "kind": "main",
            },
            {"id": "u1", "type": "user", "content": [{"text": p()}], "displayContent": p()},
            {
                "id": "g1",
                "type": "gemini",
                "model": p(),
                "timestamp": p(),
                "content": [{"text": p(), "thought": True}, {"text": p()}],
                "thoughts": [{"subject": p(), "description": p()}],
                "toolCalls": [call, {**call, "id": p(), "status": "error", "resultDisplay": p()}],
            },
            {"id": "i1", "type": "warning", "content": p()},
            {"id": "n1", "type": p(), "content": p()},
            {"$rewindTo": p()},
            {"$set": {"messages": [{"id": p(), "type": "user", "content": p()}]}},
        ]
    )


def qwen_log(p: Payloads) -> bytes:
    base = {"sessionId": p(), "cwd": p(), "version": p(), "gitBranch": p(), "timestamp": p()}
    diff = {"fileDiff": p(), "fileName": p(), "originalContent": p(), "newContent": p()}
    call = {"functionCall": {"id": "c1", "name": p(), "args": {p(): p()}}}
    response = {"functionResponse": {"id": "c1", "name": p(), "response": {"output": p()}}}
    return _jsonl(
        [
            {
                **base,
                "uuid": "1",
                "type": "user",
                "message": {"role": "user", "parts": [{"text": p()}]},
            },
            {
                **base,
                "uuid": "2",
                "type": "assistant",
                "model": p(),
                "message": {
                    "role": "model",
                    "parts": [{"text": p(), "thought": True}, {"text": p()}, call],
                },
            },
            {
                **base,
                "uuid": "3",
                "type": "tool_result",
                "message": {"role": "user", "parts": [response]},
                "toolCallResult": {"callId": "c1", "status": "success", "resultDisplay": diff},
            },
            {
                **base,
                "uuid": "4",
                "type": "system",
                "subtype": "slash_command",
                "systemPayload": {"rawCommand": p()},
            },
            {
                **base,
                "uuid": "5",
                "type": "system",
                "subtype": "chat_compression",
                "systemPayload": {"compressedHistory": [{"parts": [{"text": p()}]}]},
            },
            {
                **base,
                "uuid": "6",
                "type": "user",
                "subtype": p(),
                "systemPayload": {"displayText": p()},
            },
            {**base, "uuid": "7", "type": "system", "subtype": p(), "systemPayload": {"x": p()}},
            {
                **base,
                "uuid": "8",
                "type": "user",
                "agentId": p(),
                "agentName": p(),
                "message": {"parts": [{"text": p()}]},
            },
        ]
    )


BUILDERS: dict[str, Callable[[Payloads], bytes]] = {
    "cursor-agent-transcript": cursor_log,
    "gemini-cli-jsonl": gemini_log,
    "qwen-code-jsonl": qwen_log,
}


def _all_text(value: object) -> str:
    """Every string the parsed transcript holds, keys included, one per line."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_all_text(k) + "\n" + _all_text(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "\n".join(_all_text(v) for v in value)
    return ""


@pytest.mark.parametrize("offset", [0, 17, 33])
@pytest.mark.parametrize("fmt", sorted(BUILDERS))
def test_payloads_in_every_field_are_kept_as_text_and_never_run(fmt, offset):
    payloads = Payloads(offset)
    transcript = parse_bytes(BUILDERS[fmt](payloads), "hostile.jsonl")
    assert transcript.format == fmt
    kept = _all_text(transcript.to_dict())
    # All but a few land in the transcript (not a project hash, a message id, the prompt the
    # displayed one stands for, a diff that the whole contents replace); none runs.
    assert sum(p not in kept for p in payloads.used) <= 4
    assert_payloads_stay_text(transcript)


@pytest.mark.parametrize(
    ("fmt", "record"),
    [
        (
            "cursor-agent-transcript",
            {
                "role": "assistant",
                "message": {"content": [{"type": "blob", "data": "x" * 1_000_000}]},
            },
        ),
        ("gemini-cli-jsonl", {"id": "b", "type": "blob", "content": "x" * 1_000_000}),
        (
            "qwen-code-jsonl",
            {
                "uuid": "b",
                "type": "system",
                "subtype": "blob",
                "sessionId": "s",
                "systemPayload": "x" * 1_000_000,
            },
        ),
    ],
)
def test_an_unknown_record_is_kept_capped(fmt, record):
    opening = {
        "cursor-agent-transcript": {"role": "user", "message": {"content": "go"}},
        "gemini-cli-jsonl": {"sessionId": "s", "projectHash": "h"},
        "qwen-code-jsonl": {
            "uuid": "a",
            "type": "user",
            "sessionId": "s",
            "message": {"role": "user", "parts": [{"text": "go"}]},
        },
    }[fmt]
    transcript = parse_bytes(_jsonl([opening, record]), "big.jsonl")
    [unknown] = events_of(transcript, EventKind.UNKNOWN)
    assert isinstance(unknown.raw, str) and len(unknown.raw) < RAW_CAP_CHARS + 100
    assert unknown.raw.endswith("more characters]")


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
def test_a_prompt_of_megabytes_is_read_whole(fmt):
    text = "tile it " * 500_000
    records = {
        "cursor-agent-transcript": [
            {"role": "user", "message": {"content": [{"type": "text", "text": text}]}}
        ],
        "gemini-cli-jsonl": [
            {"sessionId": "s", "projectHash": "h"},
            {"id": "u", "type": "user", "content": text},
        ],
        "qwen-code-jsonl": [
            {
                "uuid": "u",
                "type": "user",
                "sessionId": "s",
                "message": {"role": "user", "parts": [{"text": text}]},
            }
        ],
    }[fmt]
    transcript = parse_bytes(_jsonl(records), "long.jsonl")
    assert transcript.format == fmt
    assert [e.text.strip() for e in events_of(transcript, EventKind.USER_TEXT)] == [text.strip()]


@pytest.mark.parametrize("path", [CURSOR, GEMINI, QWEN], ids=lambda p: p.name)
def test_junk_lines_are_counted_with_their_line_numbers(path):
    main = (
        path
        if path.is_file()
        else max((p for p in path.rglob("*.jsonl")), key=lambda p: p.stat().st_size)
    )
    lines = main.read_bytes().splitlines()
    mixed = [lines[0], *JUNK_LINES, *lines[1:]]
    transcript = parse_bytes(b"\n".join(mixed) + b"\n", main.name)
    junk = {bad.line for bad in transcript.malformed if 2 <= bad.line <= 1 + len(JUNK_LINES)}
    assert junk == set(range(2, 2 + len(JUNK_LINES)))


@pytest.mark.parametrize("path", [CURSOR, GEMINI, QWEN], ids=lambda p: p.name)
def test_mangled_copies_are_read_or_refused_cleanly(path):
    read = fuzz(path, rounds=120, seed=15, check=lambda t: None)
    assert read > 60
