"""The Anthropic Messages API, as Claude Code calls it: POST /v1/messages, streamed or not."""

import json
import re
import uuid
from typing import Any

from model_server.script import Script, Step
from model_server.wire import (
    SIDE_ANSWER,
    Reply,
    absolute,
    json_reply,
    shell_text,
    sse,
    usage_for,
)

_CWD = re.compile(r"(?:Primary working directory|Working directory|cwd):\s*(/\S+)")


def step_index(messages: list[Any]) -> int:
    """Tool results in the history: one per tool step already played."""
    count = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(
                1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            )
    return count


def working_directory(request: dict[str, Any]) -> str:
    system = request.get("system")
    texts = (
        [system]
        if isinstance(system, str)
        else [b.get("text", "") for b in system or [] if isinstance(b, dict)]
    )
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if isinstance(b, dict)]
    for text in texts:
        found = _CWD.search(str(text))
        if found:
            return found.group(1)
    return ""


def tool_call(step: Step, tools: set[str], cwd: str) -> tuple[str, dict[str, Any]]:
    if step.write and "Write" in tools:
        return "Write", {"file_path": absolute(cwd, step.write), "content": step.content}
    if step.read and "Read" in tools:
        return "Read", {"file_path": absolute(cwd, step.read)}
    return "Bash", {"command": shell_text(step), "description": "Run a command"}


def answer(request: dict[str, Any], script: Script) -> Reply:
    tools = {str(t.get("name")) for t in request.get("tools") or [] if isinstance(t, dict)}
    side = "Bash" not in tools
    index = step_index(request.get("messages") or [])
    step = Step(say=SIDE_ANSWER) if side else script.step(index)
    input_tokens, output_tokens = usage_for(index, side=side)
    blocks: list[dict[str, Any]] = []
    if step.say:
        blocks.append({"type": "text", "text": step.say})
    if step.tool:
        name, arguments = tool_call(step, tools, working_directory(request))
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:20]}",
                "name": name,
                "input": arguments,
            }
        )
    message = {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model") or script.model,
        "content": blocks,
        "stop_reason": "tool_use" if step.tool else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    }
    record = {
        "api": "anthropic",
        "kind": "side" if side else "main",
        "step": index,
        "tool": blocks[-1].get("name", "") if step.tool else "",
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
    }
    if not request.get("stream"):
        return json_reply(message, record)
    return Reply(_stream(message), "text/event-stream", record=record)


def _stream(message: dict[str, Any]) -> bytes:
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {**message["usage"], "output_tokens": 1},
    }
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        opening: dict[str, Any]
        delta: dict[str, Any]
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(events)
