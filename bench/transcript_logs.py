"""Deterministic, realistic agent logs of a chosen size, for tests and for bench/transcripts.py.

    write_claude_code_session(folder / "<session>.jsonl", target_bytes=20_000_000, events=10_000)
    write_codex_rollout(folder / "rollout-....jsonl", target_bytes=5_000_000)

Both return what a correct parser must find (token totals, counts), computed while writing.
The Claude Code session has what makes real ones hard: one line per content block repeating the
call's usage (earlier lines with fewer output tokens), tool calls with results, Edit with
structuredPatch and originalFile, Write of new files, Task calls with subagents in the 2.1.x
layout (<session>/subagents/agent-<id>.jsonl + .meta.json), a Warmup agent and a compaction.
The Codex rollout has apply_patch calls (Add then Update of tracked files), shell calls and
token_count events that repeat their cumulative totals.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Seeded generators make the logs reproducible; nothing here is a secret (hence the S311 noqa).

WORDS = tuple(
    [
        "kernel",
        "tile",
        "warp",
        "block",
        "shared",
        "memory",
        "coalesced",
        "load",
        "store",
        "reduction",
        "softmax",
        "matmul",
        "triton",
        "program_id",
        "stride",
        "mask",
        "autotune",
        "fp16",
        "bf16",
        "accumulate",
        "pipeline",
        "stage",
        "register",
    ]
)


@dataclass
class Expected:
    """What the parser must report for a generated log."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    main_input_tokens: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    file_changes: int = 0
    subagents: int = 0
    events: int = 0
    files: dict[str, str] = field(default_factory=dict)  # final content of each edited file


def _text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:chars]


def _source_file(rng: random.Random, lines: int) -> list[str]:
    return [f"    x{i} = tl.load(ptr + {i} * stride)  # {rng.choice(WORDS)}" for i in range(lines)]


# -- Claude Code ---------------------------------------------------------------------------------


class _ClaudeWriter:
    def __init__(
        self, path: Path, session_id: str, rng: random.Random, sidechain: str | None
    ) -> None:
        self.handle = path.open("w", encoding="utf-8")
        self.session_id, self.rng, self.agent_id = session_id, rng, sidechain
        self.parent: str | None = None
        self.count = 0
        self.bytes = 0
        self.clock = 0

    def uuid(self) -> str:
        self.count += 1
        tag = int(self.agent_id, 16) if self.agent_id else 0
        return f"00000000-{tag % 65536:04x}-4000-8000-{self.count:012d}"

    def stamp(self) -> str:
        self.clock += 1
        hours, rest = divmod(self.clock, 3600)
        return f"2025-11-20T{10 + hours % 12:02d}:{rest // 60:02d}:{rest % 60:02d}.000Z"

    def write(self, record: dict[str, Any], *, chain: bool = True) -> str:
        uuid = self.uuid()
        base = {
            "parentUuid": self.parent if chain else None,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": "/workspace",
            "sessionId": self.session_id,
            "version": "2.1.14",
            "gitBranch": "main",
        }
        if self.agent_id:
            base["agentId"] = self.agent_id
        line = json.dumps({**base, **record, "uuid": uuid, "timestamp": self.stamp()}) + "\n"
        self.handle.write(line)
        self.bytes += len(line.encode())
        self.parent = uuid
        return uuid

    def user(self, content: Any, **extra: Any) -> None:
        self.write({"type": "user", "message": {"role": "user", "content": content}, **extra})

    def call(
        self, number: int, blocks: list[dict[str, Any]], usage: dict[str, int], model: str
    ) -> None:
        """One model call: a line per content block, each repeating the call's usage."""
        for position, block in enumerate(blocks):
            partial = position < len(blocks) - 1 and position % 2 == 0
            shown = {**usage, "output_tokens": 1} if partial else usage
            self.write(
                {
                    "type": "assistant",
                    "requestId": f"req_{self.agent_id or 'main'}_{number}",
                    "message": {
                        "id": f"msg_{self.agent_id or 'main'}_{number}",
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [block],
                        "stop_reason": None,
                        "usage": shown,
                    },
                }
            )

    def close(self) -> None:
        self.handle.close()


