"""Codex: `codex exec --json`, and the rollout file that CODEX_HOME keeps for the session.

stdout is a stream of events (thread.started with the session id, items, turn.completed or
turn.failed, error); the rollout file under $CODEX_HOME/sessions/YYYY/MM/DD/ named for that
session id holds the full conversation with reasoning and token counts, so it is the
transcript imported. Inside the sandbox Codex's own sandbox and approvals are off.
"""

import json
from pathlib import Path
from typing import ClassVar

from arena.agents.base import Adapter, Budget, Progress, json_records

# The model provider Codex is given for a base_url (its OPENAI_BASE_URL is not read any more).
PROVIDER = "arena"


class CodexAdapter(Adapter):
    name: ClassVar[str] = "codex"
    binary: ClassVar[str] = "codex"
    completion_marker: ClassVar[str | None] = r'"type": ?"(turn\.completed|task_complete)"'
    # The record's own type, first on its line: an `item.completed` whose item is an "error"
    # (a warning such as "Model metadata for ... not found") is no failure, nor is a top-level
    # "error" that says it is reconnecting; a turn that failed is.
    provider_markers: ClassVar[tuple[str, ...]] = (r'^\{"type": ?"turn\.failed"',)
    credential_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY", "CODEX_API_KEY")
    provider_hosts: ClassVar[tuple[str, ...]] = ("api.openai.com:443",)

    def command(self, *, prompt: str, budget: Budget, home: Path) -> list[str]:
        argv = [
            self.program(),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
        ]
        if self.model:
            argv += ["--model", self.model]
        if self.effort:
            argv += ["-c", f"model_reasoning_effort={self.effort}"]
        return [*argv, *self.provider_options(), prompt]

    def provider_options(self) -> list[str]:
        """`-c` settings of a model provider at base_url, keyed by OPENAI_API_KEY."""
        url = self.base_url()
        if not url:
            return []
        settings = {
            "model_provider": PROVIDER,
            f"model_providers.{PROVIDER}.name": PROVIDER,
            f"model_providers.{PROVIDER}.base_url": f"{url}/v1",
            f"model_providers.{PROVIDER}.env_key": "OPENAI_API_KEY",
            f"model_providers.{PROVIDER}.wire_api": "responses",
        }
        return [word for k, v in settings.items() for word in ("-c", f"{k}={json.dumps(v)}")]

    def progress(self, *, log_path: Path, home: Path) -> Progress:
        """Model calls and tokens from the rollout's token_count events (cumulative totals)."""
        rollout = self.transcript(log_path=log_path, home=home, workspace=home)
        seen = self.__dict__.setdefault("_seen", {"turns": 0, "tokens": 0})
        for record in self.follow(rollout) if rollout != log_path else []:
            payload = record.get("payload")
            if not isinstance(payload, dict) or payload.get("type") != "token_count":
                continue
            info = payload.get("info")
            if not isinstance(info, dict):
                continue
            total = info.get("total_token_usage") or {}
            seen["turns"] += 1
            seen["tokens"] = int(total.get("total_tokens") or 0)
        return Progress(turns=seen["turns"], tokens=seen["tokens"])

    def prepare_home(self, *, home: Path, budget: Budget) -> None:
        # Codex stops at once when CODEX_HOME names a folder that does not exist.
        codex_home(home).mkdir(exist_ok=True)

    def env(self, *, home: Path, environ: dict[str, str]) -> dict[str, str]:
        return {**super().env(home=home, environ=environ), "CODEX_HOME": str(codex_home(home))}

    def transcript(self, *, log_path: Path, home: Path, workspace: Path) -> Path:
        session_id = codex_session_id(log_path)
        if session_id:
            found = sorted((codex_home(home) / "sessions").rglob(f"rollout-*{session_id}.jsonl"))
            if found:
                return found[-1]
        return log_path

    def error_report(self, *, tail: str) -> str:
        for record in reversed(json_records(tail)):
            if record.get("type") in ("error", "turn.failed"):
                error = record.get("error")
                message = error.get("message") if isinstance(error, dict) else record.get("message")
                return str(message or "")
        return ""


def codex_home(home: Path) -> Path:
    return home / ".codex"


def codex_session_id(log_path: Path) -> str:
    """The session id from the first events of `codex exec --json` (new and old spellings)."""
    with log_path.open("rb") as fh:
        head = fh.read(64 * 1024).decode("utf-8", errors="replace")
    for record in json_records(head):
        if record.get("type") == "thread.started" and record.get("thread_id"):
            return str(record["thread_id"])
        msg = record.get("msg")
        if isinstance(msg, dict) and msg.get("type") == "session_configured":
            return str(msg.get("session_id") or "")
    return ""
