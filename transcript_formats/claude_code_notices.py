"""Readable text for the Claude Code 2.1 records that are neither messages nor tool calls.

`attachment` records carry what the harness adds to the model's context or reports beside it:
hook runs (`hook_success`, `hook_blocking_error`, `hook_additional_context`, ...), attached
files and memory (`file`, `nested_memory`, ...), todo and task reminders, diagnostics, tool
lists (`deferred_tools_delta`), plan-mode reminders and queued messages (`queued_command`, a
prompt the user typed while the agent worked). Session records (`permission-mode`, `mode`,
`agent-setting`, `worktree-state`, `pr-link`, `task-summary`, `content-replacement`,
`marble-origami-commit`, `speculation-accept`, `cost-state`) say how the session was set up or
changed. Each becomes a notice whose text says what it is; any field may be missing or of the
wrong type, and long content is cut.
"""

from __future__ import annotations

import json
from typing import Any

# Past this, a notice's detail is cut: a listing of a hundred tools or a pasted file is noise.
DETAIL_CAP_CHARS = 2_000

# The fields every record repeats; the rest is what a session record says.
_ENVELOPE = frozenset(
    {
        "type",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "sessionId",
        "timestamp",
        "cwd",
        "version",
        "gitBranch",
        "isSidechain",
        "userType",
        "entrypoint",
        "slug",
        "agentId",
        "promptId",
    }
)

# Session record type -> what a reader calls it.
SESSION_RECORDS = {
    "permission-mode": "Permission mode",
    "mode": "Mode",
    "agent-setting": "Agent setting",
    "worktree-state": "Worktree",
    "pr-link": "Pull request",
    "task-summary": "Task summary",
    "content-replacement": "Tool output replaced in the context",
    "marble-origami-commit": "Context collapsed",
    "speculation-accept": "Speculative response accepted",
    "cost-state": "Cost as Claude Code reckoned it",
}

_HOOK_LABELS = {
    "hook_success": "ran",
    "hook_additional_context": "added context",
    "hook_system_message": "said",
    "hook_blocking_error": "blocked the action",
    "hook_non_blocking_error": "failed",
    "hook_error_during_execution": "failed while running",
    "hook_cancelled": "was cancelled",
    "hook_stopped_continuation": "stopped the agent",
    "hook_permission_decision": "decided a permission",
}
_HOOK_ERRORS = frozenset(
    {
        "hook_blocking_error",
        "hook_non_blocking_error",
        "hook_error_during_execution",
        "hook_cancelled",
        "hook_stopped_continuation",
    }
)
_FILE_LABELS = {
    "file": "File attached",
    "directory": "Folder attached",
    "already_read_file": "File attached (already read)",
    "compact_file_reference": "File referenced",
    "pdf_reference": "PDF referenced",
    "nested_memory": "Memory file loaded",
    "edited_text_file": "File changed outside the agent",
    "edited_image_file": "Image changed outside the agent",
    "selected_lines_in_ide": "Lines selected in the IDE",
    "opened_file_in_ide": "File opened in the IDE",
}


def attachment_notice(attachment: Any) -> tuple[str, bool]:
    """(text, is_error) for an `attachment` record's payload."""
    if not isinstance(attachment, dict):
        return f"Attachment: {_cut(_flat(attachment))}", False
    kind = str(attachment.get("type") or "attachment")
    if kind.startswith("hook_"):
        return _hook(kind, attachment), kind in _HOOK_ERRORS
    if kind in _FILE_LABELS:
        where = attachment.get("filename") or attachment.get("path") or attachment.get("filePath")
        text = f"{_FILE_LABELS[kind]}: {_flat(where)}" if where else _FILE_LABELS[kind]
        return _with_detail(text, attachment.get("content")), False
    if kind in ("todo_reminder", "task_reminder", "todo"):
        items = attachment.get("content") or attachment.get("todos") or attachment.get("tasks")
        return _with_detail(f"{_title(kind)} ({_items(items, 'item')})", items), False
    if kind == "diagnostics":
        files = attachment.get("files")
        return _with_detail(f"Diagnostics ({_items(files, 'file')})", files), False
    if kind.startswith("deferred_tools"):
        names = attachment.get("addedNames") or attachment.get("names") or attachment.get("tools")
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            return _cut("Tools made available: " + ", ".join(names)), False
    return _with_detail(_title(kind), _detail_of(attachment)), False


