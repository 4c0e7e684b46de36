"""Claude Code's command tags in a user message, read as the commands and output they stand for.

Claude Code records what the user typed at its prompt inside tags in the user message's text:
a slash command as `<command-name>/model</command-name><command-message>model
</command-message><command-args>opus</command-args>` and its output as
`<local-command-stdout>` / `<local-command-stderr>`; a `!` shell command as
`<bash-input>ls</bash-input>` and its output as `<bash-stdout>` / `<bash-stderr>`; the notice
it adds before such output as `<local-command-caveat>`; reminders it injects as
`<system-reminder>`. A closing tag may be missing where the text was cut. Anything else in the
message stays prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TAGS = (
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "system-reminder",
)
_TAG = re.compile(r"<(" + "|".join(TAGS) + r")>(.*?)(?:</\1>|\Z)", re.S)
_QUICK = tuple(f"<{tag}>" for tag in TAGS)


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of the message. kind: text | command | shell | stdout | stderr | caveat |
    reminder. `text` is raw: the renderer escapes it."""

    kind: str
    text: str


def has_command_tags(text: str) -> bool:
    return "<" in text and any(tag in text for tag in _QUICK)


def command_parts(text: str) -> list[Part]:
    """The message as parts in order; a slash command's name and arguments are one part."""
    parts: list[Part] = []
    fields: dict[str, str] = {}  # the name, message and arguments of the command being read
    position = 0
    for match in _TAG.finditer(text):
        between = text[position : match.start()]
        if between.strip():
            _flush_command(parts, fields)
            _add_text(parts, between)
        position = match.end()
        tag, body = match.group(1), match.group(2)
        if tag in _COMMAND_FIELDS:
            if tag in fields:
                _flush_command(parts, fields)
            fields[tag] = body.strip()
            continue
        _flush_command(parts, fields)
        if body.strip() or tag == "bash-input":
            parts.append(Part(_KINDS[tag], body.strip("\n")))
    _flush_command(parts, fields)
    _add_text(parts, text[position:])
    return parts


_COMMAND_FIELDS = ("command-name", "command-message", "command-args")
_KINDS = {
    "command-contents": "stdout",
    "local-command-stdout": "stdout",
    "local-command-stderr": "stderr",
    "local-command-caveat": "caveat",
    "bash-input": "shell",
    "bash-stdout": "stdout",
    "bash-stderr": "stderr",
    "system-reminder": "reminder",
}


def _add_text(parts: list[Part], text: str) -> None:
    if text.strip():
        parts.append(Part("text", text.strip("\n")))


def _flush_command(parts: list[Part], fields: dict[str, str]) -> None:
    if not fields:
        return
    name = fields.get("command-name") or fields.get("command-message") or ""
    if name and not name.startswith("/"):
        name = "/" + name
    line = " ".join(x for x in (name, fields.get("command-args", "")) if x)
    fields.clear()
    if line:
        parts.append(Part("command", line))


def command_summary(text: str) -> str:
    """A one-line reading of a tagged message (for the title and the outline)."""
    parts = command_parts(text)
    for kind in ("command", "shell", "text", "stdout", "stderr"):
        for part in parts:
            if part.kind == kind and part.text.strip():
                return ("!" + part.text if kind == "shell" else part.text).strip()
    return ""
