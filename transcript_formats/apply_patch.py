"""Codex's apply_patch envelope turned into proper unified diffs.

The envelope (`*** Begin Patch` / `*** Add File:` / `*** Update File:` / `*** Move to:` /
`*** Delete File:` / `@@ context` / `*** End of File` / `*** End Patch`) names no line numbers:
Codex finds each chunk by searching the file. We do the same against the file's content as
tracked through the transcript, so hunk headers carry the real line numbers. Where the content is
unknown the counts are still right but the hunks are numbered from line 1 in order, and the
result says so (`exact=False`) so that a better diff (patch_apply_end) can replace it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .diffs import (
    TrackedFiles,
    deleted_file_diff,
    diff_header,
    hunk_header,
    new_file_diff,
    split_lines,
)

BEGIN = "*** Begin Patch"
END = "*** End Patch"
_ENVELOPE = re.compile(r"\*\*\* Begin Patch\r?\n.*?(?:\*\*\* End Patch|\Z)", re.DOTALL)


@dataclass
class Chunk:
    context: str | None  # the text after `@@`, a line to seek before the chunk
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" " | "-" | "+", text)
    at_end: bool = False  # `*** End of File`: the chunk ends the file

    @property
    def old_lines(self) -> list[str]:
        return [text for op, text in self.lines if op != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for op, text in self.lines if op != "-"]


@dataclass
class FileOp:
    kind: str  # "add" | "delete" | "update"
    path: str
    move_to: str | None = None
    added_lines: list[str] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)


@dataclass
class FileDiff:
    kind: str
    path: str
    diff: str
    move_to: str | None = None
    exact: bool = True  # False: line numbers unknown (the file's content was not tracked)


def find_envelope(text: str) -> str | None:
    """The apply_patch envelope inside a tool call's input (raw, or inside a shell heredoc)."""
    match = _ENVELOPE.search(text)
    return match.group(0) if match else None


def parse_envelope(text: str) -> list[FileOp]:
    ops: list[FileOp] = []
    current: FileOp | None = None
    chunk: Chunk | None = None
    for line in text.replace("\r\n", "\n").rstrip("\n").split("\n"):
        if line.startswith(END):
            break
        if line.startswith(BEGIN):
            continue
        header = _file_header(line)
        if header is not None:
            current = FileOp(kind=header[0], path=header[1])
            ops.append(current)
            chunk = None
            continue
        if current is None:
            continue
        if line.startswith("*** Move to:"):
            current.move_to = line[len("*** Move to:") :].strip()
        elif line.startswith("*** End of File"):
            if chunk is not None:
                chunk.at_end = True
        elif current.kind == "add":
            if line.startswith("+"):
                current.added_lines.append(line[1:])
        elif current.kind == "update":
            if line.startswith("@@"):
                chunk = Chunk(context=line[2:].strip() or None)
                current.chunks.append(chunk)
                continue
            if chunk is None:
                chunk = Chunk(context=None)
                current.chunks.append(chunk)
            if line[:1] in (" ", "-", "+"):
                chunk.lines.append((line[0], line[1:]))
            else:
                # Models often drop the leading space of an empty context line; Codex allows it.
                chunk.lines.append((" ", line))
    return ops


def _file_header(line: str) -> tuple[str, str] | None:
    for prefix, kind in (
        ("*** Add File:", "add"),
        ("*** Delete File:", "delete"),
        ("*** Update File:", "update"),
    ):
        if line.startswith(prefix):
            return kind, line[len(prefix) :].strip()
    return None


def envelope_to_diffs(text: str, files: TrackedFiles) -> list[FileDiff]:
    """One unified diff per file the envelope touches; `files` is updated as the patch applies."""
    return [_op_diff(op, files) for op in parse_envelope(text)]


def _op_diff(op: FileOp, files: TrackedFiles) -> FileDiff:
    if op.kind == "add":
        content = "".join(f"{line}\n" for line in op.added_lines)
        files.set(op.path, content)
        return FileDiff("add", op.path, new_file_diff(op.path, content))
    if op.kind == "delete":
        diff = deleted_file_diff(op.path, files.get(op.path))
        exact = files.get(op.path) is not None
        files.forget(op.path)
        return FileDiff("delete", op.path, diff, exact=exact)
    return _update_diff(op, files)