def queued_prompt(attachment: Any) -> str | None:
    """The text of a `queued_command` attachment (a prompt typed while the agent worked)."""
    if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
        return None
    prompt = attachment.get("prompt")
    if isinstance(prompt, list):
        prompt = "\n".join(
            str(b.get("text")) for b in prompt if isinstance(b, dict) and b.get("type") == "text"
        )
    return prompt if isinstance(prompt, str) and prompt.strip() else None


def session_notice(record: dict[str, Any]) -> str:
    """The text of a session record (`permission-mode`, `worktree-state`, ...)."""
    kind = str(record.get("type"))
    label = SESSION_RECORDS.get(kind, _title(kind))
    if kind == "cost-state" and isinstance(record.get("totalCostUSD"), (int, float)):
        return f"{label}: ${record['totalCostUSD']:.4f} so far"
    worktree = record.get("worktreeSession")
    if kind == "worktree-state" and isinstance(worktree, dict):
        name = worktree.get("worktreeName") or worktree.get("worktreePath") or "?"
        path = worktree.get("worktreePath")
        where = f" at {_flat(path)}" if path and path != name else ""
        return _cut(f"{label}: {_flat(name)}{where}")
    if kind == "pr-link" and record.get("prUrl"):
        number = record.get("prNumber")
        named = f"{label} #{number}" if isinstance(number, (int, str)) else label
        return f"{named}: {_cut(_flat(record.get('prUrl')))}"
    fields = {k: v for k, v in record.items() if k not in _ENVELOPE}
    if len(fields) == 1:
        return f"{label}: {_cut(_flat(next(iter(fields.values()))))}"
    return _with_detail(label, fields or None)


def setting_value(record: dict[str, Any]) -> str:
    """What a session record says, to show it only where it changes."""
    return json.dumps(
        {k: v for k, v in record.items() if k not in _ENVELOPE}, sort_keys=True, default=str
    )


def _hook(kind: str, attachment: dict[str, Any]) -> str:
    name = attachment.get("hookName") or attachment.get("hookEvent") or "hook"
    text = f"Hook {_flat(name)} {_HOOK_LABELS.get(kind, kind[5:].replace('_', ' '))}"
    facts = []
    if isinstance(attachment.get("exitCode"), int):
        facts.append(f"exit {attachment['exitCode']}")
    if isinstance(attachment.get("durationMs"), (int, float)):
        facts.append(f"{attachment['durationMs']:,} ms")
    if facts:
        text += f" ({', '.join(facts)})"
    blocking = attachment.get("blockingError")
    if isinstance(blocking, dict):
        blocking = blocking.get("blockingError")
    parts = [
        blocking,
        attachment.get("content"),
        attachment.get("stdout"),
        attachment.get("stderr"),
    ]
    detail = "\n".join(_flat(p) for p in parts if p not in (None, "", []))
    return _with_detail(text, detail or None)


def _detail_of(attachment: dict[str, Any]) -> Any:
    for key in ("content", "prompt", "text", "message", "tools", "addedNames", "names"):
        if attachment.get(key) not in (None, "", []):
            return attachment[key]
    rest = {k: v for k, v in attachment.items() if k != "type"}
    return rest or None


def _with_detail(text: str, detail: Any) -> str:
    if detail in (None, "", [], {}):
        return text
    return f"{text}\n{_cut(_flat(detail))}"


def _flat(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(value)
    if isinstance(value, list) and value and all(_is_item(item) for item in value):
        return "\n".join(f"- {item['content']} ({item.get('status') or '?'})" for item in value)
    content = value.get("content") if isinstance(value, dict) else None
    if isinstance(content, str):
        return content
    return json.dumps(value, ensure_ascii=False, default=str)


def _is_item(item: Any) -> bool:
    """A todo or task: {"content": ..., "status": ...}."""
    return isinstance(item, dict) and isinstance(item.get("content"), str)


def _cut(text: str) -> str:
    if len(text) <= DETAIL_CAP_CHARS:
        return text
    return text[:DETAIL_CAP_CHARS] + f"... [{len(text) - DETAIL_CAP_CHARS:,} more characters]"


def _title(kind: str) -> str:
    words = kind.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:] if words else "Attachment"


def _items(items: Any, word: str) -> str:
    count = len(items) if isinstance(items, (list, dict)) else 0
    return f"{count} {word}" + ("" if count == 1 else "s")
