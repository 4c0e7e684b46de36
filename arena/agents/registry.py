"""Adapters by harness name, and the `scripted` adapter that runs arena/agents/scripted.py.

An Agent row names its adapter in `harness` and its options in `config`; the registry builds
the adapter, and a bad option fails here, before any run starts.
"""

import sys
from pathlib import Path
from typing import Any, ClassVar

from arena.agents import SCRIPTED_PROGRAM, SCRIPTED_STRATEGIES, scripted_command
from arena.agents.base import Adapter, AdapterError, Budget
from arena.agents.claude_code import ClaudeCodeAdapter, stream_json_error
from arena.agents.codex import CodexAdapter
from arena.agents.command import CommandAdapter
from arena.agents.cursor import CursorAdapter
from arena.agents.gemini import GeminiAdapter


class ScriptedAdapter(Adapter):
    """The deterministic scripted agent (no model): it writes Claude Code stream-json."""

    name: ClassVar[str] = "scripted"
    completion_marker: ClassVar[str | None] = r'^\{.*"type": ?"result"'

    def __post_init__(self) -> None:
        strategy = self.options.get("strategy", "starter")
        if strategy not in SCRIPTED_STRATEGIES:
            choices = ", ".join(SCRIPTED_STRATEGIES)
            raise AdapterError(f"scripted agent: strategy {strategy!r}; choose one of {choices}")

    def program(self) -> str:
        return sys.executable

    def command(self, *, prompt: str, budget: Budget, home: Path) -> list[str]:
        return scripted_command(strategy=self.options.get("strategy", "starter"))

    def readable(self) -> list[Path]:
        return [Path(sys.executable).resolve().parent, SCRIPTED_PROGRAM.parent]

    def version(self) -> str:
        from arena.agents.scripted import VERSION

        return f"scripted {VERSION}"

    def error_report(self, *, tail: str) -> str:
        return stream_json_error(tail)


ADAPTERS: dict[str, type[Adapter]] = {
    adapter.name: adapter
    for adapter in (
        ClaudeCodeAdapter,
        CodexAdapter,
        CursorAdapter,
        GeminiAdapter,
        CommandAdapter,
        ScriptedAdapter,
    )
}


def adapter_for(*, harness: str, model: str = "", effort: str = "", config: Any = None) -> Adapter:
    """The adapter named `harness`, built with the agent's options; AdapterError if unknown."""
    cls = ADAPTERS.get(harness)
    if cls is None:
        choices = ", ".join(sorted(ADAPTERS))
        raise AdapterError(f"unknown agent harness {harness!r}; choose one of {choices}")
    if config is not None and not isinstance(config, dict):
        raise AdapterError("the agent's config must be a JSON object")
    return cls(model=model, effort=effort, options=dict(config or {}))