def _update_diff(op: FileOp, files: TrackedFiles) -> FileDiff:
    content = files.get(op.path)
    header = diff_header(op.path, op.move_to or op.path)
    if content is not None:
        located = _locate_chunks(split_lines(content), op.chunks)
        if located is not None:
            lines, starts = located
            body, new_lines = _hunks(op.chunks, starts, lines)
            files.forget(op.path)
            files.set(op.move_to or op.path, "".join(f"{x}\n" for x in new_lines))
            return FileDiff("update", op.path, header + body, move_to=op.move_to)
    files.forget(op.path)
    return FileDiff(
        "update", op.path, header + _approximate_hunks(op.chunks), move_to=op.move_to, exact=False
    )


def _locate_chunks(lines: list[str], chunks: list[Chunk]) -> tuple[list[str], list[int]] | None:
    """0-based start of each chunk's old lines in the file, searching forward as Codex does."""
    starts: list[int] = []
    cursor = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = _seek(lines, [chunk.context], cursor, at_end=False)
            if found is None:
                return None
            cursor = found + 1
        old = chunk.old_lines
        if not old:
            starts.append(len(lines))  # a pure insertion goes at the end of the file
            continue
        found = _seek(lines, old, cursor, at_end=chunk.at_end)
        if found is None:
            return None
        starts.append(found)
        cursor = found + len(old)
    return lines, starts


def _seek(lines: list[str], pattern: list[str], start: int, *, at_end: bool) -> int | None:
    """Find `pattern` from `start`: exactly, then ignoring trailing, then all surrounding spaces."""
    span = len(pattern)
    if at_end and len(lines) - span >= start:
        candidates: list[int] = [len(lines) - span, *range(start, len(lines) - span + 1)]
    else:
        candidates = list(range(start, len(lines) - span + 1))
    normalizers: tuple[Callable[[str], str], ...] = (_same, str.rstrip, str.strip)
    for normalize in normalizers:
        wanted = [normalize(p) for p in pattern]
        for i in candidates:
            if all(normalize(lines[i + k]) == wanted[k] for k in range(span)):
                return i
    return None


def _same(text: str) -> str:
    return text


def _hunks(chunks: list[Chunk], starts: list[int], lines: list[str]) -> tuple[str, list[str]]:
    out: list[str] = []
    result: list[str] = []
    copied = 0  # lines of the original already copied into result
    for chunk, start in sorted(zip(chunks, starts, strict=True), key=lambda pair: pair[1]):
        old_count = len(chunk.old_lines)
        new_count = len(chunk.new_lines)
        result.extend(lines[copied:start])
        new_start = len(result)
        # An empty side is numbered by the line before it, as diff(1) writes it.
        old_no = start + 1 if old_count else start
        new_no = new_start + 1 if new_count else new_start
        out.append(hunk_header(old_no, old_count, new_no, new_count))
        # Body lines use the file's own text for context/removals (the envelope may differ in
        # whitespace, which the search forgave), so that the diff applies to the file exactly.
        k = start
        for op, text in chunk.lines:
            if op == "+":
                out.append(f"+{text}\n")
                result.append(text)
            else:
                original = lines[k]
                k += 1
                out.append(f"{op}{original}\n")
                if op == " ":
                    result.append(original)
        copied = start + old_count
    result.extend(lines[copied:])
    return "".join(out), result


def _approximate_hunks(chunks: list[Chunk]) -> str:
    out: list[str] = []
    old_line = new_line = 1
    for chunk in chunks:
        old_count, new_count = len(chunk.old_lines), len(chunk.new_lines)
        out.append(
            hunk_header(
                old_line if old_count else old_line - 1,
                old_count,
                new_line if new_count else new_line - 1,
                new_count,
            )
        )
        out.extend(f"{op}{text}\n" for op, text in chunk.lines)
        old_line += old_count
        new_line += new_count
    return "".join(out)
