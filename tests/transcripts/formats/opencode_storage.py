"""An OpenCode storage folder we write ourselves: one JSON file per session, message and part.

Written from Python rather than kept under fixtures/: the folder is many tiny files, each alone
no session, which the fixture-wide mutation test would pick one at a time. Every construct the
reader handles appears here: steps with their own tokens (the message keeps only the last
step's), reasoning, tools that pass, fail and edit (a jsdiff patch with `Index:` lines, a new
file, an apply_patch envelope), a task call whose child session is a subagent, an attached
image, synthetic context, an aborted message, a second unrelated session, and the files the
reader ignores (project, session_diff).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROJECT = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750"
MAIN, CHILD, OTHER = "ses_6d2f0c1a4ffeK3b9Xq7RzT2mNp", "ses_6d2f0b7e1ffeL8c2Yw5SuV4kQr", "ses_5a1e"
T0 = 1_771_400_000_000  # ms
PNG = (  # a 1x1 image
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAAB"
    "JRU5ErkJggg=="
)
SONNET, HAIKU = "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"
EDIT_DIFF = (
    "Index: /home/dev/kernels/k.py\n"
    "===================================================================\n"
    "--- /home/dev/kernels/k.py\n"
    "+++ /home/dev/kernels/k.py\n"
    "@@ -1,2 +1,2 @@\n"
    " def k(x):\n"
    "-    return [v * 2 for v in x]\n"
    "+    return x * 2\n"
)


def _tokens(inp: int, out: int, reasoning: int, read: int, write: int) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "reasoning": reasoning,
        "cache": {"read": read, "write": write},
    }


def _user(mid: str, session: str, at: int) -> dict[str, Any]:
    return {
        "id": mid,
        "sessionID": session,
        "role": "user",
        "time": {"created": T0 + at},
        "agent": "build",
        "model": {"providerID": "anthropic", "modelID": SONNET},
    }


def _assistant(
    mid: str, session: str, at: int, model: str, cost: float, tokens: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    message = {
        "id": mid,
        "sessionID": session,
        "role": "assistant",
        "time": {"created": T0 + at, "completed": T0 + at + 900},
        "parentID": "msg_6d2f0c1a5001",
        "modelID": model,
        "providerID": "anthropic",
        "mode": "build",
        "agent": "build",
        "path": {"cwd": "/home/dev/kernels", "root": "/home/dev/kernels"},
        "cost": cost,
        "tokens": tokens,
        "finish": "stop",
    }
    message.update(extra)
    return message


def _tool(tool: str, call: str, status: str, args: dict[str, Any], **state: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"status": status, "input": args, "time": {"start": T0, "end": T0 + 50}}
    body.update(state)
    return {"type": "tool", "callID": call, "tool": tool, "state": body}


def _step(tokens: dict[str, Any], cost: float) -> dict[str, Any]:
    return {"type": "step-finish", "reason": "tool-calls", "cost": cost, "tokens": tokens}


def sessions() -> list[dict[str, Any]]:
    base = {"projectID": PROJECT, "directory": "/home/dev/kernels", "version": "0.15.8"}
    return [
        {
            **base,
            "id": MAIN,
            "title": "Speed up k.py",
            "time": {"created": T0, "updated": T0 + 9000},
        },
        {
            **base,
            "id": CHILD,
            "parentID": MAIN,
            "title": "Benchmark k.py (@general subagent)",
            "time": {"created": T0 + 5000, "updated": T0 + 7000},
        },
        {**base, "id": OTHER, "title": "An older session", "time": {"created": 1, "updated": 2}},
    ]


def messages() -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each message with its parts, in the order OpenCode wrote them."""
    last_step = _tokens(20, 80, 0, 7500, 100)
    patch = "*** Begin Patch\n*** Add File: bench.py\n+import k\n+print(k.k(2))\n*** End Patch"
    return [
        (
            _user("msg_6d2f0c1a5001", MAIN, 0),
            [
                {"type": "text", "text": "Speed up k.py, see the profile"},
                {
                    "type": "file",
                    "mime": "image/png",
                    "filename": "profile.png",
                    "url": f"data:image/png;base64,{PNG}",
                },
                {"type": "text", "synthetic": True, "text": "Called the Read tool on k.py"},
            ],
        ),
        (
            _assistant("msg_6d2f0c1a6002", MAIN, 1000, SONNET, 0.05, last_step),
            [
                {"type": "step-start", "snapshot": "a1b2"},
                {"type": "reasoning", "text": "Look at k.py first.", "time": {"start": T0 + 1100}},
                _tool(
                    "read",
                    "toolu_read",
                    "completed",
                    {"filePath": "/home/dev/kernels/k.py"},
                    output="00001| def k(x):\n00002|     return [v * 2 for v in x]",
                    title="k.py",
                    metadata={"preview": "def k(x):"},
                ),
                _step(_tokens(1000, 200, 50, 5000, 2000), 0.03),
                {"type": "step-start"},
                {"type": "text", "text": "Editing k.py.", "time": {"start": T0 + 2000}},
                _tool(
                    "edit",
                    "toolu_edit",
                    "completed",
                    {
                        "filePath": "/home/dev/kernels/k.py",
                        "oldString": "    return [v * 2 for v in x]",
                        "newString": "    return x * 2",
                    },
                    output="",
                    title="k.py",
                    metadata={"diff": EDIT_DIFF, "diagnostics": {}},
                ),
                _step(_tokens(30, 120, 0, 7000, 300), 0.01),
                {"type": "step-start"},
                _tool(
                    "apply_patch",
                    "call_patch",
                    "completed",
                    {"patchText": patch},
                    output="Done",
                    title="bench.py",
                    metadata={},
                ),
                _tool(
                    "bash",
                    "toolu_test",
                    "completed",
                    {"command": "pytest -q"},
                    output="1 failed",
                    title="pytest -q",
                    metadata={"exit": 1, "output": "1 failed"},
                ),
                _tool(
                    "bash",
                    "toolu_rm",
                    "error",
                    {"command": "rm -rf /"},
                    error="The user rejected permission to use this specific tool call.",
                ),
                _step(last_step, 0.01),
                {"type": "patch", "hash": "c3d4", "files": ["/home/dev/kernels/k.py"]},
            ],
        ),
        (
            _assistant("msg_6d2f0c1a7003", MAIN, 4000, SONNET, 0.01, _tokens(10, 40, 0, 8000, 0)),
            [
                {"type": "step-start"},
                _tool(
                    "task",
                    "toolu_task",
                    "completed",
                    {
                        "description": "Benchmark k.py",
                        "prompt": "Time bench.py",
                        "subagent_type": "general",
                    },
                    output="It takes 0.2 s.",
                    title="Benchmark k.py",
                    metadata={"sessionId": CHILD, "summary": []},
                ),
                _step(_tokens(10, 40, 0, 8000, 0), 0.01),
            ],
        ),
        (
            _assistant("msg_6d2f0c1a8004", MAIN, 8000, SONNET, 0.005, _tokens(5, 30, 10, 8100, 0)),
            [
                {"type": "step-start"},
                {"type": "text", "text": "k.py is 2x faster; one test fails."},
                {"type": "widget", "name": "a part type we do not know"},
                _step(_tokens(5, 30, 10, 8100, 0), 0.005),
            ],
        ),
        (_user("msg_6d2f0c1a9005", MAIN, 8500), [{"type": "text", "text": "stop"}]),
        (
            _assistant(
                "msg_6d2f0c1aa006",
                MAIN,
                8600,
                SONNET,
                0,
                _tokens(0, 0, 0, 0, 0),
                error={
                    "name": "MessageAbortedError",
                    "data": {"message": "The operation was aborted."},
                },
            ),
            [],
        ),
        (_user("msg_6d2f0b7e2001", CHILD, 5000), [{"type": "text", "text": "Time bench.py"}]),
        (
            _assistant("msg_6d2f0b7e3002", CHILD, 5500, HAIKU, 0.002, _tokens(10, 20, 0, 900, 0)),
            [
                {"type": "step-start"},
                _tool(
                    "bash",
                    "toolu_bench",
                    "completed",
                    {"command": "python bench.py"},
                    output="0.2 s",
                    title="python bench.py",
                    metadata={"exit": 0},
                ),
                _step(_tokens(100, 50, 0, 0, 900), 0.0015),
                {"type": "step-start"},
                {"type": "text", "text": "It takes 0.2 s."},
                _step(_tokens(10, 20, 0, 900, 0), 0.0005),
            ],
        ),
        (_user("msg_5a1e0001", OTHER, -5000), [{"type": "text", "text": "old question"}]),
        (
            _assistant("msg_5a1e0002", OTHER, -4000, SONNET, 1.0, _tokens(1, 1, 0, 0, 0)),
            [{"type": "text", "text": "old answer"}],
        ),
    ]


