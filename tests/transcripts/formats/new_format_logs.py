"""Small logs, written here, in the formats read since the format registry: Kimi Code's wire
journal, pi and OpenClaw sessions, Antigravity CLI's step log and Claude Code's web export.

Each session asks for a kernel, writes it with one tool call (in a message that also carries
text) and runs one command, then answers: two tool calls, one file change, three model calls
after the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

KERNEL = "import triton\n"
T0 = 1784300000000  # epoch milliseconds
STAMPS = "Created At: 2026-05-20T11:38:21Z\nCompleted At: 2026-05-20T11:38:21Z\n\n"


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# -- Kimi Code CLI --------------------------------------------------------------------------------


def kimi_loop(event: dict[str, Any], at: int) -> dict[str, Any]:
    return {"type": "context.append_loop_event", "agentId": "main", "event": event, "time": T0 + at}


def kimi_usage(inputs: int, output: int, cached: int, at: int) -> dict[str, Any]:
    usage = {"inputOther": inputs, "output": output, "inputCacheRead": cached}
    return {
        "type": "usage.record",
        "agentId": "main",
        "model": "kimi-k2",
        "usage": {**usage, "inputCacheCreation": 0},
        "usageScope": "turn",
        "time": T0 + at,
    }


def kimi_code_rows(*, extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    prompt = [{"type": "text", "text": "write a softmax kernel"}]
    step_usage = {"inputOther": 100, "output": 20, "inputCacheRead": 50, "inputCacheCreation": 0}
    return [
        {"type": "metadata", "protocol_version": "1.4", "created_at": T0},
        {
            "type": "config.update",
            "agentId": "main",
            "cwd": "/work/softmax",
            "modelAlias": "kimi-code/k2",
            "systemPrompt": "You are Kimi Code.",
            "time": T0 + 1,
        },
        {"type": "tools.set_active_tools", "agentId": "main", "names": ["Write"], "time": T0 + 2},
        {
            "type": "turn.prompt",
            "agentId": "main",
            "input": prompt,
            "origin": {"kind": "user"},
            "time": T0 + 1000,
        },
        {
            "type": "context.append_message",
            "agentId": "main",
            "message": {"role": "user", "content": prompt, "toolCalls": []},
            "time": T0 + 1001,
        },
        kimi_loop({"type": "step.begin", "uuid": "s1", "turnId": "0", "step": 1}, 1100),
        kimi_loop(
            {"type": "content.part", "stepUuid": "s1", "part": {"type": "think", "think": "plan"}},
            1200,
        ),
        kimi_loop(
            {"type": "content.part", "stepUuid": "s1", "part": {"type": "text", "text": "Here."}},
            1250,
        ),
        kimi_loop(
            {
                "type": "tool.call",
                "stepUuid": "s1",
                "toolCallId": "call-1",
                "name": "Write",
                "args": {"path": "kernel.py", "content": KERNEL},
            },
            1300,
        ),
        kimi_loop({"type": "step.end", "uuid": "s1", "usage": step_usage}, 1400),
        kimi_usage(100, 20, 50, 1401),
        kimi_loop(
            {"type": "tool.result", "toolCallId": "call-1", "result": {"output": "Wrote 14 bytes"}},
            1500,
        ),
        *(extra or []),
        {
            "type": "context.append_message",
            "agentId": "main",
            "message": {
                "role": "assistant",
                "content": [],
                "toolCalls": [
                    {
                        "type": "function",
                        "id": "call-2",
                        "name": "Bash",
                        "arguments": '{"command": "python kernel.py"}',
                    }
                ],
            },
            "time": T0 + 1600,
        },
        kimi_usage(120, 10, 60, 1601),
        {
            "type": "context.append_message",
            "agentId": "main",
            "message": {"role": "tool", "toolCallId": "call-2", "content": "ok", "toolCalls": []},
            "time": T0 + 1700,
        },
        {
            "type": "context.append_message",
            "agentId": "main",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
            "time": T0 + 1800,
        },
        kimi_usage(10, 3, 150, 1801),
        {
            "type": "turn.ended",
            "agentId": "main",
            "turnId": 0,
            "reason": "completed",
            "time": T0 + 1900,
        },
    ]


def kimi_code_session(root: Path, *, extra: list[dict[str, Any]] | None = None) -> Path:
    wire = root / "session_a" / "agents" / "main" / "wire.jsonl"
    return write(wire, jsonl(kimi_code_rows(extra=extra)))


# -- pi and OpenClaw ------------------------------------------------------------------------------


def pi_usage(inputs: int, output: int, cached: int, cost: float) -> dict[str, Any]:
    return {
        "input": inputs,
        "output": output,
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": inputs + output + cached,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def pi_entry(entry_id: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    stamp = f"2026-01-05T10:00:{second:02d}.000Z"
    return {"id": entry_id, "parentId": parent, "timestamp": stamp, **fields}


def pi_message(entry_id: str, parent: str, second: int, message: dict[str, Any]) -> dict[str, Any]:
    return pi_entry(entry_id, parent, second, type="message", message=message)


def pi_assistant(content: list[dict[str, Any]], usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": usage,
        "stopReason": "toolUse",
    }


def pi_rows(*, cwd: str = "/work/softmax", snapshot: bool = False) -> list[dict[str, Any]]:
    header = {"type": "session", "version": 3, "id": "9f0e", "timestamp": "2026-01-05T10:00:00Z"}
    rows = [
        {**header, "cwd": cwd},
        pi_entry(
            "a1", None, 0, type="model_change", provider="anthropic", modelId="claude-sonnet-4-5"
        ),
    ]
    if snapshot:
        data = {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
        rows.append(pi_entry("a1s", "a1", 0, type="custom", customType="model-snapshot", data=data))
    first = rows[-1]["id"]
    write_call = {
        "type": "toolCall",
        "id": "t1",
        "name": "write",
        "arguments": {"path": "kernel.py", "content": KERNEL},
    }
    run_call = {
        "type": "toolCall",
        "id": "t2",
        "name": "bash",
        "arguments": {"command": "python kernel.py"},
    }
    rows += [
        pi_message("a2", first, 1, {"role": "user", "content": "write a softmax kernel"}),
        pi_message(
            "a3",
            "a2",
            2,
            pi_assistant(
                [
                    {"type": "thinking", "thinking": "plan"},
                    {"type": "text", "text": "Here."},
                    write_call,
                ],
                pi_usage(100, 40, 1000, 0.02),
            ),
        ),
        pi_message(
            "a4",
            "a3",
            3,
            {
                "role": "toolResult",
                "toolCallId": "t1",
                "toolName": "write",
                "content": [{"type": "text", "text": "Wrote 14 bytes"}],
                "isError": False,
            },
        ),
        pi_message("a5", "a4", 4, pi_assistant([run_call], pi_usage(20, 10, 1100, 0.004))),
        pi_message(
            "a6",
            "a5",
            5,
            {
                "role": "toolResult",
                "toolCallId": "t2",
                "toolName": "bash",
                "content": [{"type": "text", "text": "ok"}],
                "isError": False,
            },
        ),
        # A branch the session left with /tree: its answer is billed but not on the path.
        pi_message(
            "b7",
            "a6",
            6,
            pi_assistant([{"type": "text", "text": "Left behind."}], pi_usage(5, 5, 0, 0.001)),
        ),
        pi_entry(
            "a7", "a6", 7, type="branch_summary", fromId="b7", summary="Tried another answer."
        ),
        pi_message(
            "a8",
            "a7",
            8,
            pi_assistant([{"type": "text", "text": "Done."}], pi_usage(10, 5, 1200, 0.005)),
        ),
    ]
    return rows


def pi_session(root: Path) -> Path:
    return write(root / "--work-softmax--" / "2026-01-05_9f0e.jsonl", jsonl(pi_rows()))


def openclaw_session(root: Path) -> Path:
    rows = pi_rows(cwd="/home/ada/.openclaw/workspace", snapshot=True)
    return write(root / "agents" / "main" / "sessions" / "9f0e.jsonl", jsonl(rows))


# -- Antigravity CLI ------------------------------------------------------------------------------


def antigravity_rows(*, full: bool = False) -> list[dict[str, Any]]:
    def arg(value: str) -> str:
        return value if full else json.dumps(value)

    request = (
        "<USER_REQUEST>\nwrite a softmax kernel\n</USER_REQUEST>\n"
        "<ADDITIONAL_METADATA>\nlocal time\n</ADDITIONAL_METADATA>"
    )
    calls = [
        {
            "name": "write_to_file",
            "args": {"TargetFile": arg("/work/kernel.py"), "CodeContent": arg(KERNEL)},
        },
        {"name": "run_command", "args": {"CommandLine": arg("python kernel.py")}},
    ]
    return [
        {
            "step_index": 0,
            "source": "USER_EXPLICIT",
            "type": "USER_INPUT",
            "status": "DONE",
            "created_at": "2026-05-20T11:38:18Z",
            "content": request,
        },
        {"step_index": 1, "source": "SYSTEM", "type": "CONVERSATION_HISTORY", "status": "DONE"},
        {
            "step_index": 2,
            "source": "MODEL",
            "type": "PLANNER_RESPONSE",
            "status": "DONE",
            "created_at": "2026-05-20T11:38:20Z",
            "thinking": "plan",
            "content": "Here.",
            "tool_calls": calls,
        },
        {
            "step_index": 3,
            "source": "MODEL",
            "type": "CODE_ACTION",
            "status": "DONE",
            "created_at": "2026-05-20T11:38:21Z",
            "content": STAMPS + "Created /work/kernel.py",
        },
        {
            "step_index": 4,
            "source": "MODEL",
            "type": "RUN_COMMAND",
            "status": "DONE",
            "created_at": "2026-05-20T11:38:22Z",
            "content": "Created At: 2026-05-20T11:38:22Z\nCompleted At: 2026-05-20T11:38:22Z\n\nok",
        },
        {
            "step_index": 5,
            "source": "MODEL",
            "type": "PLANNER_RESPONSE",
            "status": "DONE",
            "created_at": "2026-05-20T11:38:25Z",
            "content": "Done.",
        },
    ]


def antigravity_log(root: Path) -> Path:
    folder = root / "brain" / "0a1b2c3d" / ".system_generated" / "logs"
    return write(folder / "transcript.jsonl", jsonl(antigravity_rows()))


# -- Claude Code web export -----------------------------------------------------------------------


def loglines_document() -> dict[str, Any]:
    write_call = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Write",
        "input": {"file_path": "/p/kernel.py", "content": KERNEL},
    }
    run_call = {
        "type": "tool_use",
        "id": "toolu_2",
        "name": "Bash",
        "input": {"command": "python kernel.py"},
    }

    def assistant(
        number: int, content: list[dict[str, Any]], usage: dict[str, int]
    ) -> dict[str, Any]:
        message = {
            "id": f"msg_{number}",
            "model": "claude-sonnet-4-5",
            "role": "assistant",
            "content": content,
            "usage": usage,
        }
        return {
            "type": "assistant",
            "timestamp": f"2025-12-24T10:00:{number:02d}.000Z",
            "sessionId": "web-1",
            "message": message,
        }

    def result(number: int, call_id: str, text: str) -> dict[str, Any]:
        content = [
            {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": False}
        ]
        return {
            "type": "user",
            "timestamp": f"2025-12-24T10:00:{number:02d}.000Z",
            "message": {"role": "user", "content": content},
        }

    return {
        "loglines": [
            {
                "type": "user",
                "timestamp": "2025-12-24T10:00:00.000Z",
                "sessionId": "web-1",
                "cwd": "/p",
                "message": {"role": "user", "content": "write a softmax kernel"},
            },
            assistant(
                1,
                [{"type": "text", "text": "Here."}, write_call],
                {"input_tokens": 10, "output_tokens": 50, "cache_read_input_tokens": 100},
            ),
            result(2, "toolu_1", "File written"),
            assistant(3, [run_call], {"input_tokens": 4, "output_tokens": 9}),
            result(4, "toolu_2", "ok"),
            assistant(
                5, [{"type": "text", "text": "Done."}], {"input_tokens": 5, "output_tokens": 5}
            ),
            {"type": "summary", "summary": "softmax", "leafUuid": "x"},
        ]
    }


def loglines_export(root: Path) -> Path:
    return write(root / "session.json", json.dumps(loglines_document(), indent=2).encode())
