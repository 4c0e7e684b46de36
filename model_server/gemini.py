"""The Gemini API, as Gemini CLI calls it: models/<model>:generateContent,
:streamGenerateContent (?alt=sse) and :countTokens."""

from typing import Any

from model_server.script import Script, Step
from model_server.wire import (
    COMMAND_NAMES,
    CONTENT_NAMES,
    PATH_NAMES,
    SIDE_ANSWER,
    Reply,
    first_name,
    json_reply,
    shell_text,
    sse,
    usage_for,
)

WRITE_TOOL, READ_TOOL, SHELL_TOOL = "write_file", "read_file", "run_shell_command"


def step_index(contents: list[Any]) -> int:
    count = 0
    for content in contents:
        parts = content.get("parts") if isinstance(content, dict) else None
        if isinstance(parts, list):
            count += sum(1 for p in parts if isinstance(p, dict) and "functionResponse" in p)
    return count


def declarations(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = {}
    for tool in request.get("tools") or []:
        for declaration in (tool or {}).get("functionDeclarations") or []:
            schema = declaration.get("parametersJsonSchema") or declaration.get("parameters") or {}
            found[str(declaration.get("name"))] = schema.get("properties") or {}
    return found


def function_call(step: Step, tools: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if step.write and WRITE_TOOL in tools:
        properties = tools[WRITE_TOOL]
        return {
            "name": WRITE_TOOL,
            "args": {
                first_name(properties, PATH_NAMES, "file_path"): step.write,
                first_name(properties, CONTENT_NAMES, "content"): step.content,
            },
        }
    if step.read and READ_TOOL in tools:
        return {
            "name": READ_TOOL,
            "args": {first_name(tools[READ_TOOL], PATH_NAMES, "file_path"): step.read},
        }
    command = first_name(tools.get(SHELL_TOOL, {}), COMMAND_NAMES, "command")
    return {"name": SHELL_TOOL, "args": {command: shell_text(step)}}


def structured_answer(schema: dict[str, Any]) -> dict[str, Any]:
    """An answer to a side request that asks for JSON (Gemini CLI's next-speaker and loop
    checks): each required field at a neutral value; the user speaks next."""
    values: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        kind = (spec or {}).get("type", "string")
        kind = kind.lower() if isinstance(kind, str) else "string"
        if name == "next_speaker":
            values[name] = "user"
        elif kind in ("number", "integer"):
            values[name] = 0
        elif kind == "boolean":
            values[name] = False
        elif kind == "array":
            values[name] = []
        elif kind == "object":
            values[name] = {}
        else:
            values[name] = SIDE_ANSWER
    return values


def answer(request: dict[str, Any], script: Script, *, model: str, stream: bool) -> Reply:
    import json

    tools = declarations(request)
    config = request.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    side = SHELL_TOOL not in tools
    index = step_index(request.get("contents") or [])
    step = Step(say=SIDE_ANSWER) if side else script.step(index)
    input_tokens, output_tokens = usage_for(index, side=side)
    parts: list[dict[str, Any]] = []
    if side and isinstance(schema, dict):
        parts.append({"text": json.dumps(structured_answer(schema))})
    elif step.say:
        parts.append({"text": step.say})
    if step.tool and not side:
        parts.append({"functionCall": function_call(step, tools)})
    body = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": input_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": input_tokens + output_tokens,
        },
        "modelVersion": model or script.model,
    }
    record = {
        "api": "gemini",
        "kind": "side" if side else "main",
        "step": index,
        "tool": parts[-1]["functionCall"]["name"] if step.tool and not side else "",
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
    }
    if not stream:
        return json_reply(body, record)
    return Reply(sse([(None, body)]), "text/event-stream", record=record)


def count_tokens(request: dict[str, Any]) -> Reply:
    return json_reply({"totalTokens": 1000}, {"api": "gemini", "kind": "count"})
