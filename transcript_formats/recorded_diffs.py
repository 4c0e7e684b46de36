"""Unified diffs as agents record them, made exact: git's `diff --git`/`index` lines and jsdiff's
`Index:`/`====` lines dropped, the file headers rewritten for the path the tool named, and each
hunk header's counts taken from its body (a recorded diff may be cut short or hand-edited)."""

from __future__ import annotations

import re

from .diffs import diff_header, hunk_header

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
_BODY_MARKS = (" ", "-", "+", "\\")


def exact_diff(text: str, path: str, *, new_file: bool = False) -> str | None:
    """The diff's hunks under `--- a/path` / `+++ b/path` headers (`/dev/null` for a new file),
    or None when the text holds no hunk."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _HUNK.match(lines[i])
        i += 1
        if not match:
            continue
        body: list[str] = []
        while i < len(lines) and lines[i][:1] in _BODY_MARKS and not _HUNK.match(lines[i]):
            if lines[i].startswith(("--- ", "+++ ")) and _next_is_header(lines, i):
                break
            body.append(lines[i])
            i += 1
        while body and body[-1] == "":
            body.pop()
        old_count = sum(1 for line in body if line[:1] in (" ", "-"))
        new_count = sum(1 for line in body if line[:1] in (" ", "+"))
        if not body:
            continue
        old_start, new_start = int(match.group(1)), int(match.group(2))
        if new_file:
            old_start = 0  # git writes -1,0 for a new file; diff(1) and we write -0,0
        out.append(hunk_header(old_start, old_count, new_start, new_count))
        out.extend(f"{line}\n" for line in body)
    if not out:
        return None
    return diff_header(None if new_file else path, path) + "".join(out)


def _next_is_header(lines: list[str], i: int) -> bool:
    # A `--- ` line is a file header only when a `+++ ` line follows it (else it is a removed
    # line that began with "-- ").
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
