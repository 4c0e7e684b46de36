"""Gemini CLI: `gemini --prompt ... --output-format stream-json --yolo`.

--yolo approves every tool call (the sandbox is the boundary). The CLI also saves the session
under ~/.gemini/tmp/<project>/chats/; that file, when present, is the richer transcript and is
the one imported. The stream ends with a `result` record; errors arrive as `error` records.
"""

from pathlib import Path
from typing import ClassVar

from arena.agents.base import Adapter, Budget, json_records


class GeminiAdapter(Adapter):
    name: ClassVar[str] = "gemini"
    binary: ClassVar[str] = "gemini"
    completion_marker: ClassVar[str | None] = r'^\{.*"type": ?"result"'
    credential_env: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    provider_hosts: ClassVar[tuple[str, ...]] = ("generativelanguage.googleapis.com:443",)

    def command(self, *, prompt: str, budget: Budget, home: Path) -> list[str]:
        argv = [self.program(), "--prompt", prompt, "--output-format", "stream-json", "--yolo"]
        if self.model:
            argv += ["--model", self.model]
        return argv

    def transcript(self, *, log_path: Path, home: Path, workspace: Path) -> Path:
        sessions = sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json"))
        return sessions[-1] if sessions else log_path

    def error_report(self, *, tail: str) -> str:
        errors = [r for r in json_records(tail) if r.get("type") == "error"]
        return str(errors[-1].get("message", "")) if errors else ""