def _usage(rng: random.Random, context: int) -> dict[str, int]:
    return {
        "input_tokens": rng.randint(3, 12),
        "cache_creation_input_tokens": rng.randint(100, 2000),
        "cache_read_input_tokens": context,
        "output_tokens": rng.randint(40, 900),
    }


def _count(expected: Expected, usage: dict[str, int], *, main: bool) -> None:
    expected.input_tokens += usage["input_tokens"]
    expected.output_tokens += usage["output_tokens"]
    expected.cache_read_tokens += usage["cache_read_input_tokens"]
    expected.cache_write_tokens += usage["cache_creation_input_tokens"]
    expected.model_calls += 1
    if main:
        expected.main_input_tokens += usage["input_tokens"]


def write_claude_code_session(
    path: str | Path, *, target_bytes: int = 20_000_000, events: int = 10_000, seed: int = 7
) -> Expected:
    """A Claude Code 2.1.x session of about `target_bytes` with about `events` events."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)  # noqa: S311
    session_id = path.stem
    expected = Expected()
    subagent_dir = path.parent / session_id / "subagents"
    subagent_dir.mkdir(parents=True, exist_ok=True)
    _warmup_agent(subagent_dir, session_id)
    main = _ClaudeWriter(path, session_id, rng, None)
    files: dict[str, list[str]] = {}
    main.user("Optimise the softmax kernel in kernel.py and keep it correct.")
    expected.events += 1
    context = 12_000
    number = 0
    # Spread the bytes over tool outputs: estimate per result from what is left to write.
    calls_planned = max(1, events // 4)
    while expected.events < events:
        number += 1
        context += rng.randint(200, 1500)
        usage = _usage(rng, context)
        # A subagent every 40 calls, the first early so that small logs have one too.
        kind = (
            "task" if number % 40 == 10 else ("bash", "edit", "write", "read", "bash")[number % 5]
        )
        path_name = f"src/k{number % 7}.py"
        if kind == "edit" and path_name not in files:
            kind = "write"
        call_id = f"toolu_{number:06d}"
        tool, arguments = _claude_tool(kind, path_name, files, rng)
        blocks: list[dict[str, Any]] = []
        if number % 3 == 0:
            blocks.append({"type": "thinking", "thinking": _text(rng, 400), "signature": "sig"})
        blocks.append({"type": "text", "text": _text(rng, 160)})
        blocks.append({"type": "tool_use", "id": call_id, "name": tool, "input": arguments})
        main.call(number, blocks, usage, "claude-sonnet-4-5-20250929")
        _count(expected, usage, main=True)
        expected.tool_calls += 1
        expected.events += len(blocks) + 1
        remaining = max(1, calls_planned - number)
        pad = max(200, (target_bytes - main.bytes) // remaining - 1500)
        result, tool_use_result = _claude_result(
            kind, path_name, files, arguments, rng, pad, number
        )
        if kind in ("edit", "write"):
            expected.file_changes += 1
            expected.events += 1
        if kind == "task":
            agent_id = f"{number:016x}"[-8:]
            tool_use_result["agentId"] = agent_id
            _subagent(subagent_dir, session_id, agent_id, rng, expected)
            expected.subagents += 1
            expected.events += 1
        main.user(
            [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
            toolUseResult=tool_use_result,
        )
        if number == calls_planned // 2:
            main.write(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "content": "Conversation compacted",
                    "logicalParentUuid": main.parent,
                    "level": "info",
                    "compactMetadata": {"trigger": "auto", "preTokens": context},
                },
                chain=False,
            )
            main.user(
                "This session is being continued from a previous conversation. " + _text(rng, 600),
                isCompactSummary=True,
            )
            expected.events += 1
            context = 9_000
    main.close()
    expected.files = {name: "".join(f"{line}\n" for line in lines) for name, lines in files.items()}
    return expected


def _claude_tool(
    kind: str, path_name: str, files: dict[str, list[str]], rng: random.Random
) -> tuple[str, dict[str, Any]]:
    full = f"/workspace/{path_name}"
    if kind == "bash":
        return "Bash", {"command": "python -m pytest -q tests/", "description": "Run the tests"}
    if kind == "read":
        return "Read", {"file_path": full}
    if kind == "write":
        return "Write", {"file_path": full, "content": "\n".join(_source_file(rng, 30)) + "\n"}
    if kind == "task":
        return "Task", {
            "description": "Profile the kernel",
            "prompt": "Profile kernel.py and report the slowest loop.",
            "subagent_type": "general-purpose",
        }
    lines = files[path_name]
    index = rng.randrange(len(lines))
    return "Edit", {
        "file_path": full,
        "old_string": lines[index],
        "new_string": lines[index] + "  # tuned",
    }


def _claude_result(
    kind: str,
    path_name: str,
    files: dict[str, list[str]],
    arguments: dict[str, Any],
    rng: random.Random,
    pad: int,
    number: int,
) -> tuple[str, dict[str, Any]]:
    full = f"/workspace/{path_name}"
    if kind == "bash":
        output = f"{number} passed\n" + _text(rng, pad)
        return output, {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
    if kind == "read":
        content = "".join(f"{line}\n" for line in files.get(path_name, ["# empty"]))
        return content, {
            "type": "text",
            "file": {
                "filePath": full,
                "content": content,
                "numLines": content.count("\n"),
                "startLine": 1,
                "totalLines": content.count("\n"),
            },
        }
    if kind == "write":
        content = arguments["content"]
        existed = path_name in files
        before = "".join(f"{line}\n" for line in files.get(path_name, []))
        files[path_name] = content.split("\n")[:-1]
        if existed:
            old_lines, new_lines = before.split("\n")[:-1], files[path_name]
            hunk = {
                "oldStart": 1,
                "oldLines": len(old_lines),
                "newStart": 1,
                "newLines": len(new_lines),
                "lines": [f"-{x}" for x in old_lines] + [f"+{x}" for x in new_lines],
            }
            return f"The file {full} has been updated.", {
                "type": "update",
                "filePath": full,
                "content": content,
                "structuredPatch": [hunk],
                "originalFile": before,
            }
        return f"File created successfully at: {full}", {
            "type": "create",
            "filePath": full,
            "content": content,
            "structuredPatch": [],
        }
    if kind == "task":
        report = "The slowest loop is the row reduction. " + _text(rng, pad)
        return report, {
            "status": "completed",
            "prompt": arguments["prompt"],
            "content": [{"type": "text", "text": report}],
            "totalDurationMs": 42_000,
            "totalTokens": 12_000,
            "totalToolUseCount": 3,
        }
    lines = files[path_name]
    before = "".join(f"{line}\n" for line in lines)
    index = lines.index(arguments["old_string"])
    start = max(0, index - 3)
    end = min(len(lines), index + 4)
    body = [f" {x}" for x in lines[start:index]] + [
        f"-{lines[index]}",
        f"+{arguments['new_string']}",
    ]
    body += [f" {x}" for x in lines[index + 1 : end]]
    hunk = {
        "oldStart": start + 1,
        "oldLines": end - start,
        "newStart": start + 1,
        "newLines": end - start,
        "lines": body,
    }
    lines[index] = arguments["new_string"]
    return f"The file {full} has been updated.", {
        "filePath": full,
        "oldString": arguments["old_string"],
        "newString": arguments["new_string"],
        "originalFile": before,
        "structuredPatch": [hunk],
        "userModified": False,
        "replaceAll": False,
    }


def _subagent(
    folder: Path, session_id: str, agent_id: str, rng: random.Random, expected: Expected
) -> None:
    (folder / f"agent-{agent_id}.meta.json").write_text(
        json.dumps({"agentType": "general-purpose"})
    )
    writer = _ClaudeWriter(folder / f"agent-{agent_id}.jsonl", session_id, rng, agent_id)
    writer.user("Profile kernel.py and report the slowest loop.")
    expected.events += 1
    for step in range(1, 4):
        usage = _usage(rng, 3_000 * step)
        call_id = f"toolu_{agent_id}_{step}"
        blocks = [
            {"type": "text", "text": _text(rng, 80)},
            {
                "type": "tool_use",
                "id": call_id,
                "name": "Bash",
                "input": {"command": "nsys profile"},
            },
        ]
        writer.call(step, blocks, usage, "claude-haiku-4-5-20251001")
        _count(expected, usage, main=False)
        writer.user([{"type": "tool_result", "tool_use_id": call_id, "content": _text(rng, 300)}])
        expected.tool_calls += 1
        expected.events += len(blocks) + 1
    usage = _usage(rng, 12_000)
    writer.call(
        4,
        [{"type": "text", "text": "The slowest loop is the row reduction."}],
        usage,
        "claude-haiku-4-5-20251001",
    )
    _count(expected, usage, main=False)
    expected.events += 1
    writer.close()


def _warmup_agent(folder: Path, session_id: str) -> None:
    rng = random.Random(0)  # noqa: S311
    writer = _ClaudeWriter(folder / "agent-0000warm.jsonl", session_id, rng, "0000beef")
    writer.user("Warmup")
    reply = [{"type": "text", "text": "Ready."}]
    writer.call(1, reply, _usage(rng, 0), "claude-haiku-4-5-20251001")
    writer.close()


# -- Codex ---------------------------------------------------------------------------------------


def write_codex_rollout(
    path: str | Path, *, target_bytes: int = 5_000_000, seed: int = 11
) -> Expected:
    """A Codex rollout of about `target_bytes`: apply_patch edits, shell calls, repeated totals."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)  # noqa: S311
    expected = Expected()
    files: dict[str, list[str]] = {}
    totals = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    written = 0
    clock = 0
    with path.open("w", encoding="utf-8") as handle:

        def put(kind: str, payload: dict[str, Any]) -> None:
            nonlocal written, clock
            clock += 1
            stamp = f"2025-11-20T12:{clock // 60 % 60:02d}:{clock % 60:02d}.{clock % 1000:03d}Z"
            line = json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n"
            handle.write(line)
            written += len(line.encode())

        put(
            "session_meta",
            {
                "id": "0199a000-0000-7000-8000-000000000001",
                "timestamp": "2025-11-20T12:00:00.000Z",
                "cwd": "/workspace",
                "originator": "codex_cli_rs",
                "cli_version": "0.58.0",
                "instructions": None,
                "source": "exec",
                "git": {"commit_hash": "0" * 40, "branch": "main", "repository_url": None},
            },
        )
        put(
            "turn_context",
            {
                "cwd": "/workspace",
                "approval_policy": "never",
                "model": "gpt-5-codex",
                "effort": "high",
                "summary": "auto",
                "sandbox_policy": {"mode": "workspace-write"},
            },
        )
        put(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Optimise the kernel in kernel.py."}],
            },
        )
        expected.events += 1
        number = 0
        while written < target_bytes:
            number += 1
            put(
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": _text(rng, 200)}],
                    "content": None,
                    "encrypted_content": "gAAAA" + "x" * 400,
                },
            )
            expected.events += 1
            call_id = f"call_{number:06d}"
            name = f"src/k{number % 5}.py"
            if number % 2:
                envelope = _codex_patch(name, files, rng)
                put(
                    "response_item",
                    {
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call_id,
                        "name": "apply_patch",
                        "input": envelope,
                    },
                )
                output = json.dumps(
                    {
                        "output": f"Success. Updated the following files:\nM {name}\n",
                        "metadata": {"exit_code": 0, "duration_seconds": 0.0},
                    }
                )
                put(
                    "response_item",
                    {"type": "custom_tool_call_output", "call_id": call_id, "output": output},
                )
                expected.file_changes += 1
                expected.events += 3
            else:
                arguments = json.dumps(
                    {"command": ["bash", "-lc", "python -m pytest -q"], "workdir": "/workspace"}
                )
                put(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "shell",
                        "arguments": arguments,
                        "call_id": call_id,
                    },
                )
                output = json.dumps(
                    {
                        "output": _text(rng, rng.randint(2000, 8000)),
                        "metadata": {"exit_code": 0, "duration_seconds": 1.5},
                    }
                )
                put(
                    "response_item",
                    {"type": "function_call_output", "call_id": call_id, "output": output},
                )
                expected.events += 2
            expected.tool_calls += 1
            fresh, cached, out = (
                rng.randint(500, 3000),
                rng.randint(5000, 40000),
                rng.randint(50, 1500),
            )
            totals["input_tokens"] += fresh + cached
            totals["cached_input_tokens"] += cached
            totals["output_tokens"] += out
            expected.model_calls += 1
            for _ in range(2):  # Codex writes the same running total more than once
                put(
                    "event_msg",
                    {
                        "type": "token_count",
                        "info": {
                            "total_token_usage": {
                                **totals,
                                "reasoning_output_tokens": 0,
                                "total_tokens": totals["input_tokens"] + totals["output_tokens"],
                            },
                            "last_token_usage": {
                                "input_tokens": fresh + cached,
                                "cached_input_tokens": cached,
                                "output_tokens": out,
                            },
                            "model_context_window": 272000,
                        },
                        "rate_limits": None,
                    },
                )
        put(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "The kernel is faster now."}],
            },
        )
        expected.events += 1
    expected.input_tokens = expected.main_input_tokens = (
        totals["input_tokens"] - totals["cached_input_tokens"]
    )
    expected.cache_read_tokens = totals["cached_input_tokens"]
    expected.output_tokens = totals["output_tokens"]
    expected.files = {name: "".join(f"{line}\n" for line in lines) for name, lines in files.items()}
    return expected


