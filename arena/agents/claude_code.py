"""Claude Code: `claude -p --output-format stream-json --verbose`, permissions bypassed.

Inside the sandbox nobody is there to approve a tool call, so permissions are skipped; the
sandbox, not the CLI, is what keeps the agent in its workspace. The log is stdout. The run ends
with one `result` record; its subtype says whether the turn budget ran out
(`error_max_turns`) and `is_error` with its text reports the provider's errors.
"""

from pathlib import Path
from typing import ClassVar

from arena.agents.base import Adapter, Budget, json_records

# Claude Code turns a model name into thinking tokens only through this variable.
EFFORT_THINKING_TOKENS = {"low": "4000", "medium": "16000", "high": "31999"}


class ClaudeCodeAdapter(Adapter):
    name: ClassVar[str] = "claude-code"
    binary: ClassVar[str] = "claude"
    completion_marker: ClassVar[str | None] = r'^\{.*"type": ?"result"'
    budget_markers: ClassVar[tuple[str, ...]] = (r'"subtype": ?"error_max_(turns|budget\w*)"',)
    credential_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
    enforced_by_cli: ClassVar[frozenset[str]] = frozenset({"max_turns", "max_cost_usd"})
    provider_hosts: ClassVar[tuple[str, ...]] = ("api.anthropic.com:443",)

    def command(self, *, prompt: str, budget: Budget, home: Path) -> list[str]:
        argv = [
            self.program(),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
        ]
        if self.model:
            argv += ["--model", self.model]
        if budget.max_turns:
            argv += ["--max-turns", str(budget.max_turns)]
        if budget.max_cost_usd:
            argv += ["--max-budget-usd", f"{budget.max_cost_usd:g}"]
        return argv

    def env(self, *, home: Path, environ: dict[str, str]) -> dict[str, str]:
        env = super().env(home=home, environ=environ)
        # No auto-updater, telemetry or error reporting from inside a sandbox.
        env["DISABLE_AUTOUPDATER"] = "1"
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        if self.effort in EFFORT_THINKING_TOKENS:
            env["MAX_THINKING_TOKENS"] = EFFORT_THINKING_TOKENS[self.effort]
        return env

    def error_report(self, *, tail: str) -> str:
        return stream_json_error(tail)


def stream_json_error(tail: str) -> str:
    """The text of a stream-json `result` record marked is_error (Claude Code, Cursor)."""
    for record in reversed(json_records(tail)):
        if record.get("type") == "result":
            return (
                str(record.get("result") or record.get("error") or "")
                if record.get("is_error")
                else ""
            )
    return ""
