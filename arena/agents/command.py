"""Any agent CLI, from a command template.

    {"template": "mycli run --model {model} --prompt-file {prompt_file}",
     "log": "stdout",                     # or a path the CLI writes, relative to the workspace
     "completion_marker": "^DONE$",       # optional regexes over the log
     "provider_error_marker": "PROVIDER_ERROR",
     "budget_marker": "out of turns",
     "env": ["MYCLI_API_KEY"]}            # variables passed through from the worker

The template is split like a shell line first and each word filled in afterwards, so a
prompt never becomes shell syntax. Placeholders: {prompt}, {prompt_file}, {model}, {effort},
{max_turns}, {max_tokens}, {max_cost_usd}, {wall_clock_s}, {workspace}, {home}.
"""

import re
import shlex
from pathlib import Path
from typing import Any, ClassVar

from arena.agents.base import Adapter, AdapterError, Budget

PLACEHOLDERS = (
    "prompt",
    "prompt_file",
    "model",
    "effort",
    "max_turns",
    "max_tokens",
    "max_cost_usd",
    "wall_clock_s",
    "workspace",
    "home",
)
OPTIONS = (
    "template",
    "log",
    "completion_marker",
    "provider_error_marker",
    "budget_marker",
    "env",
    "allow_hosts",
)
PROMPT_FILE = "PROMPT.md"


class CommandAdapter(Adapter):
    name: ClassVar[str] = "command"

    def __post_init__(self) -> None:
        unknown = sorted(set(self.options) - set(OPTIONS) - {"budget", "sandbox"})
        if unknown:
            raise AdapterError(f"command agent: unknown option {unknown[0]!r}")
        self.words = self._template_words()
        for key in ("completion_marker", "provider_error_marker", "budget_marker"):
            self._compile(key)

    def _template_words(self) -> list[str]:
        template = self.options.get("template")
        if not isinstance(template, str) or not template.strip():
            raise AdapterError("command agent: option 'template' (the command line) is missing")
        try:
            words = shlex.split(template)
        except ValueError as exc:
            raise AdapterError(f"command agent: template: {exc}") from None
        for word in words:
            for name in re.findall(r"\{(\w*)\}", word):
                if name not in PLACEHOLDERS:
                    raise AdapterError(f"command agent: template: unknown placeholder {{{name}}}")
        return words

    def _compile(self, key: str) -> re.Pattern[str] | None:
        value = self.options.get(key)
        if value is None:
            return None
        try:
            return re.compile(str(value), re.M)
        except re.error as exc:
            raise AdapterError(f"command agent: {key}: not a regular expression: {exc}") from None

    def program(self) -> str:
        return self.words[0]

    def command(self, *, prompt: str, budget: Budget, home: Path) -> list[str]:
        values: dict[str, Any] = {
            "prompt": prompt,
            "prompt_file": PROMPT_FILE,
            "model": self.model,
            "effort": self.effort,
            "workspace": ".",
            "home": str(home),
            **{k: "" if v is None else f"{v:g}" for k, v in budget.to_dict().items()},
        }
        return [re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), w) for w in self.words]

    @property
    def completion_marker(self) -> str | None:  # type: ignore[override]
        return self.options.get("completion_marker")

    @property
    def provider_markers(self) -> tuple[str, ...]:  # type: ignore[override]
        marker = self.options.get("provider_error_marker")
        return (marker,) if marker else ()

    @property
    def budget_markers(self) -> tuple[str, ...]:  # type: ignore[override]
        marker = self.options.get("budget_marker")
        return (marker,) if marker else ()

    def env(self, *, home: Path, environ: dict[str, str]) -> dict[str, str]:
        names = self.options.get("env") or []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise AdapterError("command agent: option 'env' must be a list of variable names")
        return {n: environ[n] for n in names if n in environ}

    def log_in_workspace(self) -> str | None:
        """The log's path relative to the workspace, or None when the log is stdout."""
        log = self.options.get("log", "stdout")
        if log == "stdout":
            return None
        if not isinstance(log, str) or Path(log).is_absolute() or ".." in Path(log).parts:
            raise AdapterError("command agent: option 'log' must be stdout or a relative path")
        return log

    def transcript(self, *, log_path: Path, home: Path, workspace: Path) -> Path:
        relative = self.log_in_workspace()
        return workspace / relative if relative else log_path

    def marker_log(self, *, log_path: Path, workspace: Path) -> Path:
        return self.transcript(log_path=log_path, home=workspace, workspace=workspace)