def _codex_patch(name: str, files: dict[str, list[str]], rng: random.Random) -> str:
    if name not in files:
        files[name] = ["import triton", "", "", "def kernel(ptr, stride):", *_source_file(rng, 40)]
        body = "".join(f"+{line}\n" for line in files[name])
        return f"*** Begin Patch\n*** Add File: {name}\n{body}*** End Patch"
    lines = files[name]
    index = rng.randrange(5, len(lines) - 1)
    old, new = lines[index], lines[index] + "  # tuned"
    context_before = lines[max(4, index - 2) : index]
    after = lines[index + 1 : index + 3]
    chunk = (
        "".join(f" {x}\n" for x in context_before)
        + f"-{old}\n+{new}\n"
        + "".join(f" {x}\n" for x in after)
    )
    lines[index] = new
    header = f"*** Begin Patch\n*** Update File: {name}\n@@ def kernel(ptr, stride):\n"
    return f"{header}{chunk}*** End Patch"


# -- measuring the parsers -----------------------------------------------------------------------


def _measure_child(path: str) -> None:
    """In a fresh process: parse once, print seconds and peak memory as JSON."""
    import resource
    import sys
    import time
    import tracemalloc

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from transcript_formats import parse_path

    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started, cpu_started = time.perf_counter(), time.process_time()
    transcript = parse_path(path)
    seconds = time.perf_counter() - started
    # CPU time too: on a shared machine the wall clock also measures the neighbours.
    cpu_seconds = time.process_time() - cpu_started
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    parse_path(path)
    _, traced_peak = tracemalloc.get_traced_memory()
    print(
        json.dumps(
            {
                "parse_s": round(seconds, 3),
                "parse_cpu_s": round(cpu_seconds, 3),
                "events": len(transcript.events()),
                "rss_growth_mb": round((rss_kib - baseline_kib) / 1024, 1),
                "traced_peak_mb": round(traced_peak / 1e6, 1),
            }
        )
    )


def measure(folder: Path, repeats: int = 3) -> dict[str, Any]:
    """Generate both logs in `folder` and parse each in fresh processes; best of `repeats`."""
    import subprocess
    import sys

    logs = {
        "claude_code_20mb": (folder / "cc" / "0a1b2c3d-session.jsonl", write_claude_code_session),
        "codex_5mb": (folder / "cx" / "rollout-2025-11-20T12-00-00-x.jsonl", write_codex_rollout),
    }
    report: dict[str, Any] = {}
    for name, (path, write) in logs.items():
        write(path)
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, __file__, "--child", str(path)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for _ in range(repeats)
        ]
        best = min(runs, key=lambda run: run["parse_s"])
        report[name] = {"file_mb": round(path.stat().st_size / 1e6, 2), **best}
    return report


if __name__ == "__main__":
    import sys
    import tempfile

    if sys.argv[1:2] == ["--child"]:
        _measure_child(sys.argv[2])
    else:
        with tempfile.TemporaryDirectory() as scratch:
            print(json.dumps(measure(Path(scratch)), indent=2))
