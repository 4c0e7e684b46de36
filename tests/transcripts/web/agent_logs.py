"""Small agent logs that write a kernel, as the CLIs write them: a Claude Code session (Write,
then Edit) and a Codex rollout (a shell heredoc or a copy of the starter, then apply_patch),
each with its token counts, so an upload of them is priced."""

from __future__ import annotations

import json
from typing import Any

# Correct for silu (x * sigmoid(x)) on the CPU; the Edit below changes only a comment.
SILU_KERNEL = (
    '"""SiLU, as an agent would leave it."""\n'
    "import torch\n\n\n"
    "class ModelNew(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x * torch.sigmoid(x)  # draft\n"
)
SILU_EDITED = SILU_KERNEL.replace("# draft", "# final")
# What the second write of each log changes (an Edit, an apply_patch hunk).
DRAFT_TO_FINAL = ("# draft", "# final")


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def claude_code_log(
    *,
    kernel: str = SILU_KERNEL,
    prompt: str = "Write solution.py for the task silu: ModelNew computing SiLU.",
    session: str = "sess-1",
    cwd: str = "/workspace",
    model: str = "claude-sonnet-4-5",
    change: tuple[str, str] | None = DRAFT_TO_FINAL,
) -> bytes:
    """A Claude Code session that writes `kernel` to solution.py (turn 1) and edits it with
    `change` (old, new) (turn 2, unless None)."""
    base = {"sessionId": session, "cwd": cwd, "version": "2.0.14", "isSidechain": False}
    usage = {"input_tokens": 1200, "output_tokens": 800, "cache_read_input_tokens": 3000}
    records: list[dict[str, Any]] = [
        {
            "type": "user",
            "uuid": "u0",
            "parentUuid": None,
            "timestamp": "2026-01-05T10:00:00Z",
            "message": {"role": "user", "content": prompt},
        },
    ]
    calls = [("t1", "Write", {"file_path": f"{cwd}/solution.py", "content": kernel})]
    if change is not None:
        edit = {"old_string": change[0], "new_string": change[1]}
        calls.append(("t2", "Edit", {"file_path": f"{cwd}/solution.py", **edit}))
    for n, (call_id, tool, args) in enumerate(calls, start=1):
        message = {
            "id": f"m{n}",
            "role": "assistant",
            "model": model,
            "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": args}],
            "usage": usage,
        }
        records.append(
            {
                "type": "assistant",
                "uuid": f"a{n}",
                "parentUuid": f"u{n - 1}",
                "timestamp": f"2026-01-05T10:0{n}:00Z",
                "message": message,
            }
        )
        result = {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}
        records.append(
            {
                "type": "user",
                "uuid": f"u{n}",
                "parentUuid": f"a{n}",
                "timestamp": f"2026-01-05T10:0{n}:30Z",
                "message": {"role": "user", "content": [result]},
            }
        )
    return _jsonl([{**base, **r} for r in records])


def codex_log(
    *,
    kernel: str = SILU_KERNEL,
    prompt: str = "Optimise solution.py for the task silu.",
    session: str = "0199-codex",
    model: str = "gpt-5-codex",
    from_starter: bool = False,
    change: tuple[str, str] = DRAFT_TO_FINAL,
) -> bytes:
    """A Codex rollout that writes `kernel` with a shell heredoc (or copies the starter, which
    holds `kernel`, with `from_starter`) and then changes the line of it that holds
    `change[0]` with apply_patch."""
    meta = {
        "id": session,
        "timestamp": "2026-01-05T11:00:00.000Z",
        "cwd": "/repo",
        "cli_version": "0.58.0",
    }
    write = (
        "cp starter/solution.py solution.py"
        if from_starter
        else f"cat > solution.py <<'EOF'\n{kernel}EOF"
    )
    line = next(line for line in kernel.splitlines() if change[0] in line)
    patch = (
        "*** Begin Patch\n*** Update File: solution.py\n@@\n"
        f"-{line}\n+{line.replace(*change)}\n*** End Patch"
    )
    tokens = {
        "input_tokens": 5000,
        "cached_input_tokens": 1000,
        "output_tokens": 700,
        "reasoning_output_tokens": 0,
        "total_tokens": 5700,
    }
    items: list[tuple[str, dict[str, Any]]] = [
        ("session_meta", meta),
        ("turn_context", {"cwd": "/repo", "model": model}),
        (
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": prompt}],
            },
        ),
        (
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "s1",
                "arguments": json.dumps({"command": ["bash", "-lc", write], "workdir": "/repo"}),
            },
        ),
        (
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "s1",
                "output": json.dumps({"output": "", "metadata": {"exit_code": 0}}),
            },
        ),
        ("event_msg", {"type": "token_count", "info": {"total_token_usage": tokens}}),
        (
            "response_item",
            {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": patch},
        ),
        (
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "p1",
                "output": json.dumps({"output": "Success", "metadata": {"exit_code": 0}}),
            },
        ),
    ]
    records = [
        {"timestamp": f"2026-01-05T11:00:{n:02d}.000Z", "type": kind, "payload": payload}
        for n, (kind, payload) in enumerate(items)
    ]
    return _jsonl(records)
