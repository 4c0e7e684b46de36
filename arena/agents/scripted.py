"""The `scripted` agent: a deterministic program that works a task through real tool calls.

    python arena/agents/scripted.py --strategy weak     (run with the workspace as cwd)

It reads PROMPT.md and the task's files, writes solution.py, runs ./check, reads the verdict
and, depending on its strategy, fixes the solution and checks again. Every tool call really
happens in the workspace, and the log on stdout is Claude Code's stream-json
(`claude -p --output-format stream-json --verbose`) with the real outputs as tool results, so
the arena's transcript pipeline reads it like any agent's. No model is called: the usage it
reports is zero tokens and zero cost, and its model is named "scripted".

Strategies: `starter` copies the starter kernel; `reference` wraps the PyTorch reference as
ModelNew (correct, not faster; flagged where the task forbids those ops); `weak` writes a
deliberately wrong solution first, sees check fail, then fixes it; `broken` writes a solution
that does not compile and gives up.

Standard library only, run by path: the GPU recording host has no Django or Celery.
"""

import argparse
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

STRATEGIES = ("starter", "reference", "weak", "broken")
MODEL = "scripted"
VERSION = "1"
TOOLS = ["Bash", "Edit", "Read", "Write"]
SOLUTION = "solution.py"
STARTER = "starter/solution.py"
CHECK_TIMEOUT_S = 900
# Claude Code shows at most this much of a command's output to the model.
MAX_TOOL_OUTPUT_CHARS = 30_000
ZERO_USAGE = {
    "input_tokens": 0,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": 0,
}
# Deliberately wrong on purpose, and says so: the demo's weak agent fixes it after check fails.
WEAK_BUG = '''

class ModelNew(ModelNew):
    """Deliberately wrong first attempt (scripted demo): the last output element is off by one."""

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs).contiguous().clone()
        flat = out.view(-1)
        flat[-1] = flat[-1] + 1
        return out
'''
BROKEN_SOLUTION = '''"""A first attempt that never got past a syntax error (scripted demo)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, *inputs)
        return inputs[0]
'''


class StreamJson:
    """Writes Claude Code stream-json records; ids are deterministic per task and strategy."""

    def __init__(self, out: TextIO, *, cwd: Path, seed: str) -> None:
        self.out, self.cwd = out, cwd
        self.session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"scripted:{seed}"))
        self.counter = 0
        self.turns = 0
        self.started = time.monotonic()

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_scripted_{self.counter:04d}"

    def _emit(self, record: dict[str, Any]) -> None:
        record.setdefault("session_id", self.session_id)
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def init(self) -> None:
        self._emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(self.cwd),
                "tools": TOOLS,
                "mcp_servers": [],
                "model": MODEL,
                "permissionMode": "bypassPermissions",
                "apiKeySource": "none",
                "scripted_version": VERSION,
            }
        )

    def assistant(self, blocks: list[dict[str, Any]]) -> None:
        """One model turn; like Claude Code, one line per content block, sharing the message id."""
        self.turns += 1
        message_id = self.next_id("msg")
        for block in blocks:
            message = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": dict(ZERO_USAGE),
            }
            self._emit({"type": "assistant", "message": message, "parent_tool_use_id": None})

    def tool_result(self, tool_use_id: str, content: str, *, is_error: bool) -> None:
        block = {
            "tool_use_id": tool_use_id,
            "type": "tool_result",
            "content": content,
            "is_error": is_error,
        }
        message = {"role": "user", "content": [block]}
        self._emit({"type": "user", "message": message, "parent_tool_use_id": None})

    def result(self, text: str, *, is_error: bool = False) -> None:
        self._emit(
            {
                "type": "result",
                "subtype": "success",
                "is_error": is_error,
                "duration_ms": round((time.monotonic() - self.started) * 1000),
                "duration_api_ms": 0,
                "num_turns": self.turns,
                "result": text,
                "total_cost_usd": 0,
                "usage": dict(ZERO_USAGE),
                "permission_denials": [],
            }
        )


class Agent:
    """Tool calls that really happen in the workspace, each logged with its real output."""

    def __init__(self, log: StreamJson, workspace: Path) -> None:
        self.log, self.workspace = log, workspace

    def say(self, text: str) -> None:
        self.log.assistant([{"type": "text", "text": text}])

    def call(self, text: str, name: str, tool_input: dict[str, Any]) -> tuple[str, bool]:
        tool_use_id = self.log.next_id("toolu")
        block = {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}
        self.log.assistant([{"type": "text", "text": text}, block])
        output, is_error = TOOL_RUNNERS[name](self.workspace, tool_input)
        output = output[:MAX_TOOL_OUTPUT_CHARS]
        self.log.tool_result(tool_use_id, output, is_error=is_error)
        return output, is_error

    def path(self, name: str) -> str:
        return str(self.workspace / name)

    def read(self, text: str, name: str) -> str:
        self.call(text, "Read", {"file_path": self.path(name)})
        return (self.workspace / name).read_text(encoding="utf-8")

    def write(self, text: str, name: str, content: str) -> None:
        self.call(text, "Write", {"file_path": self.path(name), "content": content})

    def check(self, text: str) -> tuple[str, bool]:
        """Run ./check; (its output, whether it passed)."""
        output, is_error = self.call(
            text, "Bash", {"command": "./check", "description": "Grade solution.py"}
        )
        return output, not is_error


