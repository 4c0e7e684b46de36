"""Gemini CLI: `gemini --prompt ... --output-format stream-json --yolo`.

--yolo approves every tool call (the sandbox is the boundary). Without a login the CLI needs
its auth type chosen in settings (gemini-api-key, from GEMINI_API_KEY) and the workspace
trusted, or it stops before its first call; both are written into the run's home. The CLI
saves the session under ~/.gemini/tmp/<project>/chats/ (session-*.jsonl since 0.6x, .json
before); that file, when present, is the richer transcript and is the one imported. The stream
ends with a `result` record; errors arrive as `error` records.
"""

import json
from pathlib import Path
from typing import ClassVar

from arena.agents.base import Adapter, Budget, Progress, json_records


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

    def env(self, *, home: Path, environ: dict[str, str]) -> dict[str, str]:
        env = super().env(home=home, environ=environ)
        env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        env["GEMINI_TELEMETRY_ENABLED"] = "false"
        if self.base_url():
            env["GOOGLE_GEMINI_BASE_URL"] = self.base_url()
        return env

    def prepare_home(self, *, home: Path, budget: Budget) -> None:
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (home / ".gemini").mkdir(exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))

    def transcript(self, *, log_path: Path, home: Path, workspace: Path) -> Path:
        sessions = sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))
        return sessions[-1] if sessions else log_path

    def progress(self, *, log_path: Path, home: Path) -> Progress:
        """A model call per tool call on stdout; tokens from the session's messages, each
        counted once (the session file rewrites a message as it grows)."""
        spent = self.__dict__.setdefault("_spent", {"turns": 0, "tokens": {}})
        spent["turns"] += sum(1 for r in self.follow(log_path) if r.get("type") == "tool_use")
        session = self.transcript(log_path=log_path, home=home, workspace=home)
        for record in self.follow(session) if session != log_path else []:
            tokens = record.get("tokens")
            if record.get("type") == "gemini" and isinstance(tokens, dict):
                spent["tokens"][str(record.get("id"))] = int(tokens.get("total") or 0)
        return Progress(turns=spent["turns"], tokens=sum(spent["tokens"].values()))

    def error_report(self, *, tail: str) -> str:
        errors = [r for r in json_records(tail) if r.get("type") == "error"]
        return str(errors[-1].get("message", "")) if errors else ""
