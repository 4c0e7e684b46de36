"""Unified diffs from every shape agents record file changes in, and a tracker of file contents.

Every diff here has `---`/`+++` headers and `@@ -a,b +c,d @@` hunk headers whose counts match
their bodies, so the renderer (and `patch`) can read them without guessing.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def diff_header(old_path: str | None, new_path: str | None) -> str:
    old = f"a/{old_path.lstrip('/')}" if old_path else "/dev/null"
    new = f"b/{new_path.lstrip('/')}" if new_path else "/dev/null"
    return f"--- {old}\n+++ {new}\n"


def split_lines(text: str) -> list[str]:
    """Lines without their endings; a trailing newline does not make an empty last line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def hunk_header(old_start: int, old_count: int, new_start: int, new_count: int) -> str:
    # An empty side starts at the line before the change (0 for a new file), as diff(1) writes.
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@\n"


def new_file_diff(path: str, content: str) -> str:
    lines = split_lines(content)
    body = "".join(f"+{line}\n" for line in lines)
    return diff_header(None, path) + hunk_header(0, 0, 1 if lines else 0, len(lines)) + body


def deleted_file_diff(path: str, content: str | None) -> str:
    lines = split_lines(content or "")
    body = "".join(f"-{line}\n" for line in lines)
    return diff_header(path, None) + hunk_header(1 if lines else 0, len(lines), 0, 0) + body


def text_diff(path: str, old: str, new: str, *, new_path: str | None = None) -> str:
    """A unified diff of two whole texts (3 lines of context)."""
    body = difflib.unified_diff(split_lines(old), split_lines(new), lineterm="", n=3)
    lines = [line for line in body if not line.startswith(("---", "+++"))]
    if not lines:
        return diff_header(path, new_path or path)
    return diff_header(path, new_path or path) + "".join(f"{line}\n" for line in lines)


def structured_patch_diff(path: str, hunks: Iterable[Any]) -> str:
    """Claude Code's toolUseResult.structuredPatch: hunks with their lines already prefixed."""
    out = [diff_header(path, path)]
    for hunk in hunks:
        if not isinstance(hunk, dict):
            continue
        lines = [str(line) for line in hunk.get("lines") or []]
        old_count, new_count = hunk_counts(lines)
        old_start = _int(hunk.get("oldStart"), 1)
        new_start = _int(hunk.get("newStart"), 1)
        out.append(hunk_header(old_start, old_count, new_start, new_count))
        out.extend(_prefixed(line) + "\n" for line in lines)
    return "".join(out)


def hunk_counts(lines: Iterable[str]) -> tuple[int, int]:
    """Old and new line counts of a hunk's body. A `\\ No newline at end of file` marker
    belongs to the line before it and is no line of either side."""
    old_count = new_count = 0
    for line in lines:
        mark = line[:1]
        if mark == "\\":
            continue
        old_count += mark != "+"
        new_count += mark != "-"
    return old_count, new_count


def with_header(path: str, diff: str, *, new_path: str | None = None) -> str:
    """A diff body (hunks only, as Codex and Cursor record them) with file headers added."""
    if diff.startswith("--- "):
        return diff if diff.endswith("\n") else diff + "\n"
    body = diff if diff.endswith("\n") else diff + "\n"
    return diff_header(path, new_path or path) + body


def apply_unified_diff(old: str, diff: str) -> str:
    """Apply a unified diff to a text, trusting its hunk headers; raises ValueError on mismatch."""
    source = split_lines(old)
    result: list[str] = []
    cursor = 0  # index into source of the next line not yet copied
    lines = diff.split("\n")
    i = 0
    while i < len(lines):
        match = _HUNK_HEADER.match(lines[i])
        i += 1
        if not match:
            continue
        old_start = int(match.group(1))
        old_count = int(match.group(2) if match.group(2) is not None else 1)
        start = old_start - 1 if old_count else old_start
        if start < cursor:
            raise ValueError(f"hunk at line {old_start} overlaps the previous one")
        result.extend(source[cursor:start])
        cursor = start
        while i < len(lines) and lines[i][:1] in (" ", "-", "+", "\\"):
            line = lines[i]
            i += 1
            if line[0] == "+":
                result.append(line[1:])
            elif line[0] in " -":
                if cursor >= len(source) or source[cursor] != line[1:]:
                    raise ValueError(f"diff does not apply at line {cursor + 1}: {line!r}")
                if line[0] == " ":
                    result.append(line[1:])
                cursor += 1
    result.extend(source[cursor:])
    return "".join(f"{line}\n" for line in result)


def _prefixed(line: str) -> str:
    # An empty context line is sometimes recorded without its leading space.
    return line if line[:1] in (" ", "+", "-", "\\") else " " + line


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) else default


class TrackedFiles:
    """File contents as the transcript reveals them, so later edits get true line numbers.

    Agents name one file both absolutely and relative to their working directory, so paths are
    keyed relative to `cwd` when they lie under it.
    """

    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = cwd
        self._contents: dict[str, str] = {}

    def key(self, path: str) -> str:
        cwd = (self.cwd or "").rstrip("/")
        if cwd and path.startswith(cwd + "/"):
            return path[len(cwd) + 1 :]
        return path[2:] if path.startswith("./") else path

    def get(self, path: str) -> str | None:
        return self._contents.get(self.key(path))

    def set(self, path: str, content: str) -> None:
        self._contents[self.key(path)] = content

    def forget(self, path: str) -> None:
        self._contents.pop(self.key(path), None)