def run_read(workspace: Path, tool_input: dict[str, Any]) -> tuple[str, bool]:
    try:
        lines = Path(tool_input["file_path"]).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        return f"<tool_use_error>{exc}</tool_use_error>", True
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, 1)), False


def run_write(workspace: Path, tool_input: dict[str, Any]) -> tuple[str, bool]:
    path = Path(tool_input["file_path"])
    existed = path.exists()
    path.write_text(tool_input["content"], encoding="utf-8")
    verb = "updated" if existed else "created"
    return f"File {verb} successfully at: {path}", False


def run_edit(workspace: Path, tool_input: dict[str, Any]) -> tuple[str, bool]:
    path = Path(tool_input["file_path"])
    text = path.read_text(encoding="utf-8")
    if text.count(tool_input["old_string"]) != 1:
        return "<tool_use_error>String to replace not found exactly once</tool_use_error>", True
    path.write_text(text.replace(tool_input["old_string"], tool_input["new_string"]), "utf-8")
    return f"The file {path} has been updated.", False


def run_bash(workspace: Path, tool_input: dict[str, Any]) -> tuple[str, bool]:
    try:
        # The agent's Bash tool is a shell by definition.
        done = subprocess.run(  # noqa: S602
            tool_input["command"],
            shell=True,
            cwd=workspace,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=CHECK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return f"Command timed out after {CHECK_TIMEOUT_S} s", True
    output = (done.stdout + done.stderr).rstrip()
    if done.returncode:
        return f"Exit code {done.returncode}\n{output}", True
    return output, False


TOOL_RUNNERS: dict[str, Callable[[Path, dict[str, Any]], tuple[str, bool]]] = {
    "Read": run_read,
    "Write": run_write,
    "Edit": run_edit,
    "Bash": run_bash,
}


def reference_solution(reference: str) -> str:
    """ModelNew as the reference itself: correct by construction, as fast as eager."""
    return (
        '"""ModelNew is the PyTorch reference itself (scripted demo): correct, not faster."""\n\n'
        f"{reference.rstrip()}\n\n\n"
        "class ModelNew(Model):\n"
        '    """The reference computation, unchanged."""\n'
    )


def failing_line(output: str) -> str:
    """The first FAIL or WRONG line of a verdict, which the next step responds to."""
    for line in output.splitlines():
        if "[FAIL]" in line or ": WRONG" in line:
            return line.strip()
    return output.strip().splitlines()[-1] if output.strip() else "(no output)"


def explore(agent: Agent) -> tuple[str, str | None]:
    """Read the prompt, list the files, read the reference and the starter if there is one."""
    agent.read("I'll start by reading the task description.", "PROMPT.md")
    agent.call(
        "Let me see which files the workspace holds.",
        "Bash",
        {"command": "find . -type f | sort", "description": "List workspace files"},
    )
    reference = agent.read("Now the reference implementation that defines Model.", "reference.py")
    if not (agent.workspace / STARTER).is_file():
        return reference, None
    starter = agent.read("There is a starter kernel; let me read it.", STARTER)
    return reference, starter


def base_solution(agent: Agent, reference: str, starter: str | None, strategy: str) -> str:
    if strategy in ("starter", "weak") and starter is not None:
        return starter
    if strategy == "starter":
        agent.say("There is no starter kernel here, so I'll start from the reference instead.")
    return reference_solution(reference)


def finish(agent: Agent, passed: bool, output: str) -> None:
    if passed:
        agent.log.result("check passes on the visible shapes; solution.py is my final answer.")
    else:
        agent.log.result(f"check still fails ({failing_line(output)}); stopping here.")


def work(agent: Agent, strategy: str) -> None:
    reference, starter = explore(agent)
    if strategy == "broken":
        agent.write("I'll write a first version of ModelNew.", SOLUTION, BROKEN_SOLUTION)
        output, passed = agent.check("Let me run the check.")
        agent.log.result(f"Giving up: check reports {failing_line(output)}")
        return
    solution = base_solution(agent, reference, starter, strategy)
    if strategy == "weak":
        agent.write("I'll write a first version of ModelNew.", SOLUTION, solution + WEAK_BUG)
        output, passed = agent.check("Let me check it.")
        if passed:
            return finish(agent, passed, output)
        agent.call(
            f"The check fails: {failing_line(output)}. The tail handling I added is wrong; "
            "I'll remove it.",
            "Edit",
            {"file_path": agent.path(SOLUTION), "old_string": WEAK_BUG, "new_string": ""},
        )
        output, passed = agent.check("Checking the fix.")
        return finish(agent, passed, output)
    what = "the starter kernel" if starter is not None and strategy == "starter" else "Model"
    agent.write(f"I'll write solution.py with ModelNew based on {what}.", SOLUTION, solution)
    output, passed = agent.check("Let me run the check.")
    finish(agent, passed, output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripted", description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", required=True, choices=STRATEGIES)
    parser.add_argument("--workspace", default=".", help="default: the current folder")
    args = parser.parse_args(argv)
    workspace = Path(args.workspace).resolve()
    prompt = workspace / "PROMPT.md"
    if not prompt.is_file():
        print(f"scripted: {prompt}: file not found; run me inside a workspace", file=sys.stderr)
        return 2
    seed = f"{args.strategy}:{prompt.read_text(encoding='utf-8')}"
    log = StreamJson(sys.stdout, cwd=workspace, seed=seed)
    log.init()
    work(Agent(log, workspace), args.strategy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
