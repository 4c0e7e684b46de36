"""Scripts: what the scripted model says, one step per model call.

    {"model": "scripted-solver",
     "steps": [
       {"say": "Reading the task.", "read": "PROMPT.md"},
       {"shell": "ls -la"},
       {"write": "solution.py", "source": "vector_add_blocked.py"},
       {"shell": "./check"},
       {"say": "solution.py passes ./check."}],
     "repeat_last": false}

A step with a tool (read, shell, write) is answered with one call of the CLI's matching tool; a
step with `say` alone ends the session. Which step a request gets is the number of tool results
in its history, so the server keeps no session state and a CLI that sends its history again
(all of them do) gets the next step. With `repeat_last` the last step is played for ever: a
script that runs out of turns. `source` names a file beside the script.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts"
TOOL_KEYS = ("read", "shell", "write")


class ScriptError(ValueError):
    """A script that cannot be played; the message names the file and the step."""


@dataclass(frozen=True)
class Step:
    say: str = ""
    read: str = ""
    shell: str = ""
    write: str = ""
    content: str = ""

    @property
    def tool(self) -> str:
        return next((key for key in TOOL_KEYS if getattr(self, key)), "")


@dataclass(frozen=True)
class Script:
    name: str
    model: str
    steps: tuple[Step, ...]
    repeat_last: bool = False
    usage: dict[str, int] = field(default_factory=dict)

    def step(self, index: int) -> Step:
        if index < len(self.steps):
            return self.steps[index]
        if self.repeat_last:
            return self.steps[-1]
        return Step(say="The script has no more steps.")


def script_load(name_or_path: str | Path) -> Script:
    """A script by name (scripts/<name>.json) or by path; ScriptError says what is wrong."""
    path = Path(name_or_path)
    if not path.suffix:
        path = SCRIPTS_DIR / f"{name_or_path}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScriptError(f"{path}: cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list) or not data["steps"]:
        raise ScriptError(f"{path}: a script is an object with a non-empty list `steps`")
    steps = tuple(_step(path, number, raw) for number, raw in enumerate(data["steps"], 1))
    return Script(
        name=path.stem,
        model=str(data.get("model") or "scripted"),
        steps=steps,
        repeat_last=bool(data.get("repeat_last", False)),
    )


def _step(path: Path, number: int, raw: Any) -> Step:
    if not isinstance(raw, dict):
        raise ScriptError(f"{path}: step {number}: an object is needed")
    unknown = sorted(set(raw) - {"say", "source", *TOOL_KEYS})
    if unknown:
        raise ScriptError(f"{path}: step {number}: unknown key {unknown[0]!r}")
    if sum(bool(raw.get(key)) for key in TOOL_KEYS) > 1:
        raise ScriptError(f"{path}: step {number}: one tool per step (read, shell or write)")
    content = ""
    if raw.get("write"):
        source = raw.get("source")
        if not isinstance(source, str):
            raise ScriptError(f"{path}: step {number}: `write` needs a `source` file")
        try:
            content = (path.parent / source).read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptError(f"{path}: step {number}: {source}: {exc.strerror}") from None
    fields = {key: str(raw.get(key) or "") for key in ("say", *TOOL_KEYS)}
    if not any(fields.values()):
        raise ScriptError(f"{path}: step {number}: says nothing and calls no tool")
    return Step(**fields, content=content)
