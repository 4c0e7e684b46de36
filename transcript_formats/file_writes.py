"""The file writes one tool call makes, read from its arguments and the parser's file changes.

Each format names its file tools its own way (Write, write_file, create, WriteFile, edit,
replace, StrReplaceFile, search_replace, str_replace_editor, apply_patch, patch...), but their
arguments come in few shapes: a path and the whole text; a path and old/new strings (alone, in
a list, or in Kimi's `edit`); an apply_patch envelope; a shell command. Reading the shapes rather
than the names covers every parser here and plain message lists alike. Where the arguments hold
no text (Cursor's edit, a file change Codex's exec stream names without a diff), the parser's
file_change events are the write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .apply_patch import BEGIN, find_envelope
from .disk_texts import plain_str
from .schema import Event
from .shell_writes import ShellWrite, shell_script, shell_writes

# Argument names, in the order they are tried, across the parsers' tools.
PATH_KEYS = ("file_path", "filePath", "path", "target_file", "absolute_path", "filename")
CONTENT_KEYS = ("content", "file_text", "contents", "fileText")
OLD_NEW_KEYS = (
    ("old_string", "new_string"),
    ("oldString", "newString"),
    ("old_str", "new_str"),
    ("old_text", "new_text"),
    ("oldText", "newText"),
    ("old", "new"),
)
FOLDER_KEYS = ("workdir", "cwd", "working_directory", "workingDirectory", "directory")
COMMAND_KEYS = ("command", "cmd")
# A tool whose name holds none of these is not taken for a file tool, whatever its arguments:
# a memory tool's {path, content} writes no file.
_FILE_TOOL_WORDS = ("write", "create", "edit", "replace", "patch", "save", "delete", "remove")
_SHELL_TOOL_WORDS = ("shell", "bash", "exec", "terminal", "command", "cmd")
# What harnesses answer for a call they did not run: Claude Code ("The user doesn't want to
# proceed", "Permission to use Bash has been denied", "[Request interrupted by user"), OpenCode
# and Codex ("rejected"), Gemini CLI ("cancelled"). A refusal is short; a long output ran.
_REFUSAL = re.compile(
    r"rejected|doesn't want to proceed|permission to use|request interrupted|cancell?ed", re.I
)
REFUSAL_MAX_CHARS = 1000


@dataclass(frozen=True, slots=True)
class Replacement:
    old: str
    new: str
    every: bool = False  # every occurrence (replace_all), not only the first


@dataclass(frozen=True, slots=True)
class FileOp:
    """One change to one file (a patch may touch several).

    kind: "write" / "append" (`text`), "edit" (`edits`, with the parser's `diffs` to fall back
    on), "insert" (`text` after line `line`), "patch" (an apply_patch envelope in `text`),
    "diff" (`diffs` alone), "copy" / "move" (from `source`), "delete", "unknown" (written with
    text the log does not hold), "script" (a program that may write any file it names: its
    code in `text` or its file in `source`).
    """

    kind: str
    path: str = ""  # as the agent named it; empty for a patch or a script
    text: str | None = None
    edits: tuple[Replacement, ...] = ()
    diffs: tuple[tuple[str, str], ...] = ()  # (path, unified diff) the parser recorded
    source: str | None = None
    line: int = 0
    folder: str | None = None  # what a relative path is relative to, when the tool says
    how: str = ""  # the tool or the command, for messages
    pattern: bool = False  # the path holds a glob or a variable


def ops_of_call(call: Event, result: Event | None, changes: Sequence[Event]) -> list[FileOp]:
    """The writes of a tool call, given its result and the file changes the parser placed with
    it. A file tool that failed wrote nothing; a shell command's writes count whatever its exit
    status (a heredoc before a failing test has been written) unless it was refused."""
    args, name = plain_str(call.arguments), call.tool_name or "?"
    recorded = tuple((c.path, c.diff) for c in changes if c.path and c.diff and not c.is_error)
    failed = (result is not None and result.is_error) or any(c.is_error for c in changes)
    folder = _first_str(args, FOLDER_KEYS)
    script = _shell_script(name, args)
    envelope = _envelope(args, name, script)
    if envelope is not None:
        patch = FileOp("patch", text=envelope, diffs=recorded, folder=folder, how=name)
        return [] if failed else [patch]
    if script is not None:
        writes = [] if _refused(result) else shell_writes(script)
        return [_shell_op(w, folder) for w in writes]
    if failed:
        return []
    ops = _file_tool_ops(name, args, recorded)
    return ops or [op for change in changes for op in ops_of_change(change)]


def ops_of_change(change: Event) -> list[FileOp]:
    """A file change the parser recorded: its diff, or a deletion, or (no diff) unknown text."""
    if change.is_error or not change.path:
        return []
    how = change.tool_name or "a tool"
    diff = change.diff or ""
    if "\n+++ /dev/null" in diff or (not diff and change.text == "delete"):
        return [FileOp("delete", change.path, how=how)]
    if not diff.strip():
        return [FileOp("unknown", change.path, how=how)]
    return [FileOp("diff", change.path, diffs=((change.path, diff),), how=how)]


def _refused(result: Event | None) -> bool:
    """A shell call the harness or the user refused never ran (a failing command did run)."""
    return (
        result is not None
        and result.is_error
        and len(result.text) < REFUSAL_MAX_CHARS
        and _REFUSAL.search(plain_str(result.text)) is not None
    )


def _envelope(args: Any, name: str, script: str | None) -> str | None:
    """The apply_patch envelope a patch tool, or `apply_patch` run in a shell, applies (an
    envelope inside a file another tool writes is that file's text)."""
    if "patch" not in name.lower() and "apply_patch" not in (script or ""):
        return None
    text = _strings(args)
    return find_envelope(text) if BEGIN in text else None


def _strings(value: Any) -> str:
    """Every string inside a call's arguments, so an envelope inside a shell heredoc is found."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return ""


def _shell_script(name: str, args: Any) -> str | None:
    if not any(word in name.lower() for word in _SHELL_TOOL_WORDS):
        return None
    command = args if isinstance(args, (str, list)) else None
    if isinstance(args, dict):
        command = next((args[k] for k in COMMAND_KEYS if k in args), None)
    return shell_script(command)


def _shell_op(write: ShellWrite, folder: str | None) -> FileOp:
    return FileOp(
        write.kind,
        write.path,
        text=write.text,
        source=write.source,
        folder=folder,
        how=f"`{write.command}`" if write.command else "a shell command",
        pattern=write.pattern,
    )


def _file_tool_ops(name: str, args: Any, recorded: tuple[tuple[str, str], ...]) -> list[FileOp]:
    path = _first_str(args, PATH_KEYS)
    if path is None or not any(word in name.lower() for word in _FILE_TOOL_WORDS):
        return []
    assert isinstance(args, dict)
    command = args.get("command")  # str_replace_editor: create | str_replace | insert | view...
    if command == "view":
        return []
    if command == "undo_edit":
        return [FileOp("unknown", path, how=name)]
    if command == "insert":
        return _insert(name, path, args, recorded)
    return _write_or_edit(name, path, args, recorded)


def _insert(
    name: str, path: str, args: dict[str, Any], recorded: tuple[tuple[str, str], ...]
) -> list[FileOp]:
    text = _first_str(args, ("new_str", "text"), empty=True)
    line = args.get("insert_line")
    if text is None or not isinstance(line, int) or line < 0:
        return []
    return [FileOp("insert", path, text=text, line=line, how=name, diffs=recorded)]


def _write_or_edit(
    name: str, path: str, args: dict[str, Any], recorded: tuple[tuple[str, str], ...]
) -> list[FileOp]:
    content = _first_str(args, CONTENT_KEYS, empty=True)
    if content is not None:
        append = args.get("mode") == "append" or args.get("append") is True
        return [FileOp("append" if append else "write", path, text=content, how=name)]
    edits = replacements(args)
    if edits:
        return [FileOp("edit", path, edits=edits, diffs=recorded, how=name)]
    if "delete" in name.lower() or "remove" in name.lower():
        return [FileOp("delete", path, how=name)]
    return []


def replacements(args: dict[str, Any]) -> tuple[Replacement, ...]:
    """Old/new pairs: at the top level, or a list under `edits` (MultiEdit, multiedit), or
    Kimi's `edit` (one pair or a list)."""
    pair = _pair(args)
    if pair is not None:
        return (pair,)
    items = args.get("edits", args.get("edit"))
    items = [items] if isinstance(items, dict) else items
    if not isinstance(items, list):
        return ()
    pairs = [_pair(item) for item in items if isinstance(item, dict)]
    return tuple(p for p in pairs if p is not None)


def _pair(args: dict[str, Any]) -> Replacement | None:
    for old_key, new_key in OLD_NEW_KEYS:
        old, new = args.get(old_key), args.get(new_key)
        if isinstance(old, str) and isinstance(new, str | None):
            return Replacement(old, new or "", every=_every(args))
    return None


def _every(args: dict[str, Any]) -> bool:
    # Gemini's replace changes every occurrence once their count is the one expected.
    expected = args.get("expected_replacements")
    return (
        args.get("replace_all") is True
        or args.get("replaceAll") is True
        or (isinstance(expected, int) and expected > 1)
    )


def _first_str(args: Any, keys: tuple[str, ...], *, empty: bool = False) -> str | None:
    """The first of `keys` that holds a string (an empty one only where `empty`: a file may be
    written empty, but an empty path names nothing)."""
    if not isinstance(args, dict):
        return None
    found = (args[k] for k in keys if isinstance(args.get(k), str) and (empty or args[k]))
    return next(found, None)
