"""Cursor: `cursor-agent --print --output-format stream-json`, tool calls allowed (--force).

Like Claude Code's stream-json, the run ends with a `result` record that carries is_error.
The CLI has no turn or cost flags: those budgets are checked from the imported log.
"""

from pathlib import Path
from typing import ClassVar

from arena.agents.base import Adapter, Budget
from arena.agents.claude_code import stream_json_error


class CursorAdapter(Adapter):
    name: ClassVar[str] = "cursor"
    binary: ClassVar[str] = "cursor-agent"
    completion_marker: ClassVar[str | None] = r'^\{.*"type": ?"result"'
    credential_env: ClassVar[tuple[str, ...]] = ("CURSOR_API_KEY",)
    provider_hosts: ClassVar[tuple[str, ...]] = ("api2.cursor.sh:443",)

    def command(self, *, prompt: str, budget: Budget, home: Path) -> list[str]:
        argv = [self.program(), "--print", "--output-format", "stream-json", "--force"]
        if self.model:
            argv += ["--model", self.model]
        return [*argv, prompt]

    def error_report(self, *, tail: str) -> str:
        return stream_json_error(tail)
