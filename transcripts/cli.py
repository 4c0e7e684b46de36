"""`python -m transcripts`: inspect a log's counts, take the kernel its agent last wrote, or
render it to one self-contained HTML file.

Needs no Django: it uses only transcript_formats (and transcript_render for `render`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transcript_formats import ArchiveLimits, Transcript, TranscriptFormatError, parse_path
from transcript_formats.archives import DEFAULT_LIMITS
from transcript_formats.counts import transcript_counts
from transcript_formats.written_files import (
    FileNotWritten,
    WrittenFile,
    file_from_transcript,
    solution_from_transcript,
)
from transcript_render.export import export_to

# A workspace file larger than this is not source an agent edits (nor read whole).
WORKSPACE_FILE_MAX_BYTES = 1 << 20


def summary(transcript: Transcript) -> dict[str, Any]:
    """The counts `inspect --json` prints: everything found, subagents included."""
    counts = transcript_counts(transcript)
    usage = transcript.usage(include_subagents=True)
    return {
        "format": transcript.format,
        "threads": len(transcript.threads),
        "turns": counts.turns,
        "tool_calls": counts.tool_calls,
        "file_changes": counts.file_changes,
        "subagents": counts.subagents,
        "malformed_lines": len(transcript.malformed),
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "cost_usd": transcript.cost_usd,
        "cost_computed": transcript.cost_computed,
    }


def _readable(transcript: Transcript, counts: dict[str, Any]) -> str:
    usage = counts["usage"]
    cost = counts["cost_usd"]
    lines = [
        f"format      {counts['format']}"
        + (f" ({transcript.cli_version})" if transcript.cli_version else ""),
        f"model       {transcript.model or '-'}",
        f"session     {transcript.session_id or '-'}",
        f"threads     {counts['threads']} ({counts['subagents']} subagents)",
        f"turns       {counts['turns']}",
        f"tool calls  {counts['tool_calls']}",
        f"file edits  {counts['file_changes']}",
        f"tokens      in {usage['input_tokens']:,}  out {usage['output_tokens']:,}  "
        f"cache read {usage['cache_read_tokens']:,}  cache write {usage['cache_write_tokens']:,}",
        "cost        "
        + (
            "-"
            if cost is None
            else f"${cost:.4f}"
            + (" (computed from list prices)" if counts["cost_computed"] else "")
        ),
    ]
    if transcript.duration_s is not None:
        lines.append(f"duration    {transcript.duration_s:.1f} s")
    if transcript.is_error:
        lines.append("outcome     error")
    for bad in transcript.malformed[:20]:
        lines.append(f"malformed   {bad.source}:{bad.line}: {bad.reason}")
    if len(transcript.malformed) > 20:
        lines.append(f"malformed   ... and {len(transcript.malformed) - 20} more")
    lines.extend(f"note        {note}" for note in transcript.notes)
    lines.append(f"kernel      {_kernel_origin(solution_from_transcript(transcript))}")
    return "\n".join(lines)


def _kernel_origin(found: WrittenFile | None) -> str:
    if found is None:
        return "none: the log writes no solution.py and no file that defines ModelNew"
    if found.content is None:
        return f"{found.path}, unknown: {found.reason}"
    by = f" by {found.tool_name}" if found.tool_name else ""
    where = "" if found.thread_kind == "main" else f" of subagent {found.thread_id}"
    return f"{found.path}, written at turn {found.turn}{where}{by}"


def _limits(args: argparse.Namespace) -> ArchiveLimits:
    return ArchiveLimits(
        max_total_bytes=args.max_bytes, max_member_bytes=args.max_bytes, max_ratio=args.max_ratio
    )


def _inspect(args: argparse.Namespace) -> int:
    transcript = parse_path(args.path, limits=_limits(args))
    counts = summary(transcript)
    print(json.dumps(counts, indent=2) if args.json else _readable(transcript, counts))
    return 0


def _render(args: argparse.Namespace) -> int:
    transcript = parse_path(args.path, limits=_limits(args))
    output = Path(args.output)
    # Streamed into a file beside the target and moved into place: memory stays near the
    # parsed transcript's size, and a failed render leaves no half-written page behind.
    partial = output.with_name(f".{output.name}.partial")
    try:
        with partial.open("w", encoding="utf-8") as out:
            export_to(out, transcript, title=args.title)
        partial.replace(output)
    finally:
        partial.unlink(missing_ok=True)
    print(f"wrote {output} ({output.stat().st_size:,} bytes)")
    return 0


def _kernel(args: argparse.Namespace) -> int:
    transcript = parse_path(args.path, limits=_limits(args))
    known = _workspace_files(Path(args.workspace)) if args.workspace else None
    try:
        if args.file:
            found: WrittenFile | None = file_from_transcript(transcript, args.file, known=known)
        else:
            found = solution_from_transcript(transcript, known=known)
    except FileNotWritten as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(_kernel_origin(found), file=sys.stderr)
    if found is None or found.content is None:
        return 1
    if args.output:
        Path(args.output).write_text(found.content, encoding="utf-8")
    else:
        sys.stdout.write(found.content)
    return 0


def _workspace_files(folder: Path) -> dict[str, str]:
    """The agent's folder as it started (a task's folder: its starter), by relative path."""
    files: dict[str, str] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        if path.stat().st_size > WORKSPACE_FILE_MAX_BYTES:
            continue
        try:
            files[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return files


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m transcripts", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    inspect = commands.add_parser("inspect", help="counts of threads, turns, tools and tokens")
    inspect.add_argument("path", help="a log file, or a folder with a session and its subagents")
    inspect.add_argument("--json", action="store_true", help="print the counts as JSON")
    inspect.set_defaults(handler=_inspect)
    render = commands.add_parser("render", help="one self-contained HTML page of the run")
    render.add_argument("path", help="a log file, or a folder with a session and its subagents")
    render.add_argument("-o", "--output", required=True, help="the HTML file to write")
    render.add_argument("--title", default=None, help="the page title")
    render.set_defaults(handler=_render)
    kernel = commands.add_parser(
        "kernel", help="the last content the log's agent wrote to its solution file"
    )
    kernel.add_argument("path", help="a log file, or a folder with a session and its subagents")
    kernel.add_argument("-o", "--output", help="write it here (default: standard output)")
    kernel.add_argument("--file", help="another file the log wrote, by path or name")
    kernel.add_argument(
        "--workspace",
        help="the agent's folder as it started (a task's folder, with its starter/), from "
        "which copies and edits are replayed",
    )
    kernel.set_defaults(handler=_kernel)
    for command in (inspect, render, kernel):
        _add_limits(command)
    return parser


def _add_limits(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_LIMITS.max_total_bytes,
        help="refuse a log, folder or archive holding more than this once expanded "
        "(default %(default)s)",
    )
    command.add_argument(
        "--max-ratio",
        type=int,
        default=DEFAULT_LIMITS.max_ratio,
        help="refuse an archive entry expanding to more than this many times its compressed "
        "size (default %(default)s)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result: int = args.handler(args)
    except TranscriptFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return result
