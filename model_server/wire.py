"""What the three wire formats share: the reply, the usage reported, the tool's arguments."""

import json
from dataclasses import dataclass, field
from typing import Any

from model_server.script import Step

# Side requests (titles, summaries, a Gemini next-speaker check) get this; they carry no tools.
SIDE_ANSWER = "OK"
PATH_NAMES = ("file_path", "absolute_path", "path", "filename")
CONTENT_NAMES = ("content", "contents", "text")
COMMAND_NAMES = ("command", "cmd")


@dataclass
class Reply:
    body: bytes
    content_type: str = "application/json"
    status: int = 200
    # What the server said, for the operator and the tests: api, step, kind, tool, usage.
    record: dict[str, Any] = field(default_factory=dict)


def usage_for(step_index: int, *, side: bool) -> tuple[int, int]:
    """(input, output) tokens reported for a call: deterministic, distinct per step, so a
    transcript's token badges can be checked against what the server said."""
    if side:
        return 50, 1
    return 1000 + 100 * step_index, 20 + step_index


def json_reply(data: Any, record: dict[str, Any], *, status: int = 200) -> Reply:
    return Reply(json.dumps(data).encode(), status=status, record=record)


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    """Server-sent events: `event:` lines where the API names its events, `data:` JSON."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def first_name(properties: dict[str, Any], names: tuple[str, ...], fallback: str) -> str:
    return next((name for name in names if name in properties), fallback)


def absolute(cwd: str, relative: str) -> str:
    return relative if relative.startswith("/") or not cwd else f"{cwd.rstrip('/')}/{relative}"


def shell_text(step: Step) -> str:
    """The shell command of a step: `read` without a read tool becomes `cat`."""
    return step.shell or f"cat {step.read}"


def write_command(step: Step) -> str:
    """A step's write as a shell command, for a CLI without a file tool (never the case for the
    three CLIs, whose own file tools are used)."""
    return f"cat > {step.write} <<'ARENA_EOF'\n{step.content}ARENA_EOF\n"