def write_storage(root: Path) -> Path:
    """The storage folder as OpenCode 0.15 lays it out, pretty-printed as OpenCode writes it."""
    storage = root / "storage"

    def put(path: str, value: Any) -> None:
        target = storage / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(value, indent=2))

    put(f"project/{PROJECT}.json", {"id": PROJECT, "worktree": "/home/dev/kernels", "vcs": "git"})
    put(f"session_diff/{MAIN}.json", [{"file": "k.py", "before": "", "after": "", "additions": 1}])
    for session in sessions():
        put(f"session/{PROJECT}/{session['id']}.json", session)
    for message, parts in messages():
        put(f"message/{message['sessionID']}/{message['id']}.json", message)
        for number, part in enumerate(parts, start=1):
            pid = f"prt_{message['id'][4:]}{number:03d}"
            full = {
                "id": pid,
                "sessionID": message["sessionID"],
                "messageID": message["id"],
                **part,
            }
            put(f"part/{message['id']}/{pid}.json", full)
    return storage


def export_document(session: str = MAIN) -> dict[str, Any]:
    """`opencode export <session>`: {info, messages: [{info, parts}]}."""
    info = next(s for s in sessions() if s["id"] == session)
    listed = []
    for message, parts in messages():
        if message["sessionID"] != session:
            continue
        full = [
            {
                "id": f"prt_{message['id'][4:]}{n:03d}",
                "sessionID": session,
                "messageID": message["id"],
                **p,
            }
            for n, p in enumerate(parts, start=1)
        ]
        listed.append({"info": message, "parts": full})
    return {"info": info, "messages": listed}
