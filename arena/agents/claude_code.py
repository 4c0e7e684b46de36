"""Claude Code: `claude -p --output-format stream-json --verbose`, permissions bypassed.

Inside the sandbox nobody is there to approve a tool call, so permissions are skipped; the
sandbox, not the CLI, is what keeps the agent in its workspace. Claude Code refuses to skip them
as root, so the sandbox runs it as an unprivileged user (Limits.user). stdout is a stream of
records that ends with one `result`: its subtype says whether the turn budget ran out
(`error_max_turns`) and `is_error` with its text reports the provider's errors. The transcript
imported is the session log the CLI writes itself, $HOME/.claude/projects/<cwd>/<session>.jsonl
(the session id is in stdout's first record); stdout where there is none. The CLI has no token
limit: the arena reads the tokens spent from both logs while it runs (`progress`).
"""

from pathlib import Path
from typing import Any, ClassVar

from arena.agents.base import Adapter, Budget, Progress, json_records, read_head

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
        if self.base_url():
            env["ANTHROPIC_BASE_URL"] = self.base_url()
        if self.effort in EFFORT_THINKING_TOKENS:
            env["MAX_THINKING_TOKENS"] = EFFORT_THINKING_TOKENS[self.effort]
        return env

    def transcript(self, *, log_path: Path, home: Path, workspace: Path) -> Path:
        session_id = stream_json_session_id(log_path)
        if session_id:
            found = sorted((home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
            if found:
                return found[-1]
        return log_path

    def progress(self, *, log_path: Path, home: Path) -> Progress:
        """Model calls and their tokens, each call counted once, at the most its logs say:
        stdout has a call's usage as its stream began (output_tokens 1), the session log the
        usage its stream ended with."""
        usage: dict[str, int] = self.__dict__.setdefault("_usage", {})
        session = self.transcript(log_path=log_path, home=home, workspace=home)
        for source in dict.fromkeys([log_path, session]):
            for record in self.follow(source):
                message = record.get("message") if record.get("type") == "assistant" else None
                if isinstance(message, dict) and message.get("id"):
                    # One line per content block, each with the call's usage.
                    key = str(message["id"])
                    usage[key] = max(usage.get(key, 0), usage_tokens(message.get("usage")))
        return Progress(turns=len(usage), tokens=sum(usage.values()))

    def error_report(self, *, tail: str) -> str:
        return stream_json_error(tail)


def usage_tokens(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    names = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    return sum(int(usage.get(n) or 0) for n in names if isinstance(usage.get(n) or 0, int))


def stream_json_session_id(log_path: Path) -> str:
    for record in json_records(read_head(log_path)):
        if record.get("session_id"):
            return str(record["session_id"])
    return ""


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
