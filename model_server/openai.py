"""The OpenAI Responses API, as Codex calls it: POST /v1/responses, streamed."""

import json
import re
import uuid
from typing import Any

from model_server.script import Script, Step
from model_server.wire import SIDE_ANSWER, Reply, json_reply, shell_text, sse, usage_for

_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_RUNNING = re.compile(r"Process running with session ID (\d+)")
COMMAND_WAIT_MS = 600_000
SHELL_TOOLS = ("shell", "shell_command", "exec_command", "local_shell")


def _output_text(item: dict[str, Any]) -> str:
    output = item.get("output")
    if isinstance(output, list):
        return " ".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    return str(output or "")


def step_index(items: list[Any]) -> int:
    """Tool outputs in the history, less those that only said a command is still running."""
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") in _OUTPUTS]
    return sum(1 for item in outputs if not _RUNNING.search(_output_text(item)))


def still_running(items: list[Any]) -> str:
    """The session id when the last tool output says its command is still running (Codex's
    exec_command returns at its yield time, however long it was asked to wait)."""
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") in _OUTPUTS]
    found = _RUNNING.search(_output_text(outputs[-1])) if outputs else None
    return found.group(1) if found else ""


def add_file_patch(path: str, content: str) -> str:
    lines = content.splitlines()
    return (
        "\n".join(
            ["*** Begin Patch", f"*** Add File: {path}", *(f"+{x}" for x in lines), "*** End Patch"]
        )
        + "\n"
    )


def tool_item(step: Step, tools: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One call of Codex's own tool: apply_patch for a write, its shell tool otherwise."""
    call_id = f"call_{uuid.uuid4().hex[:24]}"
    patch = tools.get("apply_patch")
    if step.write and patch is not None:
        text = add_file_patch(step.write, step.content)
        if patch.get("type") == "custom":
            return {
                "type": "custom_tool_call",
                "id": f"ctc_{uuid.uuid4().hex[:24]}",
                "call_id": call_id,
                "name": "apply_patch",
                "input": text,
                "status": "completed",
            }
        return _function_call(call_id, "apply_patch", {"input": text})
    # Without the apply_patch tool (models Codex has no metadata for), Codex still takes a
    # patch given to `apply_patch` in its shell tool, and applies and logs it as a file change.
    command = shell_text(step) if not step.write else _apply_patch_command(step)
    name = next((n for n in SHELL_TOOLS if n in tools), "shell")
    properties = (tools.get(name, {}).get("parameters") or {}).get("properties") or {}
    if "cmd" in properties:
        # exec_command hands back "Process running" after its yield time (10 s by default):
        # wait for the command to end, as a model that wants its output would.
        wait = {"yield_time_ms": COMMAND_WAIT_MS} if "yield_time_ms" in properties else {}
        return _function_call(call_id, name, {"cmd": command, **wait})
    kind = (properties.get("command") or {}).get("type")
    value: Any = ["bash", "-lc", command] if kind == "array" else command
    return _function_call(call_id, name, {"command": value})


def _apply_patch_command(step: Step) -> str:
    return f"apply_patch <<'ARENA_EOF'\n{add_file_patch(step.write, step.content)}ARENA_EOF\n"


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{uuid.uuid4().hex[:24]}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def answer(request: dict[str, Any], script: Script) -> Reply:
    tools = {
        str(t.get("name") or t.get("type")): t
        for t in request.get("tools") or []
        if isinstance(t, dict)
    }
    side = not tools
    raw_items = request.get("input")
    items = raw_items if isinstance(raw_items, list) else []
    index = step_index(items)
    step = Step(say=SIDE_ANSWER) if side else script.step(index)
    input_tokens, output_tokens = usage_for(index, side=side)
    output: list[dict[str, Any]] = [_message(step.say)] if step.say else []
    session = still_running(items) if "write_stdin" in tools else ""
    if session:
        # Wait on the running command (./check) as a model would, then go on with the script.
        step = Step(say="Waiting for the command to finish.")
        output = [_message(step.say)]
        wait = {"session_id": int(session), "chars": "", "yield_time_ms": COMMAND_WAIT_MS}
        output.append(_function_call(f"call_{uuid.uuid4().hex[:24]}", "write_stdin", wait))
    elif step.tool:
        output.append(tool_item(step, tools))
    response = {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "model": request.get("model") or script.model,
        "status": "completed",
        "output": output,
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }
    record = {
        "api": "openai",
        "kind": "side" if side else "main",
        "step": index,
        "tool": output[-1].get("name", "") if step.tool else "",
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
    }
    if not request.get("stream"):
        return json_reply(response, record)
    return Reply(_stream(response), "text/event-stream", record=record)


def _stream(response: dict[str, Any]) -> bytes:
    opening = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": opening}),
    ]
    for index, item in enumerate(response["output"]):
        events.append(
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": index, "item": item},
            )
        )
        if item["type"] == "message":
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": item["content"][0]["text"],
                    },
                )
            )
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        )
    events.append(("response.completed", {"type": "response.completed", "response": response}))
    return sse(events)
